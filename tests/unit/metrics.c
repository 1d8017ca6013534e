/* Unit tests: error metrics and summaries (lib/deploy/metrics.c). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "deploy/metrics.h"

TEST(errors_known_values)
{
	double a[] = { 1, 2, 0, 4 }, b[] = { 1, 3, 1, 2 };
	hml__errors e;

	hml__errors_compute(&e, a, b, 4);
	CHECK_EQ_INT(e.n, 4);
	CHECK_NEAR(e.rmse, sqrt((0 + 1 + 1 + 4) / 4.0), 1e-12);
	CHECK_NEAR(e.mae, 1.0, 1e-12);
	CHECK_NEAR(e.max_abs, 2.0, 1e-12);
	/* a == 0 is left out of the MAPE: (0 + 1/2 + 2/4) / 3 */
	CHECK_EQ_INT(e.mape_n, 3);
	CHECK_NEAR(e.mape, 100.0 * (0.5 + 0.5) / 3, 1e-9);
}

TEST(mape_leaves_out_values_near_zero)
{
	/* 1e-300 and 1e-4 are below 1e-3 * 2: a model's 0.01 there is no
	 * relative error worth averaging. */
	double a[] = { 1e-300, 1e-4, 1, 2 }, b[] = { 0.01, 0.01, 1.5, 2 };
	hml__errors e;

	hml__errors_compute(&e, a, b, 4);
	CHECK_EQ_INT(e.n, 4);
	CHECK_EQ_INT(e.mape_n, 2);
	CHECK_NEAR(e.mape, 100.0 * 0.5 / 2, 1e-9);
}

TEST(mape_absolute_floor)
{
	/* With a floor of 1, exactly |a| >= 1 counts (miniBUDE's energies):
	 * 0.5 and -0.99 are out although they are above the relative rule. */
	double a[] = { 0.5, -0.99, 1, -4, 0 }, b[] = { 0.7, 3, 1.5, -3, 0.2 };
	hml__errors e;

	hml__errors_compute_floor(&e, a, b, 5, 1.0);
	CHECK_EQ_INT(e.n, 5);
	CHECK_EQ_INT(e.mape_n, 2);
	CHECK_NEAR(e.mape, 100.0 * (0.5 + 0.25) / 2, 1e-9);
	/* A floor of 0 is the relative rule. */
	hml__errors_compute_floor(&e, a, b, 5, 0.0);
	CHECK_EQ_INT(e.mape_n, 4);
	/* Nothing above the floor: no MAPE. */
	hml__errors_compute_floor(&e, a, b, 5, 100.0);
	CHECK(e.mape_n == 0 && isnan(e.mape));
}

TEST(errors_skip_nonfinite)
{
	double a[] = { 1, NAN, 3 }, b[] = { 1, 2, INFINITY };
	hml__errors e;

	hml__errors_compute(&e, a, b, 3);
	CHECK_EQ_INT(e.n, 1);
	CHECK_EQ_INT(e.nonfinite, 2);
	CHECK_NEAR(e.rmse, 0.0, 0);
}

TEST(errors_empty)
{
	hml__errors e;

	hml__errors_compute(&e, NULL, NULL, 0);
	CHECK(isnan(e.rmse) && isnan(e.mape) && e.n == 0);
}

TEST(metric_by_name)
{
	double a[] = { 1, 2, 0, 4 }, b[] = { 1, 3, 1, 2 };
	hml__errors e;

	hml__errors_compute(&e, a, b, 4);
	CHECK_NEAR(hml__errors_metric(&e, "rmse"), e.rmse, 0);
	CHECK_NEAR(hml__errors_metric(&e, NULL), e.rmse, 0);
	CHECK_NEAR(hml__errors_metric(&e, "max_abs"), 2.0, 0);
	CHECK_NEAR(hml__errors_metric(&e, "mape"), e.mape, 0);
	CHECK(isnan(hml__errors_metric(&e, "mae")));
	CHECK(isnan(hml__errors_metric(&e, "RMSE")));
	hml__errors_compute(&e, NULL, NULL, 0);
	CHECK(isnan(hml__errors_metric(&e, "rmse")) && isnan(hml__errors_metric(&e, "max_abs")));
}

