/*
 * tests/unit/childenv.c - a run's environment, built from scratch: the
 * caller's HML_* variables gone (global and per region, any label), the
 * workflow's env without what the configuration controls, then exactly
 * what the configuration needs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/envname.h"
#include "core/util.h"
#include "run/childenv.h"

/* The value of `key` in env, or NULL; counts how often the key appears. */
static const char *get(char **env, const char *key, int *times)
{
	const char *found = NULL;
	size_t n = strlen(key);

	*times = 0;
	for (char **e = env; e && *e; e++)
		if (strncmp(*e, key, n) == 0 && (*e)[n] == '=') {
			found = *e + n + 1;
			(*times)++;
		}
	return found;
}

static int count_prefix(char **env, const char *prefix)
{
	int n = 0;

	for (char **e = env; e && *e; e++)
		n += strncmp(*e, prefix, strlen(prefix)) == 0;
	return n;
}

/* A shell after `eval "$(hml deploy --best)"`, with more HML_ settings. */
static const char *const shell[] = {
	"PATH=/usr/bin:/bin", "HOME=/home/u", "OMP_NUM_THREADS=2",
	"HML_MODE_BINOMIAL=infer", "HML_MODEL_BINOMIAL=/exp/models/m1.pt",
	"HML_MODE=shadow", "HML_MODEL=/x.pt", "HML_DB=/tmp/other.h5",
	"HML_QOI=/tmp/q.h5", "HML_PROFILE=1", "HML_ON_ERROR_OTHER=fallback",
	"HML_THREADS=7", "HML_MODE_SOME_OTHER_REGION=collect", "HML_FUTURE_KNOB=1",
	"HML_JIT_OPTIMIZE=1", "PATH=/duplicate", "NOEQUALS", NULL
};

/* A workflow's env that tries to set what the configuration controls. */
static const char *const wf_env[] = {
	"OMP_PROC_BIND=false", "OMP_NUM_THREADS=4", "HML_THREADS=3", "HML_INTERLEAVE=8",
	"HML_MODE_BINOMIAL=infer", "HML_MODEL_BINOMIAL=/wf.pt", "HML_MODE=collect",
	"HML_DB_BINOMIAL=/wf.h5", "HML_QOI=/wf-q.h5", "HML_PROFILE_BINOMIAL=/wf.json",
	"HML_ON_ERROR=fallback", NULL
};

TEST(caller_hml_variables_removed)
{
	const hml__run_config c = { HML__RUN_ACCURATE, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL };
	char **env = NULL;
	int times;

	CHECK_OK(hml__childenv_build(&env, &c, shell, NULL));
	/* Exactly one HML_ variable: the configuration's mode. */
	CHECK_EQ_INT(count_prefix(env, "HML_"), 1);
	CHECK_STR(get(env, "HML_MODE", &times), "off");
	CHECK_EQ_INT(times, 1);
	/* Everything else passes, each key once (the last value wins). */
	CHECK_STR(get(env, "HOME", &times), "/home/u");
	CHECK_STR(get(env, "OMP_NUM_THREADS", &times), "2");
	CHECK_STR(get(env, "PATH", &times), "/duplicate");
	CHECK_EQ_INT(times, 1);
	CHECK_EQ_INT(count_prefix(env, "NOEQUALS"), 0);
	hml__strv_free(env);
}

