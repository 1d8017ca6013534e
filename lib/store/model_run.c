/*
 * lib/store/model_run.c - the command line and environment of a run of a
 * model (model_run.h).
 */
#include <stdint.h>

#include "core/error.h"
#include "core/util.h"
#include "run/argv.h"
#include "run/search_args.h"
#include "store/model_run.h"

void hml__model_run_resolve(hml__model_run *out, const hml__model_view *m,
                            const hml__model_run *deployed, const hml__model_run *choice)
{
	out->k = m && m->k >= 1 ? m->k : -1;
	out->interleave = m && m->interleave >= 0 ? m->interleave : -1;
	if (deployed && deployed->k >= 1)
		out->k = deployed->k;
	if (deployed && deployed->interleave >= 0)
		out->interleave = deployed->interleave;
	if (choice && choice->k >= 1)
		out->k = choice->k;
	if (choice && choice->interleave >= 0)
		out->interleave = choice->interleave;
}

/* *argv with argument `arg` set to v. */
static int set_arg(char ***argv, const char *arg, long long v)
{
	char **out = NULL;
	int rc = hml__search_args_set(&out, *argv, arg, (int64_t)v);

	if (rc == 0) {
		hml__strv_free(*argv);
		*argv = out;
	}
	return rc;
}

/* The workflow's "conserve" of the region the model replaces, or NULL. */
static const char *conserve_of(const hml__workflow *w, const char *region)
{
	const hml__workflow_region *r = region ? hml__workflow_region_find(w, region) : NULL;

	return r ? r->conserve : NULL;
}

int hml__model_run_apply(char ***argv, hml__run_config *c, const hml__workflow *w,
                         const hml__model_run *r)
{
	const hml__search_args *a = &w->search_args;
	char **v = NULL;
	int rc;

	if (r->k >= 1 && !a->k.arg)
		return hml__error_set(HML_EINVALID, "k %lld: workflow '%s' declares no steps per "
		                      "model call (search_args.k in hml-workflow(5))", r->k, w->name);
	if ((rc = hml__argv_copy(&v, (const char *const *)*argv, -1)) < 0)
		return rc;
	if (r->k >= 1 && (rc = set_arg(&v, a->k.arg, r->k)) < 0)
		goto fail;
	c->interleave = r->interleave > 0 && r->interleave <= INT32_MAX ? (int)r->interleave : 0;
	c->conserve = conserve_of(w, c->region);
	if (r->interleave >= 0 && a->interleave.arg) {
		c->interleave = 0;
		if ((rc = set_arg(&v, a->interleave.arg, r->interleave)) < 0)
			goto fail;
	}
	hml__strv_free(*argv);
	*argv = v;
	return 0;
fail:
	hml__strv_free(v);
	return rc;
}

json_t *hml__model_run_json(const hml__model_run *r)
{
	json_t *o = json_pack("{s:o, s:o}", "k", r->k >= 1 ? json_integer(r->k) : json_null(),
	                      "interleave", r->interleave >= 0 ? json_integer(r->interleave) :
	                      json_null());

	if (!o)
		hml__error_oom();
	return o;
}

void hml__model_run_read(hml__model_run *out, const json_t *o)
{
	const json_t *k = json_object_get(o, "k"), *il = json_object_get(o, "interleave");

	out->k = json_is_integer(k) && json_integer_value(k) >= 1 &&
	         json_integer_value(k) <= INT32_MAX ? json_integer_value(k) : -1;
	out->interleave = json_is_integer(il) && json_integer_value(il) >= 0 &&
	                  json_integer_value(il) <= INT32_MAX ? json_integer_value(il) : -1;
}
