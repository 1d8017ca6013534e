/*
 * lib/sys/gnuplot.c - gnuplot run on a script.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "sys/fsutil.h"
#include "sys/gnuplot.h"
#include "sys/proc.h"

/* The last non-empty line of file `path` into buf ("" when none). */
static void last_line(const char *path, char *buf, size_t size)
{
	char line[512];
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + strspn(line, " \t");
		size_t len = strcspn(p, "\r\n");

		if (len == 0)
			continue;
		p[len] = '\0';
		snprintf(buf, size, "%s", p);
	}
	fclose(f);
}

int hml__gnuplot_found(void)
{
	char *g = hml__find_on_path("gnuplot");

	free(g);
	return g != NULL;
}

int hml__gnuplot_run(const char *script, const char *log)
{
	char *gnuplot = hml__find_on_path("gnuplot"), msg[512];
	const char *argv[3];
	hml__proc_result res;
	int rc;

	if (!gnuplot)
		return hml__error_set(HML_ERROR, "gnuplot is not installed (no 'gnuplot' on PATH)");
	argv[0] = gnuplot;
	argv[1] = script;
	argv[2] = NULL;
	rc = hml__proc_run(argv, NULL, log, log, &res);
	free(gnuplot);
	if (rc < 0)
		return rc;
	if (res.interrupted)
		return hml__error_set(HML_ERROR, "gnuplot was interrupted");
	if (!res.exited || res.exit_code != 0) {
		last_line(log, msg, sizeof(msg));
		return hml__error_set(HML_ERROR, "gnuplot failed (%s): %s", hml__proc_describe(&res),
		                      msg[0] ? msg : "no message");
	}
	return 0;
}