TEST(workflow_env_cannot_override_the_configuration)
{
	const hml__run_config c = { HML__RUN_ACCURATE, NULL, NULL, NULL, "/run/q.h5", "/run/p.json", NULL, NULL, 0, NULL, NULL };
	char **env = NULL;
	int times;

	CHECK_OK(hml__childenv_build(&env, &c, shell, wf_env));
	/* The workflow tunes the runtime and the application... */
	CHECK_STR(get(env, "OMP_PROC_BIND", &times), "false");
	CHECK_STR(get(env, "OMP_NUM_THREADS", &times), "4");
	CHECK_EQ_INT(times, 1);
	CHECK_STR(get(env, "HML_THREADS", &times), "3");
	CHECK_STR(get(env, "HML_INTERLEAVE", &times), "8");
	/* ... but cannot change what the run is. */
	CHECK_STR(get(env, "HML_MODE", &times), "off");
	CHECK_EQ_INT(times, 1);
	CHECK_STR(get(env, "HML_QOI", &times), "/run/q.h5");
	CHECK_STR(get(env, "HML_PROFILE", &times), "/run/p.json");
	CHECK(get(env, "HML_MODE_BINOMIAL", &times) == NULL);
	CHECK(get(env, "HML_MODEL_BINOMIAL", &times) == NULL);
	CHECK(get(env, "HML_DB_BINOMIAL", &times) == NULL);
	CHECK(get(env, "HML_PROFILE_BINOMIAL", &times) == NULL);
	CHECK(get(env, "HML_ON_ERROR", &times) == NULL);
	CHECK_EQ_INT(count_prefix(env, "HML_"), 5);
	hml__strv_free(env);
}

TEST(collect_configuration)
{
	const hml__run_config c = { HML__RUN_COLLECT, "/exp/data/.tmp-1.h5", NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL };
	char **env = NULL;
	int times;

	CHECK_OK(hml__childenv_build(&env, &c, shell, wf_env));
	CHECK_STR(get(env, "HML_MODE", &times), "collect");
	CHECK_STR(get(env, "HML_DB", &times), "/exp/data/.tmp-1.h5");
	CHECK(get(env, "HML_MODE_BINOMIAL", &times) == NULL);
	CHECK(get(env, "HML_MODEL", &times) == NULL);
	CHECK(get(env, "HML_QOI", &times) == NULL);
	CHECK(get(env, "HML_PROFILE", &times) == NULL);
	hml__strv_free(env);
}

/* What a collection keeps: set for collect runs only, unset fields absent. */
TEST(collect_keep)
{
	hml__collect_keep k = { 0.25, 20000, 1, 7, "shuffle+deflate:4" };
	hml__run_config c = { HML__RUN_COLLECT, "/d.h5", NULL, NULL, NULL, NULL, NULL, &k, 0, NULL, NULL };
	char **env = NULL;
	int times;

	CHECK_OK(hml__childenv_build(&env, &c, shell, wf_env));
	CHECK_STR(get(env, "HML_COLLECT_RATE", &times), "0.25");
	CHECK_STR(get(env, "HML_COLLECT_RESERVOIR", &times), "20000");
	CHECK_STR(get(env, "HML_COLLECT_DEDUP", &times), "1");
	CHECK_STR(get(env, "HML_COLLECT_SEED", &times), "7");
	CHECK_STR(get(env, "HML_COLLECT_COMPRESSION", &times), "shuffle+deflate:4");
	hml__strv_free(env);

	k = (hml__collect_keep)HML__COLLECT_KEEP_INIT;
	CHECK_OK(hml__childenv_build(&env, &c, shell, wf_env));
	CHECK(get(env, "HML_COLLECT_RATE", &times) == NULL);
	CHECK(get(env, "HML_COLLECT_RESERVOIR", &times) == NULL);
	CHECK(get(env, "HML_COLLECT_SEED", &times) == NULL);
	hml__strv_free(env);

	/* Options over the workflow's: what they set wins, the rest stays. */
	{
		hml__collect_keep wf = { 0.25, 100, 0, 3, "deflate:4" };
		hml__collect_keep opt = HML__COLLECT_KEEP_INIT;

		opt.reservoir = 7;
		hml__collect_keep_over(&wf, &opt);
		CHECK(wf.rate == 0.25 && wf.reservoir == 7 && !wf.dedup && wf.seed == 3);
		CHECK_STR(wf.compression, "deflate:4");
	}

	k.rate = 0.5;
	c.kind = HML__RUN_ACCURATE;
	CHECK_OK(hml__childenv_build(&env, &c, shell, wf_env));
	CHECK(get(env, "HML_COLLECT_RATE", &times) == NULL);
	hml__strv_free(env);
}

