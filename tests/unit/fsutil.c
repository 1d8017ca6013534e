/*
 * tests/unit/fsutil.c - atomic writes (and what a failed one leaves),
 * mkdir -p, removing a directory without following links, reading files,
 * SHA-256 against known digests, paths, the executable's directory, time
 * and host name.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "core/error.h"
#include "fixtures.h"
#include "sys/fsutil.h"
#include "sys/interrupt.h"
#include "sys/proc.h"

TEST(atomic_write_creates_and_replaces)
{
	const char *p = tmp_path("atomic.txt");
	char *s;

	CHECK_OK(hml__write_atomic(p, "first\n", 6));
	CHECK_STR(s = read_text(p), "first\n");
	free(s);
	CHECK_OK(hml__write_atomic(p, "second, longer\n", 15));
	CHECK_STR(s = read_text(p), "second, longer\n");
	free(s);
	CHECK_OK(hml__write_atomic(p, "", 0));
	CHECK_STR(s = read_text(p), "");
	free(s);
	CHECK_EQ_INT(count_tmp(tmpdir), 0);
}

TEST(atomic_write_failures_keep_the_old_file)
{
	const char *file = tmp_path("plain");
	const char *dir = tmp_path("adir");
	const char *inner = tmp_path("adir/keep");
	const char *p = tmp_path("kept.txt");
	char *s;
	pid_t pid;
	int status;

	write_text(file, "x");
	/* The parent is a regular file: nothing can be created there. */
	CHECK_FAILS(hml__write_atomic(tmp_path("plain/x.json"), "{}", 2), HML_EIO,
	            "cannot write '");
	CHECK_CONTAINS(hml_error_last()->message, "Not a directory");
	/* The target is a non-empty directory: the rename fails and the
	 * temporary file goes. */
	CHECK(mkdir(dir, 0777) == 0);
	write_text(inner, "inner");
	CHECK_FAILS(hml__write_atomic(dir, "data", 4), HML_EIO, "cannot write '");
	CHECK_STR(s = read_text(inner), "inner");
	free(s);
	CHECK_EQ_INT(count_tmp(tmpdir), 0);

	/* A write that fails half-way (file size limit, as a full disk would):
	 * the old content stays and no temporary file remains. */
	write_text(p, "the old content\n");
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct rlimit rl = { 8, 8 };
		static char big[4096];

		signal(SIGXFSZ, SIG_IGN);
		memset(big, 'n', sizeof(big));
		setrlimit(RLIMIT_FSIZE, &rl);
		_exit(hml__write_atomic(p, big, sizeof(big)) == HML_EIO &&
		      strstr(hml_error_last()->message, "File too large") ? 0 : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_STR(s = read_text(p), "the old content\n");
	free(s);
	CHECK_EQ_INT(count_tmp(tmpdir), 0);
}

TEST(mkdir_p_makes_every_level)
{
	struct stat st;
	char *s;

	CHECK_OK(hml__mkdir_p(tmp_path("a/b/c")));
	CHECK(stat(tmp_path("a/b/c"), &st) == 0 && S_ISDIR(st.st_mode));
	CHECK_OK(hml__mkdir_p(tmp_path("a/b/c")));        /* exists: fine */
	CHECK_OK(hml__mkdir_p(tmp_path("a//b/d/")));      /* doubled and trailing '/' */
	CHECK(stat(tmp_path("a/b/d"), &st) == 0 && S_ISDIR(st.st_mode));
	write_text(tmp_path("a/file"), "not a directory");
	CHECK_FAILS(hml__mkdir_p(tmp_path("a/file/exp")), HML_EIO, "cannot create directory '");
	CHECK_CONTAINS(hml_error_last()->message, "Not a directory");
	CHECK_EQ_INT(errno, ENOTDIR);
	CHECK_FAILS(hml__mkdir_p(tmp_path("a/file")), HML_EIO, "Not a directory");
	CHECK_STR(s = read_text(tmp_path("a/file")), "not a directory");
	free(s);
	CHECK_FAILS(hml__mkdir_p(""), HML_EINVALID, "empty name");
	if (geteuid() != 0) {
		CHECK(mkdir(tmp_path("ro"), 0555) == 0);
		CHECK_FAILS(hml__mkdir_p(tmp_path("ro/x/y")), HML_EIO, "Permission denied");
		chmod(tmp_path("ro"), 0755);
	}
}

/* A directory's files go, links as links; a directory that is a link is
 * not followed; one holding a subdirectory stays, emptied of its files. */
