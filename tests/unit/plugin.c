/*
 * tests/unit/plugin.c - where libhml's plugins are looked up (plugin.h):
 * the variable when given and set, else relative to the object holding the
 * code (here the test executable, which compiles plugin.c in, like the
 * hml CLI: the build tree's runtime/ beside tests/), else the last
 * candidate, whose dlopen then names what is missing.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "h5io.h"
#include "loader/loader.h"

TEST(the_variable_wins_when_set)
{
	char buf[4096];

	setenv("HML_TEST_SOME_PLUGIN", "/opt/x/libhml-hdf5.so", 1);
	hml__plugin_path(buf, sizeof(buf), HML__HDF5_PLUGIN, "HML_TEST_SOME_PLUGIN");
	CHECK_STR(buf, "/opt/x/libhml-hdf5.so");
	/* Empty is unset; no variable named, none is read. */
	setenv("HML_TEST_SOME_PLUGIN", "", 1);
	hml__plugin_path(buf, sizeof(buf), HML__HDF5_PLUGIN, "HML_TEST_SOME_PLUGIN");
	CHECK(strcmp(buf, "") != 0 && strstr(buf, "/" HML__HDF5_PLUGIN) != NULL);
	unsetenv("HML_TEST_SOME_PLUGIN");
}

TEST(the_build_trees_plugin_is_found_from_an_executable)
{
	const char *build = getenv("HML_BUILD_DIR");
	char buf[4096], want[4096], got[PATH_MAX], real[PATH_MAX];

	CHECK(build != NULL);
	if (!build)
		return;
	hml__plugin_path(buf, sizeof(buf), HML__HDF5_PLUGIN, NULL);
	CHECK(access(buf, F_OK) == 0);
	snprintf(want, sizeof(want), "%s/runtime/%s", build, HML__HDF5_PLUGIN);
	CHECK(realpath(buf, got) != NULL && realpath(want, real) != NULL);
	CHECK_STR(got, real);
}

TEST(a_missing_plugin_gives_the_installed_candidate)
{
	char buf[4096];
	const char *tail = "/../lib/hml/libhml-nothing.so";

	hml__plugin_path(buf, sizeof(buf), "libhml-nothing.so", NULL);
	CHECK(strlen(buf) > strlen(tail) && strcmp(buf + strlen(buf) - strlen(tail), tail) == 0);
}

TEST(a_short_buffer_is_truncated_not_overrun)
{
	char buf[16];

	memset(buf, 'x', sizeof(buf));
	hml__plugin_path(buf, 8, HML__HDF5_PLUGIN, NULL);
	CHECK(strlen(buf) == 7);
	CHECK(buf[8] == 'x');
}

int main(void)
{
	RUN(the_variable_wins_when_set);
	RUN(the_build_trees_plugin_is_found_from_an_executable);
	RUN(a_missing_plugin_gives_the_installed_candidate);
	RUN(a_short_buffer_is_truncated_not_overrun);
	return check_report();
}
