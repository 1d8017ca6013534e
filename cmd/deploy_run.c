/*
 * hml deploy: how the deployed model runs (lib/store/model_run.h): at the
 * k and interleave hml evaluate runs it with and --max-qoi-error checked it
 * at; what the environment cannot carry, said to the user; the deployment
 * file a running application swaps models by, with the run's k and the
 * runtime's interleave; and what such a swap does when they change.
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "core/deployfile.h"
#include "core/error.h"
#include "core/json.h"
#include "core/util.h"
#include "run/argv.h"
#include "run/childenv.h"
#include "run/workflow.h"
#include "store/model_run.h"
#include "store/records.h"
#include "store/store.h"

/* How the deployed model runs (lib/store/model_run.h): as hml evaluate
 * runs it and as --max-qoi-error checked it, at its card's k and
 * interleave; *interleave the runtime's ratio its environment sets (0:
 * infer, or the application's own interleave argument). */
int cmd_deploy_model_run(hml__model_run *run, int *interleave, const hml__workflow *w,
                         const hml__model_view *m)
{
	hml__run_config c;
	char **argv = NULL;
	int rc;

	memset(&c, 0, sizeof(c));
	hml__model_run_resolve(run, m, NULL, NULL);
	if ((rc = hml__argv_build(&argv, w->program, (const char *const *)w->evaluate_args,
	                          NULL)) == 0)
		rc = hml__model_run_apply(&argv, &c, w, run);
	hml__strv_free(argv);
	*interleave = c.interleave;
	return rc;
}

/* What the environment cannot carry: the application's own arguments
 * the model must run with. */
void cmd_deploy_print_run(const char *pid, const char *id, const hml__workflow *w,
                          const hml__model_run *run)
{
	const hml__search_args *a = &w->search_args;

	if (run->k >= 1)
		cmd_info("%s: model '%s' predicts %lld steps per call: run the application with "
		         "'%s %lld'", pid, id, run->k, a->k.arg, run->k);
	if (run->interleave >= 0 && a->interleave.arg)
		cmd_info("%s: model '%s' was judged at interleave %lld: run the application with "
		         "'%s %lld'", pid, id, run->interleave, a->interleave.arg, run->interleave);
	else if (run->interleave > 0)
		cmd_info("%s: model '%s' runs in interleave mode, %lld model calls, then the "
		         "original code for one (HML_INTERLEAVE_<LABEL> in the environment)", pid, id,
		         run->interleave);
}

/* "k 8, interleave 2"; "the command line's k, interleave 0". */
static void run_text(char *buf, size_t size, const hml__model_run *r)
{
	if (r->k >= 1)
		snprintf(buf, size, "k %lld, interleave %lld", r->k,
		         r->interleave > 0 ? r->interleave : 0);
	else
		snprintf(buf, size, "the command line's k, interleave %lld",
		         r->interleave > 0 ? r->interleave : 0);
}

/* What a running application does when it swaps to this deployment
 * through the region's deployment file (hml-runtime(3) "Hot swap"): k is
 * its argument, so a model of another k is refused (both known); the
 * runtime's interleave is adopted; an interleave that is its argument is
 * kept. Said when the region's previous deployment runs otherwise. Before
 * the new record. */
void cmd_deploy_warn_swap(const hml__store *s, const char *label, const char *id,
                          const hml__model_run *run, const hml__workflow *w)
{
	const json_t *deps = json_object_get(hml__store_manifest(s), "deployments"), *d;
	hml__model_run was;
	char now[64], before[64];
	const char *pid;
	long long n0, n1;

	for (size_t i = json_array_size(deps); i-- > 0;) {
		d = json_array_get(deps, i);
		if (!json_is_string(json_object_get(d, "region")) ||
		    strcmp(json_string_value(json_object_get(d, "region")), label) != 0)
			continue;
		hml__model_run_read(&was, json_object_get(d, "run"));
		pid = hml__json_string(d, "id") ? hml__json_string(d, "id") : "?";
		run_text(now, sizeof(now), run);
		run_text(before, sizeof(before), &was);
		n0 = was.interleave > 0 ? was.interleave : 0;
		n1 = run->interleave > 0 ? run->interleave : 0;
		if (was.k >= 1 && run->k >= 1 && was.k != run->k)
			cmd_warn("model '%s' runs at %s, the region's previous deployment '%s' at %s: "
			         "an application running at that one's k refuses to swap to this model "
			         "(k is its argument) and keeps its own; start it again with '%s %lld' "
			         "and the environment printed", id, now, pid, before,
			         w->search_args.k.arg, run->k);
		else if (n0 != n1 && w->search_args.interleave.arg)
			cmd_warn("model '%s' runs at %s, the region's previous deployment '%s' at %s: "
			         "an application running with that one's arguments keeps its interleave "
			         "(its argument '%s') when it swaps to this model; start it again with "
			         "'%s %lld'", id, now, pid, before, w->search_args.interleave.arg,
			         w->search_args.interleave.arg, n1);
		else if (n0 != n1)
			cmd_info("model '%s' runs at interleave %lld, the region's previous deployment "
			         "'%s' at %lld: an application running with that one swaps to this "
			         "model at interleave %lld", id, n1, pid, n0, n1);
		return;
	}
}

int cmd_deploy_write_file(const hml__store *s, const char *pid, const char *label,
                          const char *model, const char *path, const char *gpath,
                          const hml__model_run *run, const hml__workflow *w)
{
	hml__deployfile d;

	memset(&d, 0, sizeof(d));
	if ((size_t)snprintf(d.region, sizeof(d.region), "%s", label) >= sizeof(d.region) ||
	    (size_t)snprintf(d.deployment, sizeof(d.deployment), "%s", pid) >= sizeof(d.deployment) ||
	    (size_t)snprintf(d.model, sizeof(d.model), "%s", model) >= sizeof(d.model) ||
	    (size_t)snprintf(d.path, sizeof(d.path), "%s", path) >= sizeof(d.path) ||
	    (size_t)snprintf(d.guard, sizeof(d.guard), "%s", gpath ? gpath : "") >= sizeof(d.guard))
		return hml__error_set(HML_EINVALID, "deployment %s: model path '%s' is too long",
		                      pid, path);
	d.k = run->k >= 1 ? run->k : 0;
	/* the runtime's interleave (0: infer) as the environment sets it; an
	 * interleave that is the application's argument is not the runtime's */
	d.interleave = w->search_args.interleave.arg ? -1 :
	               run->interleave > 0 ? run->interleave : 0;
	return hml__deployfile_write(hml__store_dir(s), &d);
}
