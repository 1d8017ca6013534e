/*
 * cmd/app_run.c - one run of a workflow's application in a configuration
 * (lib/run/childenv.h): the environment built from scratch, the process run
 * with its output to a log, and a failure reported with the log's last
 * lines. hml evaluate's measured runs and hml deploy --max-qoi-error's
 * check runs are both made here.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "core/util.h"
#include "run/childenv.h"
#include "run/workflow.h"
#include "sys/fsutil.h"
#include "sys/proc.h"

extern char **environ;

/* Print the last lines of an application's log on stderr. */
static void log_tail(const char *path)
{
	char *text = NULL, *start;
	size_t size = 0;
	int lines = 0;

	if (g_cmd.quiet || hml__read_file(path, &text, &size) < 0)
		return;
	start = text + size;
	while (start > text && lines <= 10)
		if (*--start == '\n' && start + 1 < text + size)
			lines++;
	if (*start == '\n')
		start++;
	if (*start)
		fprintf(stderr, "hml: last lines of '%s':\n%s%s", path, start,
		        text[size ? size - 1 : 0] == '\n' ? "" : "\n");
	free(text);
}

static const char *kind_name(hml__run_kind k)
{
	return k == HML__RUN_SURROGATE ? "surrogate" : k == HML__RUN_ACCURATE ? "accurate"
	                                                                      : "collect";
}

int cmd_app_run(const struct hml__workflow *w, char *const *argv,
                const struct hml__run_config *config, const char *log, double *wall_s,
                cmd_progress **bar)
{
	char **envp = NULL;
	hml__proc_result pr;
	int rc;

	if ((rc = hml__childenv_build(&envp, config, (const char *const *)environ,
	                              (const char *const *)w->env)) < 0)
		return rc;
	rc = hml__proc_run_env((const char *const *)argv, (const char *const *)envp, log, log,
	                       &pr);
	hml__strv_free(envp);
	if (rc < 0)
		return rc;
	if (pr.interrupted || cmd_interrupted)
		return hml__error_set(HML_ERROR, "interrupted");
	if (!pr.exited || pr.exit_code != 0) {
		if (bar) {
			cmd_progress_end(*bar);
			*bar = NULL;
		}
		log_tail(log);
		return hml__error_set(HML_ERROR, "%s run of '%s' failed: %s",
		                      kind_name(config->kind), w->program, hml__proc_describe(&pr));
	}
	if (wall_s)
		*wall_s = pr.wall_s;
	return 0;
}
