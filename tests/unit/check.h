/*
 * tests/unit/check.h - the smallest test harness that does the job.
 *
 *   TEST(name) { CHECK(x == 1); CHECK_EQ_INT(a, b); CHECK_OK(call()); ... }
 *   int main(void) { RUN(name); ...; return check_report(); }
 *
 * A failed CHECK prints file:line, the expression and, for hml calls, the
 * last hml error, then the test continues; check_report() prints
 * "N passed, N failed" and returns the exit status.
 */
#ifndef HML_TEST_CHECK_H
#define HML_TEST_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hml/error.h"

static int check_failures_;
static int check_tests_passed_;
static int check_tests_failed_;

#define TEST(name) static void name(void)

#define CHECK(expr) do { if (!(expr)) { \
	fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #expr); \
	check_failures_++; } } while (0)

#define CHECK_EQ_INT(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); \
	if (a_ != b_) { fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", \
	__FILE__, __LINE__, #a, #b, a_, b_); check_failures_++; } } while (0)

#define CHECK_NEAR(a, b, tol) do { double a_ = (double)(a), b_ = (double)(b); \
	if (!(fabs(a_ - b_) <= (tol))) { fprintf(stderr, "%s:%d: %s ~= %s failed: %.17g vs %.17g\n", \
	__FILE__, __LINE__, #a, #b, a_, b_); check_failures_++; } } while (0)

#define CHECK_STR(a, b) do { const char *a_ = (a), *b_ = (b); \
	if (!a_ || !b_ || strcmp(a_, b_)) { fprintf(stderr, "%s:%d: %s == \"%s\" failed: got \"%s\"\n", \
	__FILE__, __LINE__, #a, b_ ? b_ : "(null)", a_ ? a_ : "(null)"); check_failures_++; } } while (0)

/* The message contains `needle`. */
#define CHECK_CONTAINS(hay, needle) do { const char *h_ = (hay), *n_ = (needle); \
	if (!h_ || !strstr(h_, n_)) { fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", \
	__FILE__, __LINE__, h_ ? h_ : "(null)", n_); check_failures_++; } } while (0)

#define CHECK_OK(call) do { int rc_ = (call); if (rc_ != 0) { \
	fprintf(stderr, "%s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #call, rc_, \
	hml_error_last()->message); check_failures_++; } } while (0)

/* The call fails with `code` and the last error message contains `needle`. */
#define CHECK_FAILS(call, code, needle) do { int rc_ = (call); \
	if (rc_ != (code)) { fprintf(stderr, "%s:%d: %s returned %d, expected %d (%s)\n", \
	__FILE__, __LINE__, #call, rc_, (int)(code), hml_error_last()->message); check_failures_++; } \
	else CHECK_CONTAINS(hml_error_last()->message, needle); } while (0)

#define RUN(name) do { int before_ = check_failures_; name(); \
	if (check_failures_ == before_) { check_tests_passed_++; } \
	else { check_tests_failed_++; fprintf(stderr, "FAIL %s\n", #name); } } while (0)

static inline int check_report(void)
{
	printf("%d passed, %d failed\n", check_tests_passed_, check_tests_failed_);
	return check_tests_failed_ ? 1 : 0;
}

#endif
