/*
 * tests/unit/reaper.c - background deletion: every queued file is gone
 * after close, in any number; missing files are no failure; files that
 * cannot be deleted are counted; a reaper never used starts no thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fixtures.h"
#include "sys/reaper.h"


static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(write(fd, "model", 5) == 5);
		close(fd);
	}
}

TEST(deletes_every_queued_file)
{
	enum { N = 500 };
	hml__reaper *r;
	char p[600];

	CHECK_OK(hml__reaper_open(&r));
	for (int i = 0; i < N; i++) {
		snprintf(p, sizeof(p), "%s/m%d.pt", tmpdir, i);
		touch(p);
		hml__reaper_add(r, p);   /* the path is copied: p is reused */
	}
	CHECK_EQ_INT(hml__reaper_close(r), 0);
	for (int i = 0; i < N; i++) {
		snprintf(p, sizeof(p), "%s/m%d.pt", tmpdir, i);
		CHECK(access(p, F_OK) < 0 && errno == ENOENT);
	}
}

TEST(missing_files_are_no_failure)
{
	hml__reaper *r;
	char p[600];

	CHECK_OK(hml__reaper_open(&r));
	snprintf(p, sizeof(p), "%s/never-there.pt", tmpdir);
	hml__reaper_add(r, p);
	hml__reaper_add(r, p);
	CHECK_EQ_INT(hml__reaper_close(r), 0);
}

TEST(undeletable_files_are_counted)
{
	hml__reaper *r;
	char d[600], p[700];

	/* A non-empty directory cannot be unlinked (EISDIR/EPERM), as root too. */
	snprintf(d, sizeof(d), "%s/dir", tmpdir);
	CHECK(mkdir(d, 0755) == 0);
	snprintf(p, sizeof(p), "%s/inside", d);
	touch(p);
	CHECK_OK(hml__reaper_open(&r));
	hml__reaper_add(r, d);
	hml__reaper_add(r, p);
	CHECK_EQ_INT(hml__reaper_close(r), 1);
	CHECK(access(d, F_OK) == 0);
	CHECK(access(p, F_OK) < 0);
	CHECK(rmdir(d) == 0);
}

TEST(unused_and_null)
{
	hml__reaper *r;

	CHECK_OK(hml__reaper_open(&r));
	CHECK_EQ_INT(hml__reaper_close(r), 0);
	CHECK_EQ_INT(hml__reaper_close(NULL), 0);
}

int main(void)
{
	if (tmp_dir_make("reaper") < 0)
		return 1;
	RUN(deletes_every_queued_file);
	RUN(missing_files_are_no_failure);
	RUN(undeletable_files_are_counted);
	RUN(unused_and_null);
	tmp_dir_remove();
	return check_report();
}
