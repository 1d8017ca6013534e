/*
 * hml deploy --guard (cmd/deploy_guard.c): the guard file a deployment
 * names in HML_GUARD_<LABEL>, made from the model card's input statistics
 * (lib/core/guard.h) and the spec asked for.
 *
 * The file is models/<model>.guard-<kind>-<parameter>.json: one per model
 * and spec, written atomically beneath the experiment (core/beneath.h),
 * so deploying the same model with the same guard again rewrites the same
 * bytes and a running application never reads a torn file.
 *
 * An ensemble guard's file also lists its members' files, in the form
 * deployed: member 0 is the deployed model itself (TorchScript, or its
 * compiled .so), members k > 0 the model's files "member<k>" (checked
 * against their SHA-256), each compiled to C as well under --target c
 * (its own "compiled" record). Its name then carries the compiled id
 * (models/m3.guard-ensemble-fa-0.01-c4.json), as its members differ.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "core/beneath.h"
#include "core/guard.h"
#include "core/json.h"
#include "store/checked.h"
#include "store/records.h"
#include "store/store.h"
#include "sys/fsutil.h"

/* The ensemble's member files in the form deployed (see above) into m[]. */
static int members_of(hml__store *s, const json_t *model, const cmd_deploy_form *form,
                      int64_t n, char **m)
{
	const char *id = hml__json_string(model, "id");
	char role[32], cid[32];
	char *pt = NULL;
	int rc = 0;

	if (!(m[0] = strdup(form->path)))
		return hml__error_oom();
	for (int64_t k = 1; k < n && rc == 0; k++) {
		snprintf(role, sizeof(role), "member%lld", (long long)k);
		if ((rc = hml__checked_file(s, model, "model", role, "registered", &pt)) < 0) {
			hml__error_set(rc, "ensemble member %lld of model '%s': %s", (long long)k, id,
			               hml_error_last()->message);
			break;
		}
		if (!form->cid || !*form->cid) {
			m[k] = pt;
			pt = NULL;
			continue;
		}
		if ((rc = cmd_deploy_compile(s, model, pt, form->march, cid, sizeof(cid))) == 0)
			rc = hml__checked_file(s, hml__store_find(s, "compiled", cid), "compiled model",
			                       "library", "compiled", &m[k]);
		free(pt);
		pt = NULL;
	}
	return rc;
}

/* The guard's file name beneath the experiment, from its spec (and, for
 * an ensemble compiled to C, the compiled id). */
static void file_name(char *name, size_t size, const char *id, const char *text,
                      const cmd_deploy_form *form, const hml__guard_spec *spec)
{
	int ens_c = spec->kind == HML__GUARD_ENSEMBLE && form->cid && *form->cid;

	snprintf(name, size, "models/%s.guard-%s%s%s.json", id, text, ens_c ? "-" : "",
	         ens_c ? form->cid : "");
	for (char *c = name; *c; c++)   /* "bounds:margin=0.1" -> "bounds-margin-0.1" */
		if (*c == ':' || *c == '=')
			*c = '-';
}

int cmd_deploy_guard(hml__store *s, const json_t *model, const hml__guard_spec *spec,
                     const cmd_deploy_form *form, char **path_out, json_t **rec_out)
{
	char *member[HML__GUARD_ENSEMBLE_MAX] = { NULL };
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
	if (spec->kind == HML__GUARD_ENSEMBLE &&
	    ((rc = members_of(s, model, form, g.stats.ens.members, member)) < 0 ||
	     (rc = hml__guard_set_members(&g, (const char *const *)member,
	                                  g.stats.ens.members)) < 0))
		goto done;
	file_name(name, sizeof(name), id, text, form, spec);
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
	for (int k = 0; k < HML__GUARD_ENSEMBLE_MAX; k++)
		free(member[k]);
	free(path);
	free(bytes);
	json_decref(doc);
	hml__guard_release(&g);
	return rc;
}