TEST(surrogate_configuration)
{
	const hml__run_config c = { HML__RUN_SURROGATE, NULL, "bin.omial-2", "/exp/models/m2.pt",
	                            "/run/q.h5", NULL, "/exp/models/m2.guard-bounds.json",
	                            NULL, 0, NULL, NULL };
	char **env = NULL;
	int times;

	CHECK_OK(hml__childenv_build(&env, &c, shell, wf_env));
	CHECK_STR(get(env, "HML_MODE", &times), "off");
	CHECK_STR(get(env, "HML_ON_ERROR", &times), "fail");
	CHECK_STR(get(env, "HML_MODE_BIN_OMIAL_2", &times), "infer");
	CHECK_STR(get(env, "HML_MODEL_BIN_OMIAL_2", &times), "/exp/models/m2.pt");
	CHECK_STR(get(env, "HML_QOI", &times), "/run/q.h5");
	CHECK_STR(get(env, "HML_GUARD_BIN_OMIAL_2", &times), "/exp/models/m2.guard-bounds.json");
	/* The shell's deployment of another model is gone. */
	CHECK(get(env, "HML_MODE_BINOMIAL", &times) == NULL);
	CHECK(get(env, "HML_MODEL_BINOMIAL", &times) == NULL);
	CHECK(get(env, "HML_PROFILE", &times) == NULL);
	hml__strv_free(env);
}

/* The interleave mode instead of infer, for the region only. */
TEST(interleave_configuration)
{
	const hml__run_config c = { HML__RUN_SURROGATE, NULL, "mw", "/m.pt", NULL, NULL, NULL,
	                            NULL, 3, NULL, NULL };
	char **env = NULL;
	int times;

	CHECK_OK(hml__childenv_build(&env, &c, shell, wf_env));
	CHECK_STR(get(env, "HML_MODE", &times), "off");
	CHECK_STR(get(env, "HML_MODE_MW", &times), "interleave");
	CHECK_STR(get(env, "HML_INTERLEAVE_MW", &times), "3");
	CHECK_STR(get(env, "HML_MODEL_MW", &times), "/m.pt");
	CHECK(get(env, "HML_CONSERVE_MW", &times) == NULL);
	hml__strv_free(env);
}

/* The sum a model's output conserves (core/conserve.h): for the region,
 * in a run with the model only; the caller's own value does not leak in. */
TEST(conserve_configuration)
{
	const hml__run_config sur = { HML__RUN_SURROGATE, NULL, "mw", "/m.pt", NULL, NULL, NULL,
	                              NULL, 0, "0,2:-2,2:-2", NULL };
	const hml__run_config acc = { HML__RUN_ACCURATE, NULL, "mw", NULL, NULL, NULL, NULL,
	                              NULL, 0, "0,2:-2,2:-2", NULL };
	const char *const caller[] = { "HML_CONSERVE_MW=1", "PATH=/bin", NULL };
	char **env = NULL;
	int times;

	CHECK_OK(hml__childenv_build(&env, &sur, caller, NULL));
	CHECK_STR(get(env, "HML_CONSERVE_MW", &times), "0,2:-2,2:-2");
	CHECK_EQ_INT(times, 1);
	hml__strv_free(env);
	CHECK_OK(hml__childenv_build(&env, &acc, caller, NULL));
	CHECK(get(env, "HML_CONSERVE_MW", &times) == NULL);
	hml__strv_free(env);
}

/* hml evaluate --device: HML_DEVICE in a run with the model, replacing the
 * workflow env's (which passes when none is given); never the caller's. */
