/*
 * hml deploy --guard (cmd/deploy_guard.c): the guard file a deployment
 * names in HML_GUARD_<LABEL>, made from the model card's input statistics
 * (lib/core/guard.h) and the spec asked for.
 *
 * The file is models/<model>.guard-<kind>-<parameter>.json: one per model
 * and spec, written atomically beneath the experiment (core/beneath.h),
 * so deploying the same model with the same guard again rewrites the same
 * bytes and a running application never reads a torn file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "core/beneath.h"
#include "core/guard.h"
#include "core/json.h"
#include "store/records.h"
#include "store/store.h"
#include "sys/fsutil.h"

int cmd_deploy_guard(const hml__store *s, const json_t *model, const hml__guard_spec *spec,
                     char **path_out, json_t **rec_out)
{
	const char *id = hml__json_string(model, "id");
	const json_t *stats_json = json_object_get(model, "guard");
	hml__guard_stats st;
	hml__guard g;
	json_t *doc = NULL;
	char name[160], text[64], *bytes = NULL, *path = NULL;
	int rc;

	*path_out = NULL;
	*rec_out = NULL;
	memset(&g, 0, sizeof(g));
	hml__guard_spec_format(text, sizeof(text), spec);
	if (!stats_json || json_is_null(stats_json))
		return hml__error_set(HML_ENOTSUPPORTED, "model '%s' has no input statistics for a "
		                      "guard (imported, or trained by an older hml): "
		                      "deploy it with --guard none, or train it with hml train", id);
	if ((rc = hml__guard_stats_from_json(&st, stats_json, id)) < 0)
		return rc;
	rc = hml__guard_make(&g, spec, &st);
	hml__guard_stats_release(&st);
	if (rc < 0) {
		hml__error_set(rc, "model '%s': %s", id, hml_error_last()->message);
		goto done;
	}
	snprintf(name, sizeof(name), "models/%s.guard-%s.json", id, text);
	for (char *c = name; *c; c++)   /* "bounds:margin=0.1" -> "bounds-margin-0.1" */
		if (*c == ':' || *c == '=')
			*c = '-';
	if (!(doc = hml__guard_file_json(&g)) || !(bytes = json_dumps(doc, JSON_INDENT(2))) ||
	    !(path = malloc(strlen(hml__store_dir(s)) + strlen(name) + 2))) {
		rc = hml__error_oom();
		goto done;
	}
	sprintf(path, "%s/%s", hml__store_dir(s), name);
	if ((rc = hml__beneath_write_atomic(hml__store_dir(s), path, bytes, strlen(bytes))) < 0)
		goto done;
	if (!(*rec_out = json_pack("{s:s, s:s, s:o, s:O}", "spec", text, "file", name,
	                           "threshold", hml__json_real(g.threshold),
	                           "component_thresholds",
	                           json_object_get(doc, "component_thresholds")))) {
		rc = hml__error_oom();
		goto done;
	}
	/* The application runs anywhere: the variable names it absolutely. */
	if (!(*path_out = hml__path_abs(path))) {
		rc = hml_error_last()->code;
		json_decref(*rec_out);
		*rec_out = NULL;
	}
done:
	free(path);
	free(bytes);
	json_decref(doc);
	hml__guard_release(&g);
	return rc;
}