TEST(summary)
{
	double v[] = { 4, 1, 3, 2 };
	hml__summary s;

	hml__summary_compute(&s, v, 4);
	CHECK_NEAR(s.mean, 2.5, 1e-12);
	CHECK_NEAR(s.min, 1, 0);
	CHECK_NEAR(s.max, 4, 0);
	CHECK_NEAR(s.median, 2.5, 1e-12);
	CHECK_NEAR(s.stdev, sqrt(5.0 / 3.0), 1e-12);
	CHECK_NEAR(v[0], 4, 0); /* not reordered */
	hml__summary_compute(&s, v, 1);
	CHECK_NEAR(s.stdev, 0, 0);
	CHECK_NEAR(s.median, 4, 0);
	hml__summary_compute(&s, v, 0);
	CHECK(isnan(s.mean));
}

/* Two significant digits, whatever the decade. */
TEST(format_speedup)
{
	static const struct { double x; const char *want; } cases[] = {
		{ 0.0333, "0.033x" }, { 1.0 / 30, "0.033x" }, { 0.5, "0.50x" }, { 0.74, "0.74x" },
		{ 0.99, "0.99x" }, { 1, "1.0x" }, { 1.54, "1.5x" }, { 9.96, "10x" },
		{ 27.4, "27x" }, { 104.2, "100x" }, { 134, "130x" }, { 1234, "1200x" },
		{ 0.000123, "0.00012x" }, { 0.0996, "0.10x" }, { 0, "0x" }, { -2.5, "-2.5x" },
		{ NAN, "-" }, { INFINITY, "-" },
	};
	char buf[32], tiny[4];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		hml__format_speedup(buf, sizeof(buf), cases[i].x);
		if (strcmp(buf, cases[i].want) != 0)
			fprintf(stderr, "format_speedup(%g): '%s', want '%s'\n", cases[i].x, buf,
			        cases[i].want);
		CHECK_STR(buf, cases[i].want);
	}
	hml__format_speedup(tiny, sizeof(tiny), 0.0333);
	CHECK_STR(tiny, "0.0");
	{
		const double v[] = { 25.2, 27.4, 29.6 };
		hml__summary sum;

		hml__summary_compute(&sum, v, 3);
		hml__format_speedup_range(buf, sizeof(buf), &sum);
		CHECK_STR(buf, "27x (25x-30x)");
	}
}

/* Seconds in the unit that fits, as deploy's predictions (2 digits) and
 * hml show's latency columns (3) write them. */
TEST(format_seconds)
{
	char b[32];

	CHECK_STR(hml__format_seconds(b, sizeof(b), 2.2e-6, 2), "2.2 us");
	CHECK_STR(hml__format_seconds(b, sizeof(b), 4e-8, 2), "40 ns");
	CHECK_STR(hml__format_seconds(b, sizeof(b), 1.26e-4, 2), "126 us");
	CHECK_STR(hml__format_seconds(b, sizeof(b), 0.0013, 2), "1.3 ms");
	CHECK_STR(hml__format_seconds(b, sizeof(b), 2.5, 2), "2.5 s");
	CHECK_STR(hml__format_seconds(b, sizeof(b), 0.9999, 2), "1 s");
	CHECK_STR(hml__format_seconds(b, sizeof(b), 4.12e-7, 3), "412 ns");
	CHECK_STR(hml__format_seconds(b, sizeof(b), 3.1e-6, 3), "3.1 us");
	CHECK_STR(hml__format_seconds(b, sizeof(b), 2.5e-3, 3), "2.5 ms");
	CHECK_STR(hml__format_seconds(b, sizeof(b), 1.2, 3), "1.2 s");
	CHECK_STR(hml__format_seconds(b, sizeof(b), 0.99996, 3), "1 s");   /* not "1e+03 ms" */
	CHECK_STR(hml__format_seconds(b, sizeof(b), NAN, 2), "");
	CHECK_STR(hml__format_seconds(b, sizeof(b), -1, 3), "");
}

int main(void)
{
	RUN(format_seconds);
	RUN(errors_known_values);
	RUN(mape_leaves_out_values_near_zero);
	RUN(mape_absolute_floor);
	RUN(errors_skip_nonfinite);
	RUN(errors_empty);
	RUN(metric_by_name);
	RUN(summary);
	RUN(format_speedup);
	return check_report();
}