TEST(device_configuration)
{
	const hml__run_config sur = { HML__RUN_SURROGATE, NULL, "mw", "/m.pt", NULL, NULL, NULL,
	                              NULL, 0, NULL, "cuda" };
	const hml__run_config acc = { HML__RUN_ACCURATE, NULL, "mw", NULL, NULL, NULL, NULL,
	                              NULL, 0, NULL, "cuda" };
	const hml__run_config none = { HML__RUN_SURROGATE, NULL, "mw", "/m.pt", NULL, NULL, NULL,
	                               NULL, 0, NULL, NULL };
	const char *const caller[] = { "HML_DEVICE=auto", "PATH=/bin", NULL };
	const char *const wf[] = { "HML_DEVICE=cpu", NULL };
	char **env = NULL;
	int times;

	CHECK_OK(hml__childenv_build(&env, &sur, caller, wf));
	CHECK_STR(get(env, "HML_DEVICE", &times), "cuda");
	CHECK_EQ_INT(times, 1);
	hml__strv_free(env);
	CHECK_OK(hml__childenv_build(&env, &acc, caller, wf));
	CHECK_STR(get(env, "HML_DEVICE", &times), "cpu");
	hml__strv_free(env);
	CHECK_OK(hml__childenv_build(&env, &none, caller, NULL));
	CHECK(get(env, "HML_DEVICE", &times) == NULL);
	hml__strv_free(env);
	CHECK(hml__device_known(NULL) && hml__device_known("") && hml__device_known("auto") &&
	      hml__device_known("cpu") && hml__device_known("cuda"));
	CHECK(!hml__device_known("gpu") && !hml__device_known("CUDA") && !hml__device_known("cpu "));
}

/* What hml deploy prints for the shell is exactly the surrogate run's
 * region variables: a deployed model runs as hml evaluate runs it. */
TEST(model_variables_are_the_surrogate_runs)
{
	const hml__run_config c = { HML__RUN_SURROGATE, NULL, "mw", "/m.pt", NULL, NULL,
	                            "/g.json", NULL, 3, "0,1:-1", NULL };
	char **env = NULL, **vars = NULL;
	int times, n = 0;

	CHECK_OK(hml__childenv_build(&env, &c, NULL, NULL));
	CHECK_OK(hml__childenv_model(&vars, "mw", "/m.pt", 3, "/g.json", "0,1:-1"));
	for (char **v = vars; v && *v; v++, n++) {
		char key[64];

		snprintf(key, sizeof(key), "%.*s", (int)strcspn(*v, "="), *v);
		CHECK_STR(get(env, key, &times), strchr(*v, '=') + 1);
	}
	CHECK_EQ_INT(n, 5);
	CHECK_EQ_INT(count_prefix(vars, "HML_INTERLEAVE_MW=3"), 1);
	CHECK_EQ_INT(count_prefix(vars, "HML_CONSERVE_MW=0,1:-1"), 1);
	hml__strv_free(vars);
	CHECK_OK(hml__childenv_model(&vars, "mw", "/m.pt", 0, NULL, NULL));
	CHECK_STR(get(vars, "HML_MODE_MW", &times), "infer");
	CHECK_EQ_INT(count_prefix(vars, "HML_INTERLEAVE"), 0);
	CHECK_EQ_INT(count_prefix(vars, "HML_CONSERVE"), 0);
	hml__strv_free(vars);
	CHECK_FAILS(hml__childenv_model(&vars, "", "/m.pt", 0, NULL, NULL), HML_EINVALID, "region");
	CHECK(vars == NULL);
	hml__strv_free(env);
}