TEST(remove_dir_never_follows_a_link)
{
	struct stat st;
	char *s;

	CHECK_OK(hml__mkdir_p(tmp_path("rm/d")));
	CHECK_OK(hml__mkdir_p(tmp_path("rm/kept")));
	write_text(tmp_path("rm/kept/precious"), "keep me");
	write_text(tmp_path("rm/d/one"), "1");
	write_text(tmp_path("rm/d/.hidden"), "2");
	CHECK(symlink(tmp_path("rm/kept/precious"), tmp_path("rm/d/link")) == 0);
	CHECK(symlink(tmp_path("rm/kept"), tmp_path("rm/dirlink")) == 0);
	hml__remove_dir(tmp_path("rm/d"));
	CHECK(lstat(tmp_path("rm/d"), &st) != 0 && errno == ENOENT);
	CHECK_STR(s = read_text(tmp_path("rm/kept/precious")), "keep me");
	free(s);
	hml__remove_dir(tmp_path("rm/dirlink"));
	CHECK(lstat(tmp_path("rm/dirlink"), &st) == 0 && S_ISLNK(st.st_mode));
	CHECK_STR(s = read_text(tmp_path("rm/kept/precious")), "keep me");
	free(s);
	CHECK_OK(hml__mkdir_p(tmp_path("rm/outer/inner")));
	write_text(tmp_path("rm/outer/file"), "x");
	hml__remove_dir(tmp_path("rm/outer"));
	CHECK(lstat(tmp_path("rm/outer/file"), &st) != 0);
	CHECK(lstat(tmp_path("rm/outer/inner"), &st) == 0 && S_ISDIR(st.st_mode));
	hml__remove_dir(tmp_path("rm/missing"));   /* nothing there: nothing happens */
}

TEST(read_file_whole)
{
	const char *p = tmp_path("read.txt");
	char *buf = NULL;
	size_t n = 99;

	write_text(p, "line 1\nline 2\n");
	CHECK_OK(hml__read_file(p, &buf, &n));
	CHECK_STR(buf, "line 1\nline 2\n");
	CHECK_EQ_INT(n, 14);
	free(buf);
	write_text(p, "");
	CHECK_OK(hml__read_file(p, &buf, &n));
	CHECK_STR(buf, "");
	CHECK_EQ_INT(n, 0);
	free(buf);
	/* Files whose size stat() does not know. */
	CHECK_OK(hml__read_file("/proc/self/status", &buf, &n));
	CHECK(n > 100 && strstr(buf, "Pid:") != NULL);
	free(buf);
	/* size may be NULL */
	write_text(p, "abc");
	CHECK_OK(hml__read_file(p, &buf, NULL));
	CHECK_STR(buf, "abc");
	free(buf);

	buf = (char *)p;
	CHECK_FAILS(hml__read_file(tmp_path("missing.txt"), &buf, &n), HML_ENOTFOUND,
	            "cannot read '");
	CHECK_CONTAINS(hml_error_last()->message, "missing.txt': No such file or directory");
	CHECK(buf == NULL);
	CHECK_FAILS(hml__read_file(tmpdir, &buf, &n), HML_EIO, "Is a directory");
}

