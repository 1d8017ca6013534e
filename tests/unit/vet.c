/*
 * tests/unit/vet.c - the model check's report (lib/deploy/vet.h), both
 * sides of the pipe between `hml model-check` and hml: every outcome
 * written and read back, the codes a parent keeps, and texts that are not
 * a report; the limits read from the environment.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "deploy/vet.h"

static int round_trip(int rc, const char *message)
{
	char *text = hml__vet_report_write(rc, message);
	int back;

	CHECK(text != NULL);
	back = text ? hml__vet_report_read(text, "m.pt") : HML_ENOMEM;
	free(text);
	return back;
}

TEST(report)
{
	CHECK_OK(round_trip(0, NULL));
	CHECK_FAILS(round_trip(HML_EMODEL, "cannot open model 'm.pt': code file too long"),
	            HML_EINVALID, "cannot open model 'm.pt': code file too long");
	CHECK_FAILS(round_trip(HML_ENOTFOUND, "no such model"), HML_ENOTFOUND, "no such model");
	CHECK_FAILS(round_trip(HML_ENOTSUPPORTED, "no backend"), HML_ENOTSUPPORTED, "no backend");
	CHECK_FAILS(round_trip(HML_EIO, "unreadable \"quoted\" \\ text"), HML_EIO,
	            "unreadable \"quoted\" \\ text");
	CHECK_FAILS(hml__vet_report_read("", "m.pt"), HML_EINVALID, "report is not one");
	CHECK_FAILS(hml__vet_report_read("{\"ok\": 1}", "m.pt"), HML_EINVALID, "report is not one");
	CHECK_FAILS(hml__vet_report_read("{\"ok\": false, \"code\": 3, \"message\": \"x\"}", "m.pt"),
	            HML_EINVALID, "report is not one");
	CHECK_FAILS(hml__vet_report_read("{\"ok\": true, \"ok\": false}", "m.pt"), HML_EINVALID,
	            "report is not one");
	CHECK_FAILS(hml__vet_report_read("[true]", "m.pt"), HML_EINVALID, "report is not one");
}

TEST(limits)
{
	double s;
	uint64_t mib;

	unsetenv(HML__ENV_MODEL_LOAD_TIMEOUT);
	unsetenv(HML__ENV_MODEL_LOAD_MEMORY);
	CHECK_OK(hml__vet_limits((uint64_t)100 << 20, &s, &mib));
	CHECK_NEAR(s, HML__VET_TIMEOUT_S, 0);
	CHECK(mib >= HML__VET_MEMORY_MIB + 400);
	setenv(HML__ENV_MODEL_LOAD_TIMEOUT, "7", 1);
	setenv(HML__ENV_MODEL_LOAD_MEMORY, "64", 1);
	CHECK_OK(hml__vet_limits(1, &s, &mib));
	CHECK_NEAR(s, 7, 0);
	CHECK(mib == 64);
	setenv(HML__ENV_MODEL_LOAD_MEMORY, "-1", 1);
	CHECK_FAILS(hml__vet_limits(1, &s, &mib), HML_EINVALID, "HML_MODEL_LOAD_MEMORY");
	setenv(HML__ENV_MODEL_LOAD_MEMORY, "0", 1);
	CHECK_FAILS(hml__vet_limits(1, &s, &mib), HML_EINVALID, "positive integer, not '0'");
	unsetenv(HML__ENV_MODEL_LOAD_TIMEOUT);
	unsetenv(HML__ENV_MODEL_LOAD_MEMORY);
}

int main(void)
{
	RUN(report);
	RUN(limits);
	return check_report();
}
