/*
 * cmd/app_run.c - one run of a workflow's application in a configuration
 * (lib/run/childenv.h): the environment built from scratch, the process run
 * with its output to a log, and a failure reported with the log's last
 * lines. hml evaluate's measured runs and hml deploy --max-qoi-error's
 * check runs are both made here, and what is said of such runs: the
 * program's own verification, and runs on the collected inputs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "core/envname.h"
#include "core/util.h"
#include "run/argv.h"
#include "run/childenv.h"
#include "run/limit.h"
#include "run/workflow.h"
#include "store/records.h"
#include "sys/fsutil.h"
#include "sys/proc.h"

extern char **environ;

void cmd_log_tail(const char *path, const char *title)
{
	char *text = NULL, *start;
	size_t size = 0;
	int lines = 0;

	if (g_cmd.quiet || hml__read_file(path, &text, &size) < 0 || size == 0) {
		free(text);
		return;
	}
	while (size > 0 && text[size - 1] == '\n')
		text[--size] = '\0';
	for (start = text + size; start > text; start--)
		if (start[-1] == '\n' && ++lines == 10)
			break;
	fprintf(stderr, "hml: %s (last lines):\n", title);
	for (char *line = start, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		fprintf(stderr, "  %.*s\n", nl ? (int)(nl - line) : (int)strlen(line), line);
	}
	free(text);
}

static const char *kind_name(hml__run_kind k)
{
	return k == HML__RUN_SURROGATE ? "surrogate" : k == HML__RUN_ACCURATE ? "accurate"
	                                                                      : "collect";
}

double cmd_run_timeout = NAN;

const char *cmd_run_status(char *buf, size_t size, const hml__proc_result *res, double limit)
{
	if (!res->timed_out)
		return hml__proc_describe(res);
	snprintf(buf, size, "timed out after its limit of %.3g s (--run-timeout, %s)", limit,
	         HML__ENV_RUN_TIMEOUT);
	return buf;
}

int cmd_app_run(const struct hml__workflow *w, char *const *argv,
                const struct hml__run_config *config, const char *log, double accurate_s,
                double *wall_s, cmd_progress **bar)
{
	char **envp = NULL, why[128];
	hml__proc_result pr;
	double limit;
	int rc;

	if ((rc = hml__run_limit(&limit, cmd_run_timeout, accurate_s)) < 0 ||
	    (rc = hml__childenv_build(&envp, config, (const char *const *)environ,
	                              (const char *const *)w->env)) < 0)
		return rc;
	rc = hml__proc_run_env((const char *const *)argv, (const char *const *)envp, log, log,
	                       limit, &pr);
	hml__strv_free(envp);
	if (rc < 0)
		return rc;
	if (pr.interrupted || cmd_interrupted)
		return hml__error_set(HML_ERROR, "interrupted");
	if (!pr.exited || !hml__workflow_exit_ok(w, pr.exit_code)) {
		char title[4200];

		if (bar) {
			cmd_progress_end(*bar);
			*bar = NULL;
		}
		snprintf(title, sizeof(title), "the application's output in '%s'", log);
		cmd_log_tail(log, title);
		return hml__error_set(HML_ERROR, "%s run of '%s' failed: %s",
		                      kind_name(config->kind), w->program,
		                      cmd_run_status(why, sizeof(why), &pr, limit));
	}
	if (wall_s)
		*wall_s = pr.wall_s;
	return 0;
}

json_t *cmd_app_verification(const struct hml__workflow *w, int runs, int acc_failed,
                             int sur_failed)
{
	json_t *v = json_pack("{s:s}", "pattern", w->verify_pattern);
	const int failed[2] = { acc_failed, sur_failed };

	for (int i = 0; i < 2; i++)
		json_object_set_new(v, i ? "surrogate" : "accurate", json_pack("{s:b, s:i, s:i}",
			"passed", failed[i] == 0, "runs", runs, "failed_runs", failed[i]));
	if (acc_failed || sur_failed)
		cmd_warn("the %s runs failed the program's own verification ('%s')",
		         !sur_failed ? "accurate" : acc_failed ? "accurate and surrogate" : "surrogate",
		         w->verify_pattern);
	return v;
}

static void verdict(char *buf, size_t size, const json_t *v)
{
	json_int_t failed = json_integer_value(json_object_get(v, "failed_runs"));

	if (json_is_true(json_object_get(v, "passed")))
		snprintf(buf, size, "passed");
	else
		snprintf(buf, size, "FAILED (%lld of %lld runs)", (long long)failed,
		         (long long)json_integer_value(json_object_get(v, "runs")));
}

void cmd_app_verification_print(const json_t *evaluation)
{
	const json_t *v = json_object_get(evaluation, "verification");
	char acc[64], sur[64];

	if (!v)
		return;
	verdict(acc, sizeof(acc), json_object_get(v, "accurate"));
	verdict(sur, sizeof(sur), json_object_get(v, "surrogate"));
	printf("verification:    accurate %s, surrogate %s  [pattern: %s]\n", acc, sur,
	       json_string_value(json_object_get(v, "pattern")));
}

void cmd_app_same_inputs_warn(const struct hml__workflow *w, char *const *collect_args,
                              char *const *evaluate_args, const struct hml__store *s,
                              char *const *argv)
{
	char **own = NULL;
	const char *id;

	/* No command line given: the one hml evaluate runs by default. */
	if (s && !argv && hml__argv_build(&own, w->program, (const char *const *)w->evaluate_args,
	                                  NULL) == 0)
		argv = own;
	id = s && argv ? hml__records_dataset_with_argv(s, argv) : NULL;
	hml__strv_free(own);
	if (hml__workflow_same_inputs(w, collect_args, evaluate_args))
		cmd_warn("evaluate runs the inputs the data was collected on (the collect arguments "
		         "have no {seed} and are evaluate's): the QoI error measures memorisation");
	else if (id)
		cmd_warn("evaluate runs the inputs the data was collected on (data set %s ran the "
		         "same command line): the QoI error measures memorisation", id);
}
