/*
 * tests/unit/iterative.c - an iterative search's latency bound per k
 * (lib/search/iterative.h): each k's from the cost of its own data sets,
 * --max-latency when lower, none where the plan records no cost.
 */
#include <math.h>

#include "check.h"
#include "search/iterative.h"

static json_t *plan(void)
{
	return json_pack("{s:[{s:i, s:f, s:f}, {s:i, s:f, s:f}, {s:i, s:[]}, {s:i, s:n, s:n}]}",
	                 "groups",
	                 "k", 2, "region_cost_per_row", 1e-5, "region_move_per_row", 2e-6,
	                 "k", 8, "region_cost_per_row", 4e-5, "region_move_per_row", 0.0,
	                 "k", 4, "data",                      /* a plan of older hml */
	                 "k", 16, "region_cost_per_row", "region_move_per_row");
}

TEST(each_k_its_own_room)
{
	json_t *p = plan();

	CHECK_NEAR(hml__iterative_latency_bound(p, 2, 0), 8e-6, 1e-18);
	CHECK_NEAR(hml__iterative_latency_bound(p, 8, 0), 4e-5, 1e-18);
	/* --max-latency when lower */
	CHECK_NEAR(hml__iterative_latency_bound(p, 8, 1e-5), 1e-5, 1e-18);
	CHECK_NEAR(hml__iterative_latency_bound(p, 2, 1e-5), 8e-6, 1e-18);
	/* no cost recorded: the search's pooled bound holds (NaN), or --max-latency */
	CHECK(isnan(hml__iterative_latency_bound(p, 4, 0)));
	CHECK(isnan(hml__iterative_latency_bound(p, 16, 0)));
	CHECK_NEAR(hml__iterative_latency_bound(p, 16, 3e-6), 3e-6, 1e-18);
	CHECK(isnan(hml__iterative_latency_bound(p, 5, 0)));   /* no group of k */
	CHECK_NEAR(hml__iterative_latency_bound_max(p, 0), 4e-5, 1e-18);
	CHECK(isnan(hml__iterative_latency_bound_max(NULL, 0)));
	json_decref(p);
}

int main(void)
{
	RUN(each_k_its_own_room);
	return check_report();
}