TEST(sha256_known_digests)
{
	const char *p = tmp_path("hash.bin");
	char hex[65];
	FILE *f;

	write_text(p, "abc");
	CHECK_OK(hml__sha256_file(p, hex));
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	write_text(p, "");
	CHECK_OK(hml__sha256_file(p, hex));
	CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	/* One million 'a': many 64 KiB reads and a partial last one. */
	f = fopen(p, "wb");
	for (int i = 0; f && i < 1000000; i++)
		fputc('a', f);
	CHECK(f && fclose(f) == 0);
	CHECK_OK(hml__sha256_file(p, hex));
	CHECK_STR(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	CHECK_FAILS(hml__sha256_file(tmp_path("nope.bin"), hex), HML_ENOTFOUND, "nope.bin");
	CHECK_STR(hex, "");
}

/* Reads are bounded and never block: FIFOs and devices are refused at
 * once; so is a file past the bound; hashing stops on an interrupt. */
TEST(reads_are_bounded_and_never_block)
{
	const char *fifo = tmp_path("pipe"), *p = tmp_path("big.txt");
	char *buf = (char *)p, hex[65];
	size_t n = 7;

	CHECK(mkfifo(fifo, 0600) == 0);
	CHECK_FAILS(hml__read_file(fifo, &buf, &n), HML_EINVALID,
	            "pipe': not a regular file");
	CHECK(buf == NULL && n == 0);
	CHECK_FAILS(hml__sha256_file(fifo, hex), HML_EINVALID, "not a regular file");
	CHECK_FAILS(hml__read_file("/dev/zero", &buf, &n), HML_EINVALID, "not a regular file");
	write_text(p, "0123456789");
	CHECK_OK(hml__read_file_max(p, 10, &buf, &n));
	CHECK_STR(buf, "0123456789");
	free(buf);
	CHECK_FAILS(hml__read_file_max(p, 9, &buf, &n), HML_EINVALID,
	            "big.txt': it is larger than 9 bytes");
	CHECK(buf == NULL);
	/* A procfs file grows past its reported size 0: bounded as it grows. */
	CHECK_FAILS(hml__read_file_max("/proc/self/status", 100, &buf, &n), HML_EINVALID,
	            "is larger than 100 bytes");

	hml__interrupt(SIGINT);
	CHECK_FAILS(hml__sha256_file(p, hex), HML_ERROR, "interrupted while hashing");
	/* A run consumes the pending interrupt (and does not start). */
	{
		const char *argv[] = { "/bin/true", NULL };
		hml__proc_result res;

		CHECK_OK(hml__proc_run(argv, NULL, NULL, NULL, &res));
		CHECK(res.interrupted);
	}
	CHECK(!hml__interrupt_pending());
	CHECK_OK(hml__sha256_file(p, hex));
}

TEST(paths)
{
	char *p, cwd[PATH_MAX];
	struct stat st;

	CHECK_STR(p = hml__path_join("a", "b"), "a/b"); free(p);
	CHECK_STR(p = hml__path_join("a/", "b"), "a/b"); free(p);
	CHECK_STR(p = hml__path_join("a//", "b/c"), "a/b/c"); free(p);
	CHECK_STR(p = hml__path_join("/", "b"), "/b"); free(p);
	CHECK_STR(p = hml__path_join("a", "/abs"), "/abs"); free(p);
	CHECK_STR(p = hml__path_join("", "b"), "b"); free(p);
	CHECK_STR(p = hml__path_join("a", ""), "a"); free(p);

	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	CHECK_STR(p = hml__path_abs("."), cwd); free(p);
	CHECK_OK(hml__mkdir_p(tmp_path("x/y")));
	p = hml__path_abs(tmp_path("x/../x/y/"));
	CHECK(p && p[0] == '/' && strstr(p, "/x/y") && !strstr(p, ".."));
	free(p);
	CHECK(hml__path_abs(tmp_path("no/such")) == NULL);
	CHECK_EQ_INT(hml_error_last()->code, HML_ENOTFOUND);
	CHECK_CONTAINS(hml_error_last()->message, "cannot resolve '");

	/* The test binary lives in the directory hml__exe_dir names. */
	p = hml__exe_dir();
	CHECK(p && p[0] == '/');
	if (p) {
		char exe[PATH_MAX];

		snprintf(exe, sizeof(exe), "%s/test_fsutil", p);
		CHECK(stat(exe, &st) == 0 && S_ISREG(st.st_mode));
	}
	free(p);
}

/* Found in the first directory of PATH that has it as an executable; an
 * empty entry is the current directory; missing or not executable: NULL. */
TEST(find_on_path)
{
	char *saved = getenv("PATH") ? strdup(getenv("PATH")) : NULL, *p, cwd[PATH_MAX];
	char a[PATH_MAX], b[PATH_MAX], path[3 * PATH_MAX], file[PATH_MAX + 16];
	int fd;

	snprintf(a, sizeof(a), "%s/pa", tmpdir);
	snprintf(b, sizeof(b), "%s/pb", tmpdir);
	CHECK(mkdir(a, 0777) == 0 && mkdir(b, 0777) == 0);
	snprintf(file, sizeof(file), "%s/tool", a);   /* not executable in a */
	CHECK((fd = open(file, O_WRONLY | O_CREAT, 0644)) >= 0);
	close(fd);
	snprintf(file, sizeof(file), "%s/tool", b);
	CHECK((fd = open(file, O_WRONLY | O_CREAT, 0755)) >= 0);
	close(fd);
	snprintf(path, sizeof(path), "%s:%s", a, b);
	setenv("PATH", path, 1);
	p = hml__find_on_path("tool");
	CHECK_STR(p, file);
	free(p);
	CHECK(hml__find_on_path("no-such-tool") == NULL);
	setenv("PATH", tmpdir, 1);
	CHECK(hml__find_on_path("pb") == NULL);   /* a directory is no program */
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	CHECK(chdir(b) == 0);
	setenv("PATH", ":/nonexistent", 1);
	p = hml__find_on_path("tool");
	CHECK_STR(p, "./tool");
	free(p);
	CHECK(chdir(cwd) == 0);
	setenv("PATH", "", 1);
	CHECK(hml__find_on_path("tool") == NULL);
	if (saved)
		setenv("PATH", saved, 1);
	free(saved);
}

TEST(time_and_host)
{
	char t[32], h[256], small[4];
	int y, mo, d, hh, mm, ss;
	char z = 0;

	hml__time_iso(t, sizeof(t));
	CHECK_EQ_INT(strlen(t), 20);
	CHECK(sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &hh, &mm, &ss, &z) == 7);
	CHECK(y >= 2024 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && z == 'Z');
	CHECK(t[4] == '-' && t[10] == 'T');
	hml__hostname(h, sizeof(h));
	CHECK(h[0] != '\0');
	hml__hostname(small, sizeof(small));
	CHECK(strlen(small) < sizeof(small));
}

int main(void)
{
	if (tmp_dir_make("fsutil") < 0)
		return 1;
	RUN(atomic_write_creates_and_replaces);
	RUN(atomic_write_failures_keep_the_old_file);
	RUN(mkdir_p_makes_every_level);
	RUN(remove_dir_never_follows_a_link);
	RUN(read_file_whole);
	RUN(sha256_known_digests);
	RUN(reads_are_bounded_and_never_block);
	RUN(paths);
	RUN(find_on_path);
	RUN(time_and_host);
	tmp_dir_remove();
	return check_report();
}
