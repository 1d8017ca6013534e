/*
 * lib/search/latency_cache.c - measured C latencies by (arch, batch, threads)
 * (latency_cache.h): a model's compiled kernel runs as fast as any other of its
 * architecture, so hml search compiles one model per architecture.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "search/latency_cache.h"
#include "train/arch.h"

struct hml__latency_entry {
	char *arch;
	int64_t batch;
	int threads;
	double seconds;
};

void hml__latency_cache_init(hml__latency_cache *c)
{
	memset(c, 0, sizeof(*c));
}

void hml__latency_cache_release(hml__latency_cache *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->e[i].arch);
	free(c->e);
	hml__latency_cache_init(c);
}

/* The key of an arch spec: its canonical form without its dropout (the
 * last part of a canonical spec), which does nothing at inference; a spec
 * that does not parse is its own key. */
static void key_of(char *buf, size_t size, const char *arch)
{
	hml__arch a;
	char *d;

	if (hml__arch_parse(&a, arch) < 0) {
		snprintf(buf, size, "%s", arch);
		return;
	}
	snprintf(buf, size, "%s", a.canonical);
	if ((d = strstr(buf, ":dropout=")) != NULL)
		*d = '\0';
}

static const struct hml__latency_entry *find(const hml__latency_cache *c, const char *spec,
                                             int64_t batch, int threads)
{
	char arch[256];

	if (!spec)
		return NULL;
	key_of(arch, sizeof(arch), spec);
	for (size_t i = 0; i < c->n; i++)
		if (c->e[i].batch == batch && c->e[i].threads == threads &&
		    strcmp(c->e[i].arch, arch) == 0)
			return &c->e[i];
	return NULL;
}

double hml__latency_cache_get(const hml__latency_cache *c, const char *arch, int64_t batch,
                              int threads)
{
	const struct hml__latency_entry *e = find(c, arch, batch, threads);

	return e ? e->seconds : NAN;
}

int hml__latency_cache_put(hml__latency_cache *c, const char *arch, int64_t batch, int threads,
                           double seconds)
{
	struct hml__latency_entry *e;
	char key[256];

	if (!arch || !isfinite(seconds) || seconds <= 0 || find(c, arch, batch, threads))
		return 0;
	key_of(key, sizeof(key), arch);
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 32;

		if (!(e = realloc(c->e, cap * sizeof(*e))))
			return hml__error_oom();
		c->e = e;
		c->cap = cap;
	}
	e = &c->e[c->n];
	if (!(e->arch = hml__strdup(key)))
		return hml__error_oom();
	e->batch = batch;
	e->threads = threads;
	e->seconds = seconds;
	c->n++;
	return 0;
}
