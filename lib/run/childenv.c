/*
 * lib/run/childenv.c - a run's environment, from scratch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/envname.h"
#include "core/error.h"
#include "core/util.h"
#include "run/childenv.h"

static const char *const controlled[] = {
	HML__ENV_MODE, HML__ENV_MODEL, HML__ENV_DB, HML__ENV_QOI,
	HML__ENV_PROFILE, HML__ENV_ON_ERROR, HML__ENV_GUARD, HML__ENV_DEPLOYMENT,
	HML__ENV_COLLECT_GUARDED, HML__ENV_CONSERVE,
};

int hml__childenv_controls(const char *entry)
{
	for (size_t i = 0; i < sizeof(controlled) / sizeof(controlled[0]); i++)
		if (hml__envname_matches(entry, controlled[i]))
			return 1;
	return 0;
}

/* A growing "KEY=VALUE" list in which each key appears once. */
typedef struct envlist {
	char **v;
	size_t n, cap;
} envlist;

static size_t key_len(const char *entry)
{
	const char *eq = strchr(entry, '=');

	return eq ? (size_t)(eq - entry) : strlen(entry);
}

/* Add "name=value" (value NULL: `name` is a whole entry), replacing an
 * entry of the same key. */
static int put(envlist *l, const char *name, const char *value)
{
	char *e;
	size_t k, i;

	if (value) {
		size_t len = strlen(name) + strlen(value) + 2;

		if (!(e = malloc(len)))
			return hml__error_oom();
		snprintf(e, len, "%s=%s", name, value);
	} else if (!(e = hml__strdup(name))) {
		return HML_ENOMEM;
	}
	k = key_len(e);
	for (i = 0; i < l->n; i++)
		if (key_len(l->v[i]) == k && strncmp(l->v[i], e, k) == 0) {
			free(l->v[i]);
			l->v[i] = e;
			return 0;
		}
	if (l->n + 2 > l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		char **grown = realloc(l->v, cap * sizeof(*grown));

		if (!grown) {
			free(e);
			return hml__error_oom();
		}
		l->v = grown;
		l->cap = cap;
	}
	l->v[l->n++] = e;
	l->v[l->n] = NULL;
	return 0;
}

static int put_region(envlist *l, const char *var, const char *label, const char *value)
{
	char name[HML__ENVNAME_MAX];
	int rc;

	if ((rc = hml__envname_region(name, sizeof(name), var, label)) < 0)
		return rc;
	return put(l, name, value);
}

static int check(const hml__run_config *c)
{
	if (c->kind == HML__RUN_COLLECT && (!c->db || !*c->db))
		return hml__error_set(HML_EINVALID, "a collect run needs a data file");
	if (c->kind == HML__RUN_SURROGATE && (!c->region || !*c->region || !c->model))
		return hml__error_set(HML_EINVALID, "a surrogate run needs a region and a model");
	if (c->kind == HML__RUN_GUARDED && (!c->db || !*c->db || !c->region || !*c->region ||
	                                    !c->model || !c->guard || !*c->guard))
		return hml__error_set(HML_EINVALID, "a guarded collection run needs a data file, "
		                      "a region, a model and a guard");
	if (c->kind != HML__RUN_COLLECT && c->kind != HML__RUN_ACCURATE &&
	    c->kind != HML__RUN_SURROGATE && c->kind != HML__RUN_GUARDED)
		return hml__error_set(HML_EINVALID, "unknown kind of run %d", (int)c->kind);
	return 0;
}

void hml__collect_keep_over(hml__collect_keep *base, const hml__collect_keep *over)
{
	if (over->rate > 0)
		base->rate = over->rate;
	if (over->reservoir > 0)
		base->reservoir = over->reservoir;
	if (over->dedup)
		base->dedup = 1;
	if (over->seed >= 0)
		base->seed = over->seed;
	if (over->compression)
		base->compression = over->compression;
}

