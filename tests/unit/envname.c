/*
 * tests/unit/envname.c - HML_<KEY>_<LABEL>: the name the CLI builds is the
 * name the runtime looks up (round trip through setenv and the region
 * configuration).
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "core/envname.h"

static const char *const labels[] = { "binomial", "bin.omial-2", "Mixed_Case9", "a" };

TEST(names)
{
	char buf[HML__ENVNAME_MAX];

	CHECK_OK(hml__envname_region(buf, sizeof(buf), HML__ENV_MODE, "bin.omial-2"));
	CHECK_STR(buf, "HML_MODE_BIN_OMIAL_2");
	CHECK_OK(hml__envname_region(buf, sizeof(buf), HML__ENV_FLUSH_SECONDS, "Mixed_Case9"));
	CHECK_STR(buf, "HML_FLUSH_SECONDS_MIXED_CASE9");
	CHECK_FAILS(hml__envname_region(buf, 12, HML__ENV_MODE, "binomial"), HML_EINVALID,
	            "longer than 11 characters");
	CHECK_STR(buf, "");
}

TEST(longest_label_fits)
{
	char label[65], buf[HML__ENVNAME_MAX];

	memset(label, 'x', 64);
	label[64] = '\0';
	CHECK_OK(hml__label_check(label));
	CHECK_OK(hml__envname_region(buf, sizeof(buf), HML__ENV_FLUSH_SECONDS, label));
}

/* What the CLI sets for a region, the runtime reads for it, and only it. */
TEST(round_trip_through_the_runtime)
{
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++) {
		char mode[HML__ENVNAME_MAX], model[HML__ENVNAME_MAX], inter[HML__ENVNAME_MAX];
		char guard[HML__ENVNAME_MAX];
		hml__config c;

		CHECK_OK(hml__envname_region(mode, sizeof(mode), HML__ENV_MODE, labels[i]));
		CHECK_OK(hml__envname_region(model, sizeof(model), HML__ENV_MODEL, labels[i]));
		CHECK_OK(hml__envname_region(inter, sizeof(inter), HML__ENV_INTERLEAVE, labels[i]));
		CHECK_OK(hml__envname_region(guard, sizeof(guard), HML__ENV_GUARD, labels[i]));
		setenv(HML__ENV_MODE, "collect", 1);
		setenv(guard, "/per/region.guard.json", 1);
		setenv(mode, "interleave", 1);
		setenv(model, "/per/region.pt", 1);
		setenv(inter, "9", 1);
		CHECK_OK(hml__config_resolve(&c, labels[i], NULL));
		CHECK_EQ_INT(c.mode, HML_MODE_INTERLEAVE);
		CHECK_STR(c.model, "/per/region.pt");
		CHECK_EQ_INT(c.interleave, 9);
		CHECK_STR(c.guard, "/per/region.guard.json");
		hml__config_release(&c);
		/* Another region sees only the global setting. */
		CHECK_OK(hml__config_resolve(&c, "other", NULL));
		CHECK_EQ_INT(c.mode, HML_MODE_COLLECT);
		CHECK(c.model == NULL && c.guard == NULL);
		hml__config_release(&c);
		unsetenv(guard);
		unsetenv(mode);
		unsetenv(model);
		unsetenv(inter);
		unsetenv(HML__ENV_MODE);
	}
}

TEST(matches)
{
	CHECK(hml__envname_matches("HML_MODE", HML__ENV_MODE));
	CHECK(hml__envname_matches("HML_MODE=off", HML__ENV_MODE));
	CHECK(hml__envname_matches("HML_MODE_X=off", HML__ENV_MODE));
	CHECK(!hml__envname_matches("HML_MODEL=x", HML__ENV_MODE));
	CHECK(hml__envname_matches("HML_MODEL_X=x", HML__ENV_MODEL));
	CHECK(!hml__envname_matches("HML_MOD=x", HML__ENV_MODE));
}

int main(void)
{
	RUN(names);
	RUN(longest_label_fits);
	RUN(round_trip_through_the_runtime);
	RUN(matches);
	return check_report();
}
