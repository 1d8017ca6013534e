/*
 * tests/unit/argv.c - the application's command line: --args split on
 * blanks, "{seed}" substituted, lists copied.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/util.h"
#include "run/argv.h"

static int count(char **v)
{
	int n = 0;

	while (v && v[n])
		n++;
	return n;
}

TEST(split_on_blanks)
{
	char **v = NULL;

	CHECK_OK(hml__argv_split(&v, "  --options 8192\t--seed\n{seed}  "));
	CHECK_EQ_INT(count(v), 4);
	if (count(v) == 4) {
		CHECK_STR(v[0], "--options");
		CHECK_STR(v[1], "8192");
		CHECK_STR(v[2], "--seed");
		CHECK_STR(v[3], "{seed}");
	}
	hml__strv_free(v);
	/* No quoting: quotes are ordinary characters. */
	CHECK_OK(hml__argv_split(&v, "'a b' \"c\""));
	CHECK_EQ_INT(count(v), 3);
	if (count(v) == 3)
		CHECK_STR(v[1], "b'");
	hml__strv_free(v);
	CHECK_OK(hml__argv_split(&v, " \t\n"));
	CHECK(v != NULL && v[0] == NULL);
	hml__strv_free(v);
	CHECK_OK(hml__argv_split(&v, ""));
	CHECK(v != NULL && v[0] == NULL);
	hml__strv_free(v);
}

TEST(many_arguments)
{
	char text[4096] = "", **v = NULL;

	for (int i = 0; i < 500; i++)
		strcat(text, "x ");
	CHECK_OK(hml__argv_split(&v, text));
	CHECK_EQ_INT(count(v), 500);
	hml__strv_free(v);
}

TEST(seed_substituted)
{
	const char *args[] = { "--seed", "{seed}", "run-{seed}-{seed}.h5", "{seed", NULL };
	int64_t seed = 42, big = 4611686018427387903LL;
	char **v = NULL;

	CHECK_OK(hml__argv_build(&v, "/bin/app", args, &seed));
	CHECK_EQ_INT(count(v), 5);
	if (count(v) == 5) {
		CHECK_STR(v[0], "/bin/app");
		CHECK_STR(v[1], "--seed");
		CHECK_STR(v[2], "42");
		CHECK_STR(v[3], "run-42-42.h5");
		CHECK_STR(v[4], "{seed");
	}
	hml__strv_free(v);
	CHECK_OK(hml__argv_build(&v, "/bin/app", args, &big));
	if (count(v) == 5)
		CHECK_STR(v[3], "run-4611686018427387903-4611686018427387903.h5");
	hml__strv_free(v);
}

TEST(no_seed_keeps_arguments)
{
	const char *args[] = { "{seed}", NULL };
	char **v = NULL;

	CHECK_OK(hml__argv_build(&v, "/bin/app", args, NULL));
	CHECK_EQ_INT(count(v), 2);
	if (count(v) == 2)
		CHECK_STR(v[1], "{seed}");
	hml__strv_free(v);
	CHECK_OK(hml__argv_build(&v, "/bin/app", NULL, NULL));
	CHECK_EQ_INT(count(v), 1);
	hml__strv_free(v);
}

TEST(copy)
{
	const char *src[] = { "a", "b", "c", NULL };
	char **v = NULL;

	CHECK_OK(hml__argv_copy(&v, src, -1));
	CHECK_EQ_INT(count(v), 3);
	hml__strv_free(v);
	CHECK_OK(hml__argv_copy(&v, src, 2));
	CHECK_EQ_INT(count(v), 2);
	if (count(v) == 2)
		CHECK_STR(v[1], "b");
	hml__strv_free(v);
	CHECK_OK(hml__argv_copy(&v, NULL, -1));
	CHECK(v != NULL && v[0] == NULL);
	hml__strv_free(v);
}

/* An MPI workflow's run: the launcher, "{ranks}" replaced, then the
 * application's command line as it was. */
TEST(launcher_prepended)
{
	const char *const launcher[] = { "/usr/bin/mpirun", "-n", "{ranks}", "--x={ranks}{ranks}",
	                                 NULL };
	char *app[] = { "/bin/app", "--seed", "{ranks}", NULL };
	char **v = NULL;

	CHECK_OK(hml__argv_launch(&v, launcher, 12, app));
	if (!v)
		return;
	CHECK_STR(v[0], "/usr/bin/mpirun");
	CHECK_STR(v[1], "-n");
	CHECK_STR(v[2], "12");
	CHECK_STR(v[3], "--x=1212");
	CHECK_STR(v[4], "/bin/app");
	CHECK_STR(v[5], "--seed");
	CHECK_STR(v[6], "{ranks}");   /* the application's arguments are its own */
	CHECK(v[7] == NULL);
	hml__strv_free(v);
}

int main(void)
{
	RUN(split_on_blanks);
	RUN(many_arguments);
	RUN(seed_substituted);
	RUN(no_seed_keeps_arguments);
	RUN(copy);
	RUN(launcher_prepended);
	return check_report();
}
