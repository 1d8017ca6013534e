/*
 * libFuzzer target: the trial history reader (lib/search/history.c, a
 * line's checks in history_line.c) and the checks a line passes before a
 * replay (lib/search/history_check.c).
 * The input is written as a search's trials.jsonl and read; every event
 * the reader hands over must hold what it promises (counts in range, the
 * point in the unit cube, a kept model an id), and is then checked against
 * a fixed space of two rungs and an experiment holding model m1 of trial 3
 * of search s1. A refusal must name the file and the line.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/error.h"
#include "fuzz_files.h"
#include "search/history_check.h"
#include "store/ids.h"
#include "store/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static hml__history_check g_check;

static void setup(void)
{
	json_t *spec = json_pack("{s:{s:s, s:i, s:i}, s:{s:s, s:i, s:i, s:b},"
	                         " s:{s:s, s:[s, s]}}",
	                         "layers", "type", "int", "low", 1, "high", 4,
	                         "width", "type", "int", "low", 8, "high", 256, "log", 1,
	                         "activation", "type", "choice", "values", "relu", "tanh");
	hml__space *sp = NULL;
	hml__store *s = NULL;
	char dir[300], id[16];

	snprintf(dir, sizeof(dir), "%s/exp", fuzz_dir());
	if (!spec || hml__space_parse(&sp, spec, "fuzz") < 0 || hml__store_open(&s, dir, 1) < 0 ||
	    hml__store_add(s, "models", json_pack("{s:{s:s, s:i}}", "search", "id", "s1",
	                                          "trial", 3), NULL, 0, 0, id, sizeof(id)) < 0)
		abort();
	json_decref(spec);
	g_check = (hml__history_check){ "s1", sp, 2, s };
}

static int on_event(const hml__hist_event *ev, void *payload)
{
	(void)payload;
	if (ev->trial < 0 || ev->trial > HML__HIST_MAX_TRIAL || ev->config < 0 ||
	    ev->config > HML__HIST_MAX_TRIAL || ev->rung > HML__HIST_MAX_RUNG)
		abort();
	for (size_t i = 0; ev->u && i < ev->dim; i++)
		if (!(ev->u[i] >= 0 && ev->u[i] <= 1))
			abort();
	if (ev->model && hml__id_check("models", ev->model) < 0)
		abort();
	if (ev->status == HML__HIST_KEPT && !ev->model)
		abort();
	if (!isnan(ev->seconds) && !(ev->seconds >= 0 && isfinite(ev->seconds)))
		abort();
	return hml__history_check_event(&g_check, ev);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path;
	int rc, torn = 0;

	if (!g_check.space)
		setup();
	path = fuzz_write("trials.jsonl", data, size);
	rc = hml__history_read(path, on_event, NULL, &torn);
	if (rc == HML_EINVALID && !strstr(hml_error_last()->message, "' line "))
		abort();   /* every refused line names the file and the line */
	if (rc != 0 && rc != HML_EINVALID && rc != HML_ENOMEM && rc != HML_EIO)
		abort();
	(void)hml__history_check_complete(&g_check, path, 0);
	return 0;
}
