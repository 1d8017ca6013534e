/*
 * tests/unit/model_run.c - the command line and environment of a run of a
 * model (lib/store/model_run.h): which k and interleave win, how they are
 * set on a workflow's run, and the deployment's "run" written and read.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/util.h"
#include "run/argv.h"
#include "store/model_run.h"

/* argv[i] after the option `opt`, or NULL. */
static const char *after(char **argv, const char *opt)
{
	for (char **a = argv; a && *a && a[1]; a++)
		if (strcmp(*a, opt) == 0)
			return a[1];
	return NULL;
}

static char **heat_argv(void)
{
	const char *const v[] = { "heat", "--n", "32", "--k", "4", "--seed", "9", NULL };
	char **out = NULL;

	CHECK_OK(hml__argv_copy(&out, v, -1));
	return out;
}

TEST(choice_then_deployment_then_card)
{
	hml__model_view m;
	hml__model_run r, dep = { -1, 3 }, choice = { 2, -1 };

	memset(&m, 0, sizeof(m));
	m.k = 8;
	m.interleave = 2;
	hml__model_run_resolve(&r, &m, NULL, NULL);
	CHECK_EQ_INT(r.k, 8);
	CHECK_EQ_INT(r.interleave, 2);
	hml__model_run_resolve(&r, &m, &dep, NULL);
	CHECK_EQ_INT(r.k, 8);
	CHECK_EQ_INT(r.interleave, 3);
	hml__model_run_resolve(&r, &m, &dep, &choice);
	CHECK_EQ_INT(r.k, 2);
	CHECK_EQ_INT(r.interleave, 3);
	m.k = m.interleave = -1;   /* a model of no iterative search */
	hml__model_run_resolve(&r, &m, NULL, NULL);
	CHECK_EQ_INT(r.k, -1);
	CHECK_EQ_INT(r.interleave, -1);
	hml__model_run_resolve(&r, NULL, NULL, &choice);   /* a trial's */
	CHECK_EQ_INT(r.k, 2);
	CHECK_EQ_INT(r.interleave, -1);
}

TEST(k_in_argv_interleave_in_the_environment)
{
	hml__workflow w;
	hml__run_config c;
	hml__model_run r = { 8, 2 };
	char **argv = heat_argv();

	memset(&w, 0, sizeof(w));
	memset(&c, 0, sizeof(c));
	w.name = "heat";
	w.search_args.k.arg = "--k";
	w.search_args.k.n = 1;
	CHECK_OK(hml__model_run_apply(&argv, &c, &w, &r));
	CHECK_STR(after(argv, "--k"), "8");
	CHECK_STR(after(argv, "--seed"), "9");
	CHECK_EQ_INT(c.interleave, 2);
	/* unset: the command line's own k, infer */
	r.k = r.interleave = -1;
	CHECK_OK(hml__model_run_apply(&argv, &c, &w, &r));
	CHECK_STR(after(argv, "--k"), "8");
	CHECK_EQ_INT(c.interleave, 0);
	hml__strv_free(argv);
}

TEST(interleave_as_the_applications_argument)
{
	hml__workflow w;
	hml__run_config c;
	hml__model_run r = { 4, 3 };
	char **argv = heat_argv();

	memset(&w, 0, sizeof(w));
	memset(&c, 0, sizeof(c));
	w.name = "app";
	w.search_args.k.arg = "--k";
	w.search_args.interleave.arg = "--every";
	CHECK_OK(hml__model_run_apply(&argv, &c, &w, &r));
	CHECK_STR(after(argv, "--every"), "3");
	CHECK_EQ_INT(c.interleave, 0);
	hml__strv_free(argv);
}

TEST(k_without_its_argument_is_refused)
{
	hml__workflow w;
	hml__run_config c;
	hml__model_run r = { 8, -1 };
	char **argv = heat_argv(), **before = argv;

	memset(&w, 0, sizeof(w));
	memset(&c, 0, sizeof(c));
	w.name = "plain";
	CHECK_FAILS(hml__model_run_apply(&argv, &c, &w, &r), HML_EINVALID,
	            "k 8: workflow 'plain' declares no steps per model call");
	CHECK(argv == before);
	hml__strv_free(argv);
}

TEST(json_round_trip)
{
	const hml__model_run runs[] = { { 8, 2 }, { -1, 0 }, { 5, -1 }, { -1, -1 } };
	hml__model_run back;

	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		json_t *j = hml__model_run_json(&runs[i]);

		CHECK(j != NULL);
		hml__model_run_read(&back, j);
		CHECK_EQ_INT(back.k, runs[i].k);
		CHECK_EQ_INT(back.interleave, runs[i].interleave);
		json_decref(j);
	}
	hml__model_run_read(&back, NULL);   /* a deployment of older hml */
	CHECK_EQ_INT(back.k, -1);
	CHECK_EQ_INT(back.interleave, -1);
	{
		json_t *bad = json_pack("{s:s, s:i}", "k", "8", "interleave", -4);

		hml__model_run_read(&back, bad);
		CHECK_EQ_INT(back.k, -1);
		CHECK_EQ_INT(back.interleave, -1);
		json_decref(bad);
	}
}

int main(void)
{
	RUN(choice_then_deployment_then_card);
	RUN(k_in_argv_interleave_in_the_environment);
	RUN(interleave_as_the_applications_argument);
	RUN(k_without_its_argument_is_refused);
	RUN(json_round_trip);
	return check_report();
}
