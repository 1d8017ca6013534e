/*
 * tests/unit/search_duration.c - durations of hml search
 * (lib/search/duration.c): --time-limit's grammar, what it refuses, and
 * the progress line's format.
 */
#include <math.h>

#include "check.h"
#include "search/duration.h"

TEST(parse)
{
	static const struct { const char *text; double seconds; } ok[] = {
		{ "90", 90 }, { "90s", 90 }, { "45m", 2700 }, { "2h", 7200 }, { "1.5h", 5400 },
		{ "0.5", 0.5 }, { ".5m", 30 }, { "3.", 3 }, { "8784h", 366.0 * 86400 },
	};
	double s;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		s = -1;
		CHECK_OK(hml__search_duration_parse(&s, ok[i].text));
		CHECK_NEAR(s, ok[i].seconds, 1e-9);
	}
}

TEST(refused)
{
	static const char *const bad[] = {
		"", "abc", "5x", "-5", "+5", " 5", "5 ", "5 m", "1e3", "0x10", "inf", "nan", "infinity",
		"s", "m", ".", "5mm", "5ms", "1.2.3", "h5",
	};
	double s = 7;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_FAILS(hml__search_duration_parse(&s, bad[i]), HML_EINVALID, "is not a duration");
	CHECK_FAILS(hml__search_duration_parse(&s, NULL), HML_EINVALID, "is not a duration");
	CHECK_FAILS(hml__search_duration_parse(&s, "5x"), HML_EINVALID,
	            "'5x' is not a duration (a number of seconds, or with s, m or h: 90, 90s, "
	            "45m, 1.5h)");
	CHECK_FAILS(hml__search_duration_parse(&s, "0"), HML_EINVALID, "'0' must be positive");
	CHECK_FAILS(hml__search_duration_parse(&s, "0.0h"), HML_EINVALID, "must be positive");
	CHECK_FAILS(hml__search_duration_parse(&s, "8785h"), HML_EINVALID, "longer than a year");
	/* overflow: a number strtod cannot hold */
	CHECK_FAILS(hml__search_duration_parse(&s, "99999999999999999999999999999999999999999999"
	                                           "9999999999999h"), HML_EINVALID,
	            "longer than a year");
	CHECK(s == 7);   /* untouched */
}

TEST(format)
{
	static const struct { double seconds; const char *text; } f[] = {
		{ 0.5, "0.5s" }, { 0, "0s" }, { 45, "45s" }, { 59.4, "59.4s" }, { 59.6, "1m" },
		{ 130, "2m10s" }, { 125, "2m05s" }, { 2700, "45m" }, { 3569, "59m29s" },
		{ 3600, "1h" }, { 3900, "1h05m" }, { 5400, "1h30m" }, { 7200, "2h" },
		{ 90000, "25h" }, { -1, "?" }, { NAN, "?" }, { INFINITY, "?" },
	};
	char buf[32];

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		hml__search_duration_format(buf, sizeof(buf), f[i].seconds);
		CHECK_STR(buf, f[i].text);
	}
	hml__search_duration_format(buf, 3, 5400);   /* truncated, terminated */
	CHECK_STR(buf, "1h");
}

int main(void)
{
	RUN(parse);
	RUN(refused);
	RUN(format);
	return check_report();
}
