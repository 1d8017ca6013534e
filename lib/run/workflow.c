/*
 * lib/run/workflow.c - the workflow object's life (workflow.h): loading a
 * workflow.json found by name or path (workflow_find.c) and validated
 * (workflow_sections.c), freeing it, and what commands ask of it: exit
 * codes, the verify pattern, same inputs, a region, training options.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "run/workflow_keys.h"
#include "sys/fsutil.h"
#include "train/train.h"

int hml__workflow_load(hml__workflow **out, const char *name_or_path)
{
	hml__workflow *w = NULL;
	char *file = NULL, *text = NULL, *slash;
	json_error_t jerr;
	size_t size, len;
	int rc;

	*out = NULL;
	if (!name_or_path || !*name_or_path)
		return hml__error_set(HML_EINVALID, "a workflow needs a name or a path");
	len = strlen(name_or_path);
	if (strchr(name_or_path, '/') || (len > 5 && strcmp(name_or_path + len - 5, ".json") == 0))
		rc = hml__wf_locate_path(name_or_path, &file);
	else
		rc = hml__wf_find_bundled(name_or_path, &file);
	if (rc < 0)
		goto done;
	if (!(w = calloc(1, sizeof(*w)))) {
		rc = hml__error_oom();
		goto done;
	}
	if (!(w->path = hml__path_abs(file)) || !(w->dir = hml__strdup(w->path))) {
		rc = hml_error_last()->code ? hml_error_last()->code : HML_ENOMEM;
		goto done;
	}
	if ((slash = strrchr(w->dir, '/')) != NULL)
		slash[slash == w->dir ? 1 : 0] = '\0';
	if ((rc = hml__read_file(w->path, &text, &size)) < 0 ||
	    (rc = hml__sha256_file(w->path, w->sha256)) < 0)
		goto done;
	if (!(w->json = json_loadb(text, size, JSON_REJECT_DUPLICATES, &jerr))) {
		rc = hml__error_set(HML_EINVALID, "workflow '%s': invalid JSON: %s (line %d, column %d)",
		                    w->path, jerr.text, jerr.line, jerr.column);
		goto done;
	}
	if ((rc = hml__wf_validate(w)) < 0)
		goto done;
	*out = w;
	w = NULL;
done:
	hml__workflow_free(w);
	free(file);
	free(text);
	return rc;
}

void hml__workflow_free(hml__workflow *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; w->regions && i < w->nregions; i++) {
		free(w->regions[i].label);
		free(w->regions[i].family);
		free(w->regions[i].arch);
		free(w->regions[i].categorical);
		free(w->regions[i].conserve);
	}
	free(w->regions);
	free(w->name);
	free(w->description);
	free(w->path);
	free(w->dir);
	free(w->program);
	hml__strv_free(w->launcher);
	hml__strv_free(w->env);
	hml__strv_free(w->collect_args);
	hml__strv_free(w->evaluate_args);
	for (i = 0; w->qoi && i < w->nqoi; i++) {
		free(w->qoi[i].dataset);
		free(w->qoi[i].metric);
	}
	free(w->qoi);
	free(w->success_codes);
	free(w->verify_pattern);
	if (w->verify_re)
		regfree(w->verify_re);
	free(w->verify_re);
	hml__search_args_release(&w->search_args);
	json_decref(w->json);
	free(w);
}

int hml__workflow_exit_ok(const hml__workflow *w, int code)
{
	for (size_t i = 0; i < w->nsuccess_codes; i++)
		if (w->success_codes[i] == code)
			return 1;
	return w->nsuccess_codes == 0 && code == 0;
}

int hml__workflow_verify(const hml__workflow *w, const char *log, int *passed)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *f;

	*passed = 1;
	if (!w->verify_re)
		return 0;
	*passed = 0;
	if (!(f = fopen(log, "r")))
		return hml__error_set(errno == ENOENT ? HML_ENOTFOUND : HML_EIO, "cannot read '%s': %s",
		                      log, strerror(errno));
	while (!*passed && (len = getline(&line, &cap, f)) >= 0) {
		if (len > 0 && line[len - 1] == '\n')
			line[len - 1] = '\0';
		*passed = regexec(w->verify_re, line, 0, NULL, 0) == 0;
	}
	free(line);
	fclose(f);
	return 0;
}

static int has_seed(char *const *args)
{
	for (; *args; args++)
		if (strstr(*args, "{seed}"))
			return 1;
	return 0;
}

int hml__workflow_same_inputs(const hml__workflow *w, char *const *collect_args,
                              char *const *evaluate_args)
{
	char *const *c = collect_args ? collect_args : w->collect_args;
	char *const *e = evaluate_args ? evaluate_args : w->evaluate_args;

	if (!c || !e || has_seed(c))
		return 0;
	for (; *c && *e; c++, e++)
		if (strcmp(*c, *e) != 0)
			return 0;
	return !*c && !*e;
}

const hml__workflow_region *hml__workflow_region_find(const hml__workflow *w,
                                                      const char *label)
{
	size_t i;

	if (!w || w->nregions == 0)
		return NULL;
	if (!label)
		return &w->regions[0];
	for (i = 0; i < w->nregions; i++)
		if (strcmp(w->regions[i].label, label) == 0)
			return &w->regions[i];
	return NULL;
}

void hml__workflow_train_options(const hml__workflow_region *r, hml__train_options *o,
                                 const char **nonfinite)
{
	const json_t *t = r ? r->train : NULL, *v;

	if (r) {
		o->loss = r->loss;
		o->metric = r->metric;
		o->mape_floor = r->mape_floor;
		o->categorical = r->categorical;
	}

#define INT_KEY(key, field) \
	if (json_is_integer(v = json_object_get(t, key))) \
		o->field = (__typeof__(o->field))json_integer_value(v)
#define NUM_KEY(key, field) \
	if (json_is_number(v = json_object_get(t, key))) \
		o->field = json_number_value(v)
#define STR_KEY(key, field) \
	if (json_is_string(v = json_object_get(t, key))) \
		o->field = json_string_value(v)
	INT_KEY("epochs", epochs);
	INT_KEY("batch", batch);
	INT_KEY("patience", patience);
	/* clamped, not wrapped: 2^32 + 2 is refused, not read as 2 */
	if (json_is_integer(v = json_object_get(t, "rollout"))) {
		json_int_t n = json_integer_value(v);

		o->rollout = n > INT_MAX ? INT_MAX : n < INT_MIN ? INT_MIN : (int)n;
	}
	INT_KEY("seed", seed);
	INT_KEY("threads", threads);
	NUM_KEY("lr", lr);
	NUM_KEY("weight_decay", weight_decay);
	NUM_KEY("clip", clip);
	NUM_KEY("val_fraction", val_fraction);
	NUM_KEY("test_fraction", test_fraction);
	NUM_KEY("max_seconds", max_seconds);
	STR_KEY("optimizer", optimizer);
	STR_KEY("schedule", schedule);
#undef INT_KEY
#undef NUM_KEY
#undef STR_KEY
	if (nonfinite && json_is_string(v = json_object_get(t, "nonfinite")))
		*nonfinite = json_string_value(v);
}
