/*
 * tests/unit/limit.c - the time limit of an application run
 * (lib/run/limit.c): --run-timeout, else HML_RUN_TIMEOUT, else a multiple
 * of the accurate run plus the slack for a model's start-up, else none;
 * bad values refused.
 */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "core/envname.h"
#include "hml/error.h"
#include "run/limit.h"

TEST(precedence)
{
	double l = -1;

	unsetenv(HML__ENV_RUN_TIMEOUT);
	CHECK_OK(hml__run_limit(&l, NAN, 0));
	CHECK(l == 0);   /* nothing measured, nothing given: no limit */
	/* a 10 ms accurate run: its surrogate run may pay libtorch's start-up */
	CHECK_OK(hml__run_limit(&l, NAN, 0.01));
	CHECK(fabs(l - (HML__RUN_LIMIT_FACTOR * 0.01 + HML__RUN_LIMIT_SLACK_S)) < 1e-12);
	CHECK(l > 10);
	setenv(HML__ENV_RUN_TIMEOUT, "2.5", 1);
	CHECK_OK(hml__run_limit(&l, NAN, 0.01));
	CHECK(l == 2.5);
	CHECK_OK(hml__run_limit(&l, 7, 0.01));   /* the option wins */
	CHECK(l == 7);
	setenv(HML__ENV_RUN_TIMEOUT, "0", 1);
	CHECK_OK(hml__run_limit(&l, NAN, 100));
	CHECK(l == 0);   /* 0: no limit, also over the default */
	unsetenv(HML__ENV_RUN_TIMEOUT);
}

TEST(refused)
{
	double l;

	CHECK_FAILS(hml__run_limit(&l, -1, 0), HML_EINVALID, "invalid --run-timeout -1");
	CHECK_FAILS(hml__run_limit(&l, INFINITY, 0), HML_EINVALID, "invalid --run-timeout inf");
	setenv(HML__ENV_RUN_TIMEOUT, "soon", 1);
	CHECK_FAILS(hml__run_limit(&l, NAN, 1), HML_EINVALID, "invalid HML_RUN_TIMEOUT 'soon'");
	setenv(HML__ENV_RUN_TIMEOUT, "-3", 1);
	CHECK_FAILS(hml__run_limit(&l, NAN, 1), HML_EINVALID, "invalid HML_RUN_TIMEOUT '-3'");
	unsetenv(HML__ENV_RUN_TIMEOUT);
}

int main(void)
{
	RUN(precedence);
	RUN(refused);
	return check_report();
}
