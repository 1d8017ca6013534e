/*
 * tests/unit/asha.c - ASHA promotions: rungs, promotion order, failures,
 * two objectives, replay, bad input.
 */
#include <math.h>
#include <stdio.h>

#include "check.h"
#include "search/opt/asha.h"

TEST(rungs)
{
	hml__asha *a = NULL;
	CHECK_OK(hml__asha_new(&a, 1, 1, 27, 3));
	CHECK_EQ_INT(hml__asha_rungs(a), 4);
	CHECK(hml__asha_resource(a, 0) == 1 && hml__asha_resource(a, 1) == 3);
	CHECK(hml__asha_resource(a, 3) == 27);
	CHECK(isnan(hml__asha_resource(a, 4)));
	hml__asha_free(a);
	CHECK_OK(hml__asha_new(&a, 1, 5, 100, 3)); /* 5, 15, 45, then 100 */
	CHECK_EQ_INT(hml__asha_rungs(a), 4);
	CHECK(hml__asha_resource(a, 2) == 45 && hml__asha_resource(a, 3) == 100);
	hml__asha_free(a);
	CHECK_OK(hml__asha_new(&a, 1, 10, 10, 2));
	CHECK_EQ_INT(hml__asha_rungs(a), 1);
	hml__asha_free(a);
}

/* Nine configurations at rung 0: the best three are promoted, best first,
 * failures never; rung-1 results then promote one to rung 2 before any
 * further rung-0 promotion. */
TEST(promotions)
{
	hml__asha *a = NULL;
	size_t c;
	unsigned k;
	CHECK_OK(hml__asha_new(&a, 1, 1, 9, 3));
	const double loss[9] = { 5, 3, 8, 1, 9, 2, 7, 6, 4 };
	CHECK_EQ_INT(hml__asha_next(a, &c, &k), 0);
	for (size_t i = 0; i < 9; i++) {
		CHECK_OK(hml__asha_start(a, i, 0));
		CHECK_OK(hml__asha_report(a, i, 0, &loss[i]));
	}
	CHECK_EQ_INT(hml__asha_next(a, &c, &k), 1);
	CHECK_EQ_INT(c, 3);
	CHECK_EQ_INT(k, 1);
	CHECK_EQ_INT(hml__asha_next(a, &c, &k), 1);
	CHECK_EQ_INT(c, 5);
	CHECK_EQ_INT(hml__asha_next(a, &c, &k), 1);
	CHECK_EQ_INT(c, 1);
	CHECK_EQ_INT(hml__asha_next(a, &c, &k), 0); /* top third exhausted */
	const double l1[3] = { 0.5, 0.9, 0.7 };
	CHECK_OK(hml__asha_report(a, 3, 1, &l1[0]));
	CHECK_OK(hml__asha_fail(a, 5, 1));
	CHECK_OK(hml__asha_report(a, 1, 1, &l1[2]));
	/* two results at rung 1: floor(2/3) = 0 promotable */
	CHECK_EQ_INT(hml__asha_next(a, &c, &k), 0);
	/* three more configurations at rung 0 make room for one more promotion */
	const double more[3] = { 0.1, 10, 10 };
	for (size_t i = 9; i < 12; i++) {
		CHECK_OK(hml__asha_start(a, i, 0));
		CHECK_OK(hml__asha_report(a, i, 0, &more[i - 9]));
	}
	CHECK_EQ_INT(hml__asha_next(a, &c, &k), 1);
	CHECK_EQ_INT(c, 9);
	CHECK_EQ_INT(k, 1);
	CHECK_OK(hml__asha_report(a, 9, 1, &l1[1]));
	/* rung 1 now has three results (one failed does not count): config 3 goes up */
	CHECK_EQ_INT(hml__asha_next(a, &c, &k), 1);
	CHECK_EQ_INT(c, 3);
	CHECK_EQ_INT(k, 2);
	hml__asha_free(a);
}

/* Two objectives rank by Pareto layer: a configuration that is best in the
 * second objective is on the first layer and promoted. */
