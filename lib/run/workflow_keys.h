/*
 * lib/run/workflow_keys.h - reading workflow.json's keys with messages
 * that name each key by its path ("regions[0].model.arch"), shared by the
 * files that parse its sections (private to lib/run/workflow*.c; the
 * public interface is workflow.h):
 *
 *   workflow_keys.c      these typed readers and the name grammar
 *   workflow_sections.c  the document's sections, and its validation as a whole
 *   workflow_regions.c   the "regions" section: labels, models, training defaults
 *   workflow_find.c      where a workflow named on the command line is found
 *   workflow.c           the workflow object's life: load, free, queries
 *
 * Every reader returns 0 or a negative HML_E* with the error set
 * (HML_EINVALID "workflow 'PATH': key 'KEY' ..."); a key that is absent
 * and not required leaves *out NULL (strings, objects) or unchanged
 * (integers). Strings and lists through **out are the caller's (free,
 * hml__strv_free).
 */
#ifndef HML_LIB_RUN_WORKFLOW_KEYS_H
#define HML_LIB_RUN_WORKFLOW_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/error.h"
#include "run/workflow.h"

/* Labels of regions and names of workflows: at most this many characters
 * of HML__WF_NAME_CHARS, not "." or "..". */
#define HML__WF_LABEL_MAX 64
#define HML__WF_NAME_CHARS "letters, digits, '_', '-' and '.'"

/* What is being validated, for messages. */
typedef struct hml__wf_ctx {
	const char *path;
} hml__wf_ctx;

/** Set HML_EINVALID "workflow '<path>': key '<key>' <fmt...>" and return it. */
int hml__wf_bad_key(const hml__wf_ctx *v, const char *key, const char *fmt, ...)
	HML__PRINTF(3, 4);

/** "regions[0]" + "label" -> "regions[0].label" (parent NULL or "": key). */
void hml__wf_key_join(char *buf, size_t size, const char *parent, const char *key);

/** Every key of `obj` must be one of `allowed` (NULL-terminated). */
int hml__wf_check_keys(const hml__wf_ctx *v, const json_t *obj, const char *parent,
                       const char *const *allowed);

/** 1 when `s` is a valid workflow name or region label, else 0. */
int hml__wf_name_ok(const char *s);

/** `key` of `obj` (borrowed) in *out; missing is an error only when `required`. */
int hml__wf_get(const hml__wf_ctx *v, const json_t *obj, const char *parent, const char *key,
                int required, json_t **out);

/** A non-empty string without NUL (copied). */
int hml__wf_get_string(const hml__wf_ctx *v, const json_t *obj, const char *parent,
                       const char *key, int required, char **out);

/** An integer from min to max. */
int hml__wf_get_int(const hml__wf_ctx *v, const json_t *obj, const char *parent,
                    const char *key, int required, int64_t min, int64_t max,
                    int64_t *out);

/** An object (borrowed). */
int hml__wf_get_object(const hml__wf_ctx *v, const json_t *obj, const char *parent,
                       const char *key, int required, json_t **out);

/** A required array of strings, as a NULL-terminated list. */
int hml__wf_get_strv(const hml__wf_ctx *v, const json_t *obj, const char *parent,
                     const char *key, char ***out);

/* workflow_regions.c */

/** The "regions" array into w->regions / w->nregions. */
int hml__wf_parse_regions(const hml__wf_ctx *v, hml__workflow *w);

/* workflow_sections.c */

/** Check and read w->json (loaded from w->path, w->dir set) into `w`. */
int hml__wf_validate(hml__workflow *w);

/* workflow_find.c */

/** The workflow.json a path names: `given` itself, or given/workflow.json
 * for a directory (*out malloc'ed). Errors: HML_ENOTFOUND. */
int hml__wf_locate_path(const char *given, char **out);

/** NAME/workflow.json along hml__workflow_search_path() (*out malloc'ed).
 * Errors: HML_EINVALID (a bad name), HML_ENOTFOUND. */
int hml__wf_find_bundled(const char *name, char **out);

#endif
