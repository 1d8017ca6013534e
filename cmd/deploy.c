/*
 * hml deploy - choose a model for a region and record the deployment.
 *
 * By id, as the most accurate model (--best: lowest validation RMSE), or as
 * the fastest model within an error bound (--max-error E: lowest inference
 * latency per sample among models whose validation RMSE <= E). Prints the
 * environment that makes the application run the region as inference, in
 * a form `eval "$(hml deploy --best)"` accepts.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "records.h"
#include "store.h"
#include "util.h"
#include "workflow.h"

static int best;
static double max_error = NAN;
static const char *region;
static const char *target;
static const char *march;

static const cmd_option options[] = {
	{ "best", 0, CMD_OPT_FLAG, &best, NULL, "the model with the lowest validation RMSE" },
	{ "max-error", 0, CMD_OPT_DOUBLE, &max_error, "E",
	  "the fastest model whose validation RMSE is at most E" },
	{ "region", 'r', CMD_OPT_STRING, &region, "R", "consider only models of region R" },
	{ "target", 't', CMD_OPT_STRING, &target, "T",
	  "torchscript (default: the trained model) or c (compiled to a shared object)" },
	{ "march", 0, CMD_OPT_STRING, &march, "ARCH",
	  "with --target c: compile for this CPU (-march=ARCH, e.g. native; default portable)" },
	{ NULL, 0, 0, NULL, NULL, NULL }
};

static const cmd_spec spec = {
	"deploy", "[options] (MODEL | --best | --max-error E)",
	"choose a model and print the environment that runs it",
	"Records a deployment of MODEL (an id such as m3), of the most accurate model\n"
	"(--best), or of the fastest model whose validation RMSE is within E\n"
	"(--max-error E), and prints the variables an application needs to run the\n"
	"model's region as inference: eval \"$(hml deploy --best)\".\n"
	"--target c compiles the model to C with its weights as constants and\n"
	"registers models/<c-id>.{c,h,so}; the environment then names the .so.",
	options, 0, 1
};

/* Shell-quote for the printed export lines. */
static void print_quoted(const char *s)
{
	putchar('\'');
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*s);
	}
	putchar('\'');
}

/* The model chosen by --best or --max-error, or NULL with an error set. */
static const char *choose(const hml__store *s)
{
	hml__model_view m, pick = { 0 }, most_accurate = { 0 };
	double pick_key = INFINITY, best_err = INFINITY;
	size_t i, n = 0;

	for (i = 0; hml__records_model_at(&m, s, i); i++) {
		if (region && (!m.region || strcmp(m.region, region) != 0))
			continue;
		n++;
		if (!isfinite(m.val_rmse))
			continue;
		if (m.val_rmse < best_err) {
			best_err = m.val_rmse;
			most_accurate = m;
		}
		if (best) {
			if (m.val_rmse < pick_key) {
				pick_key = m.val_rmse;
				pick = m;
			}
		} else if (m.val_rmse <= max_error) {
			double key = isfinite(m.latency_s) ? m.latency_s : INFINITY;

			if (!pick.json || key < pick_key) {
				pick_key = key;
				pick = m;
			}
		}
	}
	if (pick.json)
		return pick.id;
	if (n == 0 && region)
		hml__error_set(HML_ENOTFOUND, "no model of region '%s' in experiment '%s'",
		               region, hml__store_dir(s));
	else if (n == 0)
		hml__error_set(HML_ENOTFOUND, "no model in experiment '%s' (run 'hml train' first)",
		               hml__store_dir(s));
	else if (!most_accurate.json)
		hml__error_set(HML_EINVALID, "no model has a validation RMSE in its record");
	else
		hml__error_set(HML_ENOTFOUND,
			"no model has a validation RMSE within %g (the lowest is %g, model '%s')",
			max_error, best_err, most_accurate.id);
	return NULL;
}