TEST(two_objectives)
{
	hml__asha *a = NULL;
	size_t c, got[2];
	unsigned k;
	CHECK_OK(hml__asha_new(&a, 2, 1, 4, 2));
	const double f[4][2] = { { 1, 9 }, { 2, 8 }, { 3, 1 }, { 4, 9.5 } };
	for (size_t i = 0; i < 4; i++) {
		CHECK_OK(hml__asha_start(a, i, 0));
		CHECK_OK(hml__asha_report(a, i, 0, f[i]));
	}
	for (int j = 0; j < 2; j++) {
		CHECK_EQ_INT(hml__asha_next(a, &c, &k), 1);
		got[j] = c;
	}
	CHECK_EQ_INT(got[0], 0); /* layer 0: 0, 1, 2, ordered by the first objective */
	CHECK_EQ_INT(got[1], 1);
	CHECK_EQ_INT(hml__asha_next(a, &c, &k), 0);
	hml__asha_free(a);
}

/* Replaying starts and results rebuilds the same decisions. */
TEST(replay)
{
	hml__asha *a = NULL, *b = NULL;
	size_t ca, cb;
	unsigned ka, kb;
	CHECK_OK(hml__asha_new(&a, 1, 1, 8, 2));
	CHECK_OK(hml__asha_new(&b, 1, 1, 8, 2));
	for (size_t i = 0; i < 6; i++) {
		double y = (double)((i * 7) % 6);
		CHECK_OK(hml__asha_start(a, i, 0));
		CHECK_OK(hml__asha_report(a, i, 0, &y));
		CHECK_OK(hml__asha_start(b, i, 0));
		CHECK_OK(hml__asha_report(b, i, 0, &y));
	}
	CHECK_EQ_INT(hml__asha_next(a, &ca, &ka), 1);
	CHECK_OK(hml__asha_start(b, ca, ka)); /* replayed promotion */
	CHECK_EQ_INT(hml__asha_next(a, &ca, &ka), 1);
	CHECK_EQ_INT(hml__asha_next(b, &cb, &kb), 1);
	CHECK_EQ_INT(ca, cb);
	CHECK_EQ_INT(ka, kb);
	hml__asha_free(a);
	hml__asha_free(b);
}

TEST(bad_input)
{
	hml__asha *a = NULL;
	double y = 1, nan = NAN;
	CHECK_FAILS(hml__asha_new(&a, 3, 1, 2, 2), HML_EINVALID, "3 objectives");
	CHECK_FAILS(hml__asha_new(&a, 1, 0, 2, 2), HML_EINVALID, "0 < min <= max");
	CHECK_FAILS(hml__asha_new(&a, 1, 4, 2, 2), HML_EINVALID, "0 < min <= max");
	CHECK_FAILS(hml__asha_new(&a, 1, 1, 2, 1), HML_EINVALID, "reduction factor 1");
	CHECK(a == NULL);
	CHECK_OK(hml__asha_new(&a, 1, 1, 4, 2));
	CHECK_FAILS(hml__asha_start(a, 0, 5), HML_EINVALID, "rung 5 out of range");
	CHECK_FAILS(hml__asha_start(a, 0, 1), HML_EINVALID, "configuration 0 has no result at rung 0");
	CHECK_FAILS(hml__asha_report(a, 0, 0, &y), HML_EINVALID, "configuration 0 is not running at rung 0");
	CHECK_OK(hml__asha_start(a, 0, 0));
	CHECK_FAILS(hml__asha_start(a, 0, 0), HML_EINVALID, "already started at rung 0");
	CHECK_FAILS(hml__asha_report(a, 0, 0, &nan), HML_EINVALID, "objective 0 is not finite");
	CHECK_OK(hml__asha_report(a, 0, 0, &y));
	CHECK_FAILS(hml__asha_fail(a, 0, 0), HML_EINVALID, "is not running");
	hml__asha_free(a);
	hml__asha_free(NULL);
}

int main(void)
{
	RUN(rungs);
	RUN(promotions);
	RUN(two_objectives);
	RUN(replay);
	RUN(bad_input);
	return check_report();
}
