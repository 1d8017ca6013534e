/*
 * tests/e2e/mksearch.c - a fixture for the end-to-end tests: a search
 * record and its trial history in an experiment, written by the store and
 * the history writer (lib/search/history.h) as `hml search` writes them, without
 * training anything.
 *
 * usage: mksearch DIR REGION BUDGET RUNGS CONSTRAINTS_JSON < EVENTS
 *   One event per line: TRIAL CONFIG RUNG STATUS [ERROR LATENCY PARAMS]
 *   (STATUS ok takes the three metrics; kept takes a model id as ERROR).
 *   Prints the search's id. Exit 1 on any failure, with the message.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "search/history.h"
#include "store/store.h"

static int fail(void)
{
	fprintf(stderr, "mksearch: %s\n", hml_error_last()->message);
	return 1;
}

static int status_of(const char *name, hml__hist_status *st)
{
	for (int i = HML__HIST_RUNNING; i <= HML__HIST_KEPT; i++)
		if (strcmp(hml__hist_status_name((hml__hist_status)i), name) == 0) {
			*st = (hml__hist_status)i;
			return 0;
		}
	return -1;
}

int main(int argc, char **argv)
{
	hml__store *s = NULL;
	hml__history *h = NULL;
	json_t *rec;
	char id[16], rel[64], line[512], *path;
	int rc = 0;

	if (argc != 6) {
		fprintf(stderr, "usage: mksearch DIR REGION BUDGET RUNGS CONSTRAINTS_JSON < EVENTS\n");
		return 2;
	}
	rec = json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:o}", "region", argv[2], "workflow",
	                argv[2], "family", "mlp", "status", "finished", "budget", atoi(argv[3]),
	                "rungs", atoi(argv[4]), "constraints", json_loads(argv[5], 0, NULL));
	if (!rec || hml__store_open(&s, argv[1], 1) < 0 ||
	    hml__search_register(s, rec, id, sizeof(id)) < 0)
		return fail();
	snprintf(rel, sizeof(rel), "search/%s/%s", id, HML__HISTORY_FILE);
	if (!(path = hml__store_path(s, rel)) || hml__history_open(&h, NULL, path) < 0)
		return fail();
	while (rc == 0 && fgets(line, sizeof(line), stdin)) {
		hml__hist_event ev;
		char status[32] = "", extra[64] = "";
		double lat = NAN;
		long long params = -1;

		hml__hist_event_init(&ev);
		if (sscanf(line, "%ld %ld %u %31s %63s %lf %lld", &ev.trial, &ev.config, &ev.rung,
		           status, extra, &lat, &params) < 4 || status_of(status, &ev.status) < 0) {
			fprintf(stderr, "mksearch: bad event line: %s", line);
			return 1;
		}
		ev.m.val_rmse = ev.status == HML__HIST_OK ? atof(extra) : NAN;
		ev.m.latency_s = lat;
		ev.m.params = params;
		ev.m.latency_batch = 4096;
		ev.arch = ev.status == HML__HIST_OK ? "mlp:16x16:relu" : NULL;
		ev.model = ev.status == HML__HIST_KEPT ? extra : NULL;
		ev.error = ev.status >= HML__HIST_FAILED && ev.status <= HML__HIST_CRASHED ? "boom"
		                                                                          : NULL;
		rc = hml__history_append(h, &ev);
	}
	hml__history_close(h);
	free(path);
	hml__store_free(s);
	if (rc < 0)
		return fail();
	printf("%s\n", id);
	return 0;
}