/* HML_COLLECT_*, global: they hold for every region of the run. */
static int put_keep(envlist *l, const hml__collect_keep *k)
{
	char num[32];
	int rc = 0;

	if (k->rate > 0) {
		snprintf(num, sizeof(num), "%.17g", k->rate);
		rc = put(l, HML__ENV_COLLECT_RATE, num);
	}
	if (rc == 0 && k->reservoir > 0) {
		snprintf(num, sizeof(num), "%lld", (long long)k->reservoir);
		rc = put(l, HML__ENV_COLLECT_RESERVOIR, num);
	}
	if (rc == 0 && k->dedup)
		rc = put(l, HML__ENV_COLLECT_DEDUP, "1");
	if (rc == 0 && k->seed >= 0) {
		snprintf(num, sizeof(num), "%lld", (long long)k->seed);
		rc = put(l, HML__ENV_COLLECT_SEED, num);
	}
	if (rc == 0 && k->compression)
		rc = put(l, HML__ENV_COLLECT_COMPRESSION, k->compression);
	return rc;
}

/* The region's variables of a run with a model (its mode, model,
 * interleave ratio, guard, conserved sum). */
static int put_model(envlist *l, const char *region, const char *model, int interleave,
                     const char *guard, const char *conserve)
{
	int rc;

	if ((rc = put_region(l, HML__ENV_MODE, region, interleave > 0 ? "interleave" :
	                     "infer")) == 0)
		rc = put_region(l, HML__ENV_MODEL, region, model);
	if (rc == 0 && interleave > 0) {
		char n[24];

		snprintf(n, sizeof(n), "%d", interleave);
		rc = put_region(l, HML__ENV_INTERLEAVE, region, n);
	}
	if (rc == 0 && guard)
		rc = put_region(l, HML__ENV_GUARD, region, guard);
	if (rc == 0 && conserve)
		rc = put_region(l, HML__ENV_CONSERVE, region, conserve);
	return rc;
}

int hml__childenv_model(char ***out, const char *region, const char *model, int interleave,
                        const char *guard, const char *conserve)
{
	envlist l = { NULL, 0, 0 };
	int rc;

	*out = NULL;
	if (!region || !*region || !model)
		return hml__error_set(HML_EINVALID, "a run with a model needs a region and a model");
	if ((rc = put_model(&l, region, model, interleave, guard, conserve)) < 0) {
		hml__strv_free(l.v);
		return rc;
	}
	*out = l.v;
	return 0;
}

/* Layer 3: what the configuration needs. */
static int put_config(envlist *l, const hml__run_config *c)
{
	int rc = put(l, HML__ENV_MODE, c->kind == HML__RUN_COLLECT ? "collect" : "off");

	int infers = c->kind == HML__RUN_SURROGATE || c->kind == HML__RUN_GUARDED;

	if (rc == 0 && (c->kind == HML__RUN_COLLECT || c->kind == HML__RUN_GUARDED))
		rc = put(l, HML__ENV_DB, c->db);
	if (rc == 0 && infers && (rc = put(l, HML__ENV_ON_ERROR, "fail")) == 0)
		rc = put_model(l, c->region, c->model, c->interleave, c->guard, c->conserve);
	if (rc == 0 && infers && c->device)
		rc = put(l, HML__ENV_DEVICE, c->device);
	if (rc == 0 && c->kind == HML__RUN_GUARDED)
		rc = put_region(l, HML__ENV_COLLECT_GUARDED, c->region, "1");
	if (rc == 0 && c->qoi)
		rc = put(l, HML__ENV_QOI, c->qoi);
	if (rc == 0 && c->profile)
		rc = put(l, HML__ENV_PROFILE, c->profile);
	if (rc == 0 && c->kind == HML__RUN_COLLECT && c->keep)
		rc = put_keep(l, c->keep);
	return rc;
}

int hml__childenv_build(char ***out, const hml__run_config *c,
                        const char *const *caller, const char *const *workflow_env)
{
	envlist l = { NULL, 0, 0 };
	int rc;

	*out = NULL;
	if ((rc = check(c)) < 0)
		return rc;
	for (const char *const *e = caller; e && *e && rc == 0; e++)
		if (strchr(*e, '=') && strncmp(*e, HML__ENV_PREFIX, strlen(HML__ENV_PREFIX)) != 0)
			rc = put(&l, *e, NULL);
	for (const char *const *e = workflow_env; e && *e && rc == 0; e++)
		if (strchr(*e, '=') && !hml__childenv_controls(*e))
			rc = put(&l, *e, NULL);
	if (rc == 0)
		rc = put_config(&l, c);
	if (rc < 0) {
		hml__strv_free(l.v);
		return rc;
	}
	*out = l.v;
	return 0;
}