int cmd_deploy(int argc, char **argv)
{
	hml__store *s = NULL;
	hml__workflow *w = NULL;
	hml__model_view model;
	json_t *rec = NULL, *env;
	const char *selection, *id, *label, *key;
	char *path = NULL, *so_path = NULL, pid[32], cid[32] = "";
	int first, rc, code = HML_EXIT_OK, nsel;

	if ((rc = cmd_parse(&spec, argc, argv, &first)) != 0)
		return rc > 0 ? cmd_finish(HML_EXIT_OK) : HML_EXIT_USAGE;
	nsel = (first < argc) + best + !isnan(max_error);
	if (nsel != 1) {
		cmd_error("deploy: give exactly one of MODEL, --best and --max-error E");
		return HML_EXIT_USAGE;
	}
	if (target && strcmp(target, "c") != 0 && strcmp(target, "torchscript") != 0) {
		cmd_error("deploy: unknown --target '%s' (torchscript or c)", target);
		return HML_EXIT_USAGE;
	}
	if (march && (!target || strcmp(target, "c") != 0)) {
		cmd_error("deploy: --march needs --target c");
		return HML_EXIT_USAGE;
	}
	if (!isnan(max_error) && max_error < 0) {
		cmd_error("deploy: --max-error must be >= 0, not %g", max_error);
		return HML_EXIT_USAGE;
	}
	if ((rc = hml__store_open(&s, g_cmd.dir, 0)) < 0)
		goto fail;
	if (first < argc) {
		selection = "id";
		id = argv[first];
	} else {
		if (!(id = choose(s))) {
			rc = hml_error_last()->code;
			goto fail;
		}
		selection = best ? "best" : "max-error";
	}
	if ((rc = cmd_model_get(s, id, &model, &path)) < 0 ||
	    (rc = cmd_model_workflow(s, &model, &w)) < 0)
		goto fail;
	label = model.region;
	if (target && strcmp(target, "c") == 0) {
		if ((rc = cmd_deploy_compile(s, model.json, path, march, cid, sizeof(cid))) < 0 ||
		    (rc = cmd_record_file(s, hml__store_find(s, "compiled", cid), "compiled model",
		                          "library", "compiled", &so_path)) < 0)
			goto fail;
	}
	if (!(env = cmd_deploy_env(label, so_path ? so_path : path))) {
		rc = hml_error_last()->code;
		goto fail;
	}
	rec = json_pack("{s:s, s:s, s:s, s:s, s:s}", "model", id, "region", label,
	                "workflow", w->name, "selection", selection,
	                "target", cid[0] ? "c" : "torchscript");
	if (cid[0])
		json_object_set_new(rec, "compiled", json_string(cid));
	if (!isnan(max_error))
		json_object_set_new(rec, "max_error", json_real(max_error));
	json_object_set_new(rec, "env", env);
	json_incref(env);
	if ((rc = hml__store_add(s, "deployments", rec, NULL, 0, 0, pid, sizeof(pid))) < 0) {
		rec = NULL;
		json_decref(env);
		goto fail;
	}
	rec = NULL;
	cmd_info("%s: deployed model '%s' for region '%s' of workflow '%s' "
	         "(validation RMSE %.4g, %.3g us per sample)", pid, id, label, w->name,
	         model.val_rmse, model.latency_s * 1e6);
	if (g_cmd.json) {
		const json_t *d = hml__store_find(s, "deployments", pid);
		json_t *doc = json_pack("{s:O}", "deployment", d);

		if (cid[0])
			json_object_set(doc, "compiled", (json_t *)hml__store_find(s, "compiled", cid));
		cmd_json_print(doc);
	} else {
		json_t *v;

		json_object_foreach(env, key, v) {
			printf("export %s=", key);
			print_quoted(json_string_value(v));
			putchar('\n');
		}
	}
	json_decref(env);
	goto done;
fail:
	code = cmd_fail(rc);
done:
	json_decref(rec);
	free(path);
	free(so_path);
	hml__workflow_free(w);
	hml__store_free(s);
	return cmd_finish(code);
}
