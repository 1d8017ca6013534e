/*
 * tests/unit/latency_cache.c - the cache of measured C latencies of hml
 * search (lib/search/latency_cache.c): keys (arch, batch, threads), the
 * first figure kept, growth, and the arch spec's canonical form as key.
 */
#include <math.h>

#include "check.h"
#include "search/latency_cache.h"

TEST(cache)
{
	hml__latency_cache c;

	hml__latency_cache_init(&c);
	CHECK(isnan(hml__latency_cache_get(&c, "mlp:8:relu", 64, 1)));
	CHECK_OK(hml__latency_cache_put(&c, "mlp:8:relu", 64, 1, 2e-8));
	CHECK_OK(hml__latency_cache_put(&c, "mlp:8:relu", 64, 1, 9e-8));   /* first one stays */
	CHECK_OK(hml__latency_cache_put(&c, "mlp:8:tanh", 64, 1, NAN));    /* ignored */
	for (int i = 0; i < 40; i++)                                        /* it grows */
		CHECK_OK(hml__latency_cache_put(&c, "mlp:16:relu", 64, 1 + i, 1e-8 * (i + 1)));
	CHECK(hml__latency_cache_get(&c, "mlp:8:relu", 64, 1) == 2e-8);
	CHECK(isnan(hml__latency_cache_get(&c, "mlp:8:relu", 128, 1)));    /* batch is a key */
	CHECK(isnan(hml__latency_cache_get(&c, "mlp:8:relu", 64, 2)));     /* threads too */
	CHECK(isnan(hml__latency_cache_get(&c, "mlp:8:tanh", 64, 1)));
	/* dropout is no part of the key; the spec's canonical form is */
	CHECK(hml__latency_cache_get(&c, "mlp:8:relu:dropout=0.15", 64, 1) == 2e-8);
	CHECK(hml__latency_cache_get(&c, "mlp:8", 64, 1) == 2e-8);
	CHECK_OK(hml__latency_cache_put(&c, "mlp:12x12:gelu:dropout=0.1", 64, 1, 5e-8));
	CHECK(hml__latency_cache_get(&c, "mlp:12x12:gelu", 64, 1) == 5e-8);
	CHECK(hml__latency_cache_get(&c, "mlp:16:relu", 64, 40) == 4e-7);
	hml__latency_cache_release(&c);
	CHECK(isnan(hml__latency_cache_get(&c, "mlp:8:relu", 64, 1)));
}

int main(void)
{
	RUN(cache);
	return check_report();
}
