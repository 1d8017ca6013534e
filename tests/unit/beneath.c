/*
 * tests/unit/beneath.c - writes inside an experiment never go through a
 * symbolic link (lib/core/beneath.c): a link at the last component, at a
 * middle directory, `..` and absolute escapes, FIFOs and devices, the
 * atomic write, rename, unlink, mkdir -p and mkdtemp; every case both with
 * openat2() and with the component walk used where the kernel lacks it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/beneath.h"
#include "core/error.h"
#include "fixtures.h"

static const char *xp, *outside;

/* A fresh experiment "xp" holding models/ and data/, and a file
 * "outside.txt" beside it that nothing may change. */
static void setup(void)
{
	xp = tmp_path("xp");
	outside = tmp_path("outside.txt");
	rm_rf(xp);
	mkdir(xp, 0777);
	mkdir(tmp_path("xp/models"), 0777);
	mkdir(tmp_path("xp/data"), 0777);
	write_text(outside, "precious\n");
}

static void outside_unchanged(void)
{
	char *s = read_text(outside);

	CHECK_STR(s, "precious\n");
	free(s);
}

static int try_open(const char *path, int flags)
{
	int fd = hml__beneath_open(xp, path, flags, 0666);

	if (fd >= 0)
		close(fd);
	return fd < 0 ? fd : 0;
}

static void opens_plain_files(void)
{
	char *s;
	int fd;

	setup();
	CHECK_OK(try_open(tmp_path("xp/models/a.pt"), O_WRONLY | O_CREAT | O_TRUNC));
	CHECK(exists(tmp_path("xp/models/a.pt")));
	/* relative to the experiment, too */
	fd = hml__beneath_open(xp, "models/a.pt", O_WRONLY | O_APPEND, 0);
	CHECK(fd >= 0);
	CHECK(write(fd, "x", 1) == 1);
	close(fd);
	CHECK_STR(s = read_text(tmp_path("xp/models/a.pt")), "x");
	free(s);
	CHECK_FAILS(try_open("models/none.pt", O_RDWR), HML_ENOTFOUND, "none.pt");
}

static void refuses_a_link_at_the_last_component(void)
{
	setup();
	CHECK(symlink(outside, tmp_path("xp/models/t1.pt")) == 0);
	CHECK_FAILS(try_open(tmp_path("xp/models/t1.pt"), O_WRONLY | O_CREAT | O_TRUNC),
	            HML_EINVALID, "'models/t1.pt' in experiment '");
	CHECK_CONTAINS(hml_error_last()->message, "is a symbolic link; hml does not write through links");
	CHECK_FAILS(try_open("models/t1.pt", O_RDWR | O_APPEND | O_CREAT), HML_EINVALID,
	            "symbolic link");
	CHECK_FAILS(try_open("models/t1.pt", O_WRONLY | O_CREAT | O_EXCL), HML_EINVALID,
	            "symbolic link");
	/* a read names what it would have done */
	CHECK_FAILS(try_open("models/t1.pt", O_RDONLY), HML_EINVALID,
	            "'models/t1.pt' in experiment");
	CHECK_CONTAINS(hml_error_last()->message, "is a symbolic link; hml does not read through links");
	outside_unchanged();
}

static void refuses_a_link_at_a_middle_directory(void)
{
	const char *away = tmp_path("away");

	setup();
	rm_rf(away);
	mkdir(away, 0777);
	CHECK(symlink(away, tmp_path("xp/search")) == 0);
	CHECK_FAILS(try_open("search/s1/t1.pt", O_WRONLY | O_CREAT), HML_EINVALID,
	            "'search' in experiment");
	CHECK_FAILS(hml__beneath_mkdir_p(xp, "search/s1"), HML_EINVALID, "'search' in experiment");
	CHECK(!exists(tmp_path("away/s1")));
	/* a link deeper down is named as deep as it is */
	CHECK_OK(hml__beneath_mkdir_p(xp, tmp_path("xp/eval/e1")));
	CHECK(symlink(away, tmp_path("xp/eval/e1/tmp")) == 0);
	CHECK_FAILS(try_open("eval/e1/tmp/x", O_WRONLY | O_CREAT), HML_EINVALID,
	            "'eval/e1/tmp' in experiment");
	CHECK(!exists(tmp_path("away/x")));
	/* a file where a directory should be */
	write_text(tmp_path("xp/plain"), "");
	CHECK_FAILS(try_open("plain/x", O_WRONLY | O_CREAT), HML_EINVALID, "not a directory");
	rm_rf(away);
}

static void refuses_escapes(void)
{
	setup();
	CHECK_FAILS(try_open("../outside.txt", O_WRONLY | O_TRUNC), HML_EINVALID, "outside experiment");
	CHECK_FAILS(try_open("models/../../outside.txt", O_WRONLY), HML_EINVALID, "outside experiment");
	CHECK_FAILS(try_open(outside, O_WRONLY | O_TRUNC), HML_EINVALID, "outside experiment");
	CHECK_FAILS(try_open("/etc/passwd", O_WRONLY), HML_EINVALID, "outside experiment");
	CHECK_FAILS(hml__beneath_mkdir_p(xp, "../escaped"), HML_EINVALID, "outside experiment");
	CHECK(!exists(tmp_path("escaped")));
	outside_unchanged();
}

