/*
 * lib/latency_cache.c - measured C latencies by (arch, batch, threads)
 * (latency.h): a model's compiled kernel runs as fast as any other of its
 * architecture, so hml search compiles one model per architecture.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "latency.h"
#include "util.h"

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

static const struct hml__latency_entry *find(const hml__latency_cache *c, const char *arch,
                                             int64_t batch, int threads)
{
	for (size_t i = 0; arch && i < c->n; i++)
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

	if (!arch || !isfinite(seconds) || seconds <= 0 || find(c, arch, batch, threads))
		return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 32;

		if (!(e = realloc(c->e, cap * sizeof(*e))))
			return hml__error_oom();
		c->e = e;
		c->cap = cap;
	}
	e = &c->e[c->n];
	if (!(e->arch = hml__strdup(arch)))
		return hml__error_oom();
	e->batch = batch;
	e->threads = threads;
	e->seconds = seconds;
	c->n++;
	return 0;
}