TEST(guarded_configuration)
{
	const hml__run_config c = { HML__RUN_GUARDED, "/exp/data/.tmp-2.h5", "bin.omial-2",
	                            "/exp/models/m2.pt", NULL, NULL,
	                            "/exp/models/m2.guard-bounds.json", NULL, 0, NULL, NULL };
	hml__run_config no_guard = c;
	char **env = NULL;
	int times;

	CHECK_OK(hml__childenv_build(&env, &c, shell, wf_env));
	CHECK_STR(get(env, "HML_MODE", &times), "off");
	CHECK_STR(get(env, "HML_DB", &times), "/exp/data/.tmp-2.h5");
	CHECK_STR(get(env, "HML_ON_ERROR", &times), "fail");
	CHECK_STR(get(env, "HML_MODE_BIN_OMIAL_2", &times), "infer");
	CHECK_STR(get(env, "HML_MODEL_BIN_OMIAL_2", &times), "/exp/models/m2.pt");
	CHECK_STR(get(env, "HML_GUARD_BIN_OMIAL_2", &times), "/exp/models/m2.guard-bounds.json");
	CHECK_STR(get(env, "HML_COLLECT_GUARDED_BIN_OMIAL_2", &times), "1");
	CHECK(times == 1);
	CHECK(get(env, "HML_COLLECT_GUARDED", &times) == NULL);
	hml__strv_free(env);
	env = NULL;
	no_guard.guard = NULL;
	CHECK_FAILS(hml__childenv_build(&env, &no_guard, shell, NULL), HML_EINVALID,
	            "a guarded collection run needs");
	CHECK(env == NULL);
	CHECK(hml__childenv_controls("HML_COLLECT_GUARDED_X=1"));
}

TEST(empty_inputs)
{
	const hml__run_config c = { HML__RUN_ACCURATE, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL };
	char **env = NULL;

	CHECK_OK(hml__childenv_build(&env, &c, NULL, NULL));
	CHECK(env && env[0] && strcmp(env[0], "HML_MODE=off") == 0 && !env[1]);
	hml__strv_free(env);
}

TEST(incomplete_configuration)
{
	const hml__run_config collect = { HML__RUN_COLLECT, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL };
	const hml__run_config sur = { HML__RUN_SURROGATE, NULL, "r", NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL };
	char label[100], **env = (char **)1;
	hml__run_config long_label = { HML__RUN_SURROGATE, NULL, label, "/m.pt", NULL, NULL, NULL, NULL, 0, NULL, NULL };

	CHECK_FAILS(hml__childenv_build(&env, &collect, shell, NULL), HML_EINVALID,
	            "a collect run needs a data file");
	CHECK(env == NULL);
	CHECK_FAILS(hml__childenv_build(&env, &sur, shell, NULL), HML_EINVALID,
	            "a surrogate run needs a region and a model");
	memset(label, 'a', sizeof(label) - 1);
	label[sizeof(label) - 1] = '\0';
	CHECK_FAILS(hml__childenv_build(&env, &long_label, shell, NULL), HML_EINVALID,
	            "variable name for region");
	CHECK(env == NULL);
}

TEST(controls)
{
	CHECK(hml__childenv_controls("HML_MODE=off"));
	CHECK(hml__childenv_controls("HML_MODE_X=infer"));
	CHECK(hml__childenv_controls("HML_MODEL_X=/m.pt"));
	CHECK(hml__childenv_controls("HML_ON_ERROR_X=fail"));
	CHECK(hml__childenv_controls("HML_QOI"));
	CHECK(hml__childenv_controls("HML_DEPLOYMENT_X=/e/deployed/x.json"));   /* no hot swap in a measured run */
	CHECK(!hml__childenv_controls("HML_SWAP_INTERVAL=5"));
	CHECK(!hml__childenv_controls("HML_THREADS=2"));
	CHECK(!hml__childenv_controls("HML_MODELS=2"));
	CHECK(!hml__childenv_controls("HML_DBX=2"));
	CHECK(!hml__childenv_controls("OMP_NUM_THREADS=2"));
}

int main(void)
{
	RUN(caller_hml_variables_removed);
	RUN(workflow_env_cannot_override_the_configuration);
	RUN(collect_configuration);
	RUN(surrogate_configuration);
	RUN(interleave_configuration);
	RUN(conserve_configuration);
	RUN(device_configuration);
	RUN(model_variables_are_the_surrogate_runs);
	RUN(guarded_configuration);
	RUN(empty_inputs);
	RUN(incomplete_configuration);
	RUN(controls);
	RUN(collect_keep);
	return check_report();
}