static void refuses_what_is_not_a_regular_file(void)
{
	setup();
	CHECK(mkfifo(tmp_path("xp/data/fifo.h5"), 0666) == 0);
	/* O_WRONLY on a FIFO without a reader would block: refused at once */
	CHECK_FAILS(try_open("data/fifo.h5", O_WRONLY | O_CREAT | O_TRUNC), HML_EINVALID,
	            "is not a regular file");
	CHECK_FAILS(try_open("data", O_RDONLY), HML_EINVALID, "not a regular file");
	CHECK_FAILS(hml__beneath_write_atomic(xp, "data/fifo.h5", "x", 1), HML_EINVALID,
	            "not a regular file");
	CHECK(exists(tmp_path("xp/data/fifo.h5")));
}

static void atomic_write_rename_unlink(void)
{
	char *s;

	setup();
	CHECK_OK(hml__beneath_write_atomic(xp, tmp_path("xp/manifest.json"), "{}\n", 3));
	CHECK_STR(s = read_text(tmp_path("xp/manifest.json")), "{}\n");
	free(s);
	unlink(tmp_path("xp/manifest.json"));
	CHECK(symlink(outside, tmp_path("xp/manifest.json")) == 0);
	CHECK_FAILS(hml__beneath_write_atomic(xp, tmp_path("xp/manifest.json"), "{}\n", 3),
	            HML_EINVALID, "'manifest.json' in experiment");
	outside_unchanged();
	CHECK_EQ_INT(count_tmp(xp), 0);

	write_text(tmp_path("xp/models/.tmp-1.pt"), "model");
	CHECK_OK(hml__beneath_rename(xp, tmp_path("xp/models/.tmp-1.pt"),
	                             tmp_path("xp/models/m1.pt"), 1));
	write_text(tmp_path("xp/models/.tmp-2.pt"), "model2");
	CHECK_FAILS(hml__beneath_rename(xp, "models/.tmp-2.pt", "models/m1.pt", 1), HML_EEXISTS,
	            "'models/m1.pt' already exists");
	CHECK(symlink(outside, tmp_path("xp/models/m2.pt")) == 0);
	CHECK_FAILS(hml__beneath_rename(xp, "models/.tmp-2.pt", "models/m2.pt", 0), HML_EINVALID,
	            "'models/m2.pt' in experiment");
	CHECK_FAILS(hml__beneath_rename(xp, "models/m2.pt", "models/m3.pt", 1), HML_EINVALID,
	            "symbolic link");
	CHECK(!exists(tmp_path("xp/models/m3.pt")));
	CHECK_OK(hml__beneath_unlink(xp, "models/m2.pt"));   /* the link, not what it names */
	outside_unchanged();
	CHECK_OK(hml__beneath_unlink(xp, "models/none.pt"));
	CHECK(symlink(tmp_path("away"), tmp_path("xp/eval")) == 0);
	CHECK_FAILS(hml__beneath_unlink(xp, "eval/e1.json"), HML_EINVALID, "'eval' in experiment");
}

static void mkdtemp_beneath(void)
{
	char templ[600];
	struct stat st;

	setup();
	snprintf(templ, sizeof(templ), "%s/eval/.tmp-XXXXXX", xp);
	CHECK_OK(hml__beneath_mkdir_p(xp, "eval"));
	CHECK_OK(hml__beneath_mkdtemp(xp, templ));
	CHECK(strstr(templ, "XXXXXX") == NULL);
	CHECK(lstat(templ, &st) == 0 && S_ISDIR(st.st_mode));
	rm_rf(tmp_path("xp/eval"));
	CHECK(symlink(tmpdir, tmp_path("xp/eval")) == 0);
	snprintf(templ, sizeof(templ), "%s/eval/.tmp-XXXXXX", xp);
	CHECK_FAILS(hml__beneath_mkdtemp(xp, templ), HML_EINVALID, "'eval' in experiment");
}

/* The experiment directory itself may be a link: the user named it. */
static void the_root_may_be_a_link(void)
{
	const char *alias = tmp_path("alias");

	setup();
	unlink(alias);
	CHECK(symlink(xp, alias) == 0);
	CHECK_OK(hml__beneath_mkdir_p(alias, "search/s1"));
	CHECK_OK(hml__beneath_write_atomic(alias, "search/s1/trials.jsonl", "", 0));
	CHECK(exists(tmp_path("xp/search/s1/trials.jsonl")));
	unlink(alias);
}

static void all_cases(void)
{
	RUN(opens_plain_files);
	RUN(refuses_a_link_at_the_last_component);
	RUN(refuses_a_link_at_a_middle_directory);
	RUN(refuses_escapes);
	RUN(refuses_what_is_not_a_regular_file);
	RUN(atomic_write_rename_unlink);
	RUN(mkdtemp_beneath);
	RUN(the_root_may_be_a_link);
}

int main(void)
{
	if (tmp_dir_make("beneath") < 0)
		return 1;
	all_cases();             /* openat2() */
	hml__beneath_force_walk(1);
	all_cases();             /* the component walk of kernels without it */
	hml__beneath_force_walk(0);
	tmp_dir_remove();
	return check_report();
}
