/* Unit tests of lib/core/error.c: codes, one-line messages, thread-local state. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/error.h"
#include "core/util.h"

TEST(set_and_clear)
{
	CHECK_EQ_INT(hml__error_set(HML_ESHAPE, "shape %s vs %s", "[1]", "[2]"), HML_ESHAPE);
	CHECK_EQ_INT(hml_error_last()->code, HML_ESHAPE);
	CHECK_STR(hml_error_last()->message, "shape [1] vs [2]");
	hml_error_clear();
	CHECK_EQ_INT(hml_error_last()->code, HML_OK);
	CHECK_STR(hml_error_last()->message, "");
}

TEST(one_line)
{
	/* Dependencies' multi-line texts (libtorch back-traces) are cut. */
	hml__error_set(HML_EMODEL, "first line\nsecond line\nthird");
	CHECK_STR(hml_error_last()->message, "first line");
	CHECK_EQ_INT(hml__error_oom(), HML_ENOMEM);
	CHECK_STR(hml_error_last()->message, "out of memory");
}

TEST(save_restore)
{
	hml__error_saved s;

	hml__error_set(HML_EIO, "cannot write 'x.h5'");
	hml__error_save(&s);
	hml__error_set(HML_ERROR, "clean-up noise");
	hml__error_restore(&s);
	CHECK_EQ_INT(hml_error_last()->code, HML_EIO);
	CHECK_STR(hml_error_last()->message, "cannot write 'x.h5'");
}

static void *other_thread(void *arg)
{
	int *seen = arg;

	*seen = hml_error_last()->code;   /* a new thread starts clean */
	hml__error_set(HML_ERANGE, "thread");
	return NULL;
}

TEST(thread_local)
{
	pthread_t t;
	int seen = 12345;

	hml__error_set(HML_EINVALID, "main");
	CHECK_EQ_INT(pthread_create(&t, NULL, other_thread, &seen), 0);
	pthread_join(t, NULL);
	CHECK_EQ_INT(seen, HML_OK);
	CHECK_EQ_INT(hml_error_last()->code, HML_EINVALID);
	CHECK_STR(hml_error_last()->message, "main");
}

TEST(strerror_and_dtypes)
{
	int c;

	for (c = HML_ELOCKED; c <= HML_OK; c++)
		CHECK(strcmp(hml_strerror(c), "unknown error") != 0);
	CHECK_STR(hml_strerror(-99), "unknown error");
	CHECK_EQ_INT(hml_dtype_size(HML_F32), 4);
	CHECK_EQ_INT(hml_dtype_size(HML_F64), 8);
	CHECK_EQ_INT(hml_dtype_size((hml_dtype)9), 0);
	CHECK_STR(hml_dtype_name(HML_F64), "float64");
}

TEST(shapes_and_numbers)
{
	char buf[64];
	int64_t shape[3] = { 1024, 4, 5 }, v;
	double d;

	hml__format_shape(buf, sizeof(buf), shape, 3);
	CHECK_STR(buf, "[1024, 4, 5]");
	hml__format_shape(buf, 6, shape, 3);
	CHECK_EQ_INT(strlen(buf), 5);
	CHECK_OK(hml__parse_i64("-42", &v));
	CHECK_EQ_INT(v, -42);
	CHECK_EQ_INT(hml__parse_i64("4x", &v), HML_EINVALID);
	CHECK_EQ_INT(hml__parse_i64("", &v), HML_EINVALID);
	CHECK_OK(hml__parse_double("0.25", &d));
	CHECK_NEAR(d, 0.25, 0.0);
	CHECK_EQ_INT(hml__parse_double("1e999", &d), HML_EINVALID);
	/* One parser for every number: blanks around it are refused. */
	CHECK_EQ_INT(hml__parse_i64(" 4", &v), HML_EINVALID);
	CHECK_EQ_INT(hml__parse_i64("4 ", &v), HML_EINVALID);
	CHECK_EQ_INT(hml__parse_i64("\t4", &v), HML_EINVALID);
	CHECK_EQ_INT(hml__parse_double(" 0.5", &d), HML_EINVALID);
	CHECK_EQ_INT(hml__parse_double("0.5\n", &d), HML_EINVALID);
}

/* A path of 3000 characters: the message keeps its start and its reason. */
TEST(long_messages_keep_the_reason)
{
	char path[3001];
	const char *m;

	memset(path, 'a', 3000);
	path[0] = '/';
	path[2999] = 'z';
	path[3000] = '\0';
	CHECK_EQ_INT(hml__error_set(HML_ENOTFOUND, "cannot open model '%s': no such file", path),
	             HML_ENOTFOUND);
	m = hml_error_last()->message;
	CHECK_EQ_INT(strlen(m), 511);
	CHECK(strncmp(m, "cannot open model '/aaa", 23) == 0);
	CHECK_CONTAINS(m, "aaa...aaa");
	CHECK_CONTAINS(m, "az': no such file");
	/* A message that fits is left whole. */
	hml__error_set(HML_EIO, "cannot read '%s': short", "x");
	CHECK_STR(hml_error_last()->message, "cannot read 'x': short");
}

/* hml__path_replaceable: absent or a regular file, nothing else, and
 * what is there is left as it was. */
TEST(path_replaceable)
{
	char dir[] = "/tmp/hml-error-XXXXXX", path[128], link_path[128], fifo[128];
	struct stat st;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/file", dir);
	snprintf(link_path, sizeof(link_path), "%s/link", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	CHECK_OK(hml__path_replaceable(path));   /* absent */
	CHECK((f = fopen(path, "w")) != NULL);
	fclose(f);
	CHECK_OK(hml__path_replaceable(path));
	CHECK(symlink(path, link_path) == 0);
	CHECK_FAILS(hml__path_replaceable(link_path), HML_EINVALID,
	            "': not a regular file (a symbolic link)");
	CHECK(mkfifo(fifo, 0600) == 0);
	CHECK_FAILS(hml__path_replaceable(fifo), HML_EINVALID, "': not a regular file (a FIFO)");
	CHECK(lstat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
	CHECK_FAILS(hml__path_replaceable("/dev/null"), HML_EINVALID,
	            "cannot write '/dev/null': not a regular file (a character device)");
	CHECK_FAILS(hml__path_replaceable(dir), HML_EINVALID, "(a directory)");
	CHECK_OK(hml__path_replaceable("/nonexistent-dir/x"));   /* its creation fails */
	CHECK_FAILS(hml__path_replaceable(""), HML_EINVALID, "without a name");
	unlink(fifo);
	unlink(link_path);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	RUN(set_and_clear);
	RUN(one_line);
	RUN(save_restore);
	RUN(thread_local);
	RUN(strerror_and_dtypes);
	RUN(shapes_and_numbers);
	RUN(long_messages_keep_the_reason);
	RUN(path_replaceable);
	return check_report();
}
