/*
 * lib/core/beneath.c - writes inside an experiment, never through a link.
 */
#define _GNU_SOURCE   /* renameat2(), RENAME_NOREPLACE */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/beneath.h"
#include "core/error.h"

static atomic_int force_walk;
static atomic_uint tmp_counter;

void hml__beneath_force_walk(int on)
{
	atomic_store(&force_walk, on != 0);
}

/* The verb of messages: what opening with `flags` is for. A directory is
 * opened (O_RDONLY) to write inside it; a file O_RDONLY to read it. */
static const char *verb_of(int flags)
{
	return (flags & O_ACCMODE) == O_RDONLY && !(flags & (O_CREAT | O_DIRECTORY)) ? "read"
	                                                                            : "write";
}

static int link_error_v(const char *root, const char *rel, size_t len, const char *verb)
{
	return hml__error_set(HML_EINVALID, "'%.*s' in experiment '%s' is a symbolic link; "
	                      "hml does not %s through links", (int)len, rel, root, verb);
}

static int link_error(const char *root, const char *rel, size_t len)
{
	return link_error_v(root, rel, len, "write");
}

static int io_error_v(int err, const char *root, const char *rel, const char *verb)
{
	int code = err == ENOMEM ? HML_ENOMEM : err == ENOENT ? HML_ENOTFOUND : HML_EIO;

	hml__error_set(code, "cannot %s '%s/%s': %s", verb, root, rel, strerror(err));
	errno = err;
	return code;
}

static int io_error(int err, const char *root, const char *rel)
{
	return io_error_v(err, root, rel, "write");
}

/* Why resolving `rel` failed with `err`: the first component that is a
 * link or not a directory, named; else the system's reason. */
static int explain(int dirfd, const char *root, const char *rel, int err, const char *verb)
{
	char buf[4096];
	struct stat st;
	size_t n = strlen(rel);

	if (n >= sizeof(buf))
		return io_error_v(err, root, rel, verb);
	memcpy(buf, rel, n + 1);
	for (size_t i = 0; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (i > 0 && fstatat(dirfd, buf, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			if (S_ISLNK(st.st_mode))
				return link_error_v(root, rel, i, verb);
			if (i < n && !S_ISDIR(st.st_mode))
				return hml__error_set(HML_EINVALID, "'%.*s' in experiment '%s' is not "
				                      "a directory", (int)i, rel, root);
		}
		buf[i] = rel[i];
	}
	return io_error_v(err, root, rel, verb);
}

/* `rel` must stay below: no "..", not absolute, not empty. */
static int check_rel(const char *root, const char *rel)
{
	const char *p = rel;

	if (!*rel || *rel == '/')
		goto outside;
	while (*p) {
		size_t len = strcspn(p, "/");

		if (len == 2 && p[0] == '.' && p[1] == '.')
			goto outside;
		p += len;
		p += strspn(p, "/");
	}
	return 0;
outside:
	return hml__error_set(HML_EINVALID, "'%s' is outside experiment '%s'", rel, root);
}

/* openat() of each component with O_NOFOLLOW, as without openat2(). */
static int walk(int dirfd, const char *rel, int flags, mode_t mode)
{
	char buf[4096], *comp = buf, *slash;
	int cur = dirfd, fd, err;

	if (strlen(rel) >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(buf, rel);
	while ((slash = strchr(comp, '/')) != NULL) {
		*slash = '\0';
		fd = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		err = errno;
		if (cur != dirfd)
			close(cur);
		if (fd < 0) {
			errno = err;
			return -1;
		}
		cur = fd;
		comp = slash + 1;
		while (*comp == '/')
			comp++;
	}
	fd = openat(cur, *comp ? comp : ".", flags | O_NOFOLLOW, mode);
	err = errno;
	if (cur != dirfd)
		close(cur);
	errno = err;
	return fd;
}

static int resolve(int dirfd, const char *rel, int flags, mode_t mode)
{
	struct open_how how;
	int fd;

	if (atomic_load(&force_walk))
		return walk(dirfd, rel, flags, mode);
	memset(&how, 0, sizeof(how));
	how.flags = (unsigned)(flags | O_NOFOLLOW);
	how.mode = (flags & O_CREAT) ? mode : 0;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
	/* No openat2 (before Linux 5.6), or a sandbox that forbids it. */
	if (fd < 0 && (errno == ENOSYS || errno == EPERM))
		return walk(dirfd, rel, flags, mode);
	return fd;
}

int hml__beneath_openat(int dirfd, const char *root, const char *rel, int flags, mode_t mode)
{
	int dir = (flags & O_DIRECTORY) != 0, fd, rc;
	struct stat st;

	if ((rc = check_rel(root, rel)) < 0)
		return rc;
	/* O_NONBLOCK: a FIFO must not block the open before it is refused. */
	fd = resolve(dirfd, rel, flags | O_CLOEXEC | (dir ? 0 : O_NONBLOCK | O_NOCTTY), mode);
	if (fd < 0) {
		int err = errno;

		/* A FIFO without a reader, a socket: opened O_NONBLOCK, refused. */
		if (err == ENXIO)
			return hml__error_set(HML_EINVALID, "'%s' in experiment '%s' is not a regular "
			                      "file; hml does not %s it", rel, root,
			                      verb_of(flags)[0] == 'r' ? "read" : "write to");
		return err == ENOENT && !(flags & O_CREAT)
		       ? io_error_v(err, root, rel, verb_of(flags))
		       : explain(dirfd, root, rel, err, verb_of(flags));
	}
	if (dir)
		return fd;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return hml__error_set(HML_EINVALID, "'%s' in experiment '%s' is not a regular file; "
		                      "hml does not %s it", rel, root,
		                      verb_of(flags)[0] == 'r' ? "read" : "write to");
	}
	if (!(flags & O_NONBLOCK))
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

/* `path` relative to `root`: past "root/" when it starts so. */
static const char *rel_of(const char *root, const char *path)
{
	size_t n = strlen(root);

	while (n > 1 && root[n - 1] == '/')
		n--;
	if (strncmp(path, root, n) == 0 && (path[n] == '/' || path[n] == '\0' ||
	                                    (n == 1 && root[0] == '/'))) {
		path += n;
		path += strspn(path, "/");
	}
	while (path[0] == '.' && path[1] == '/') {
		path += 2;
		path += strspn(path, "/");
	}
	return path;
}

static int root_open(const char *root)
{
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return hml__error_set(errno == ENOENT ? HML_ENOTFOUND : HML_EIO,
		                      "cannot open experiment '%s': %s", root, strerror(errno));
	return fd;
}

int hml__beneath_open(const char *root, const char *path, int flags, mode_t mode)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	int rfd, fd, derived = !root;

	if (!root) {   /* the directory that holds `path` */
		if (!slash)
			root = ".";
		else if (slash == path)
			root = "/";
		else if ((size_t)(slash - path) < sizeof(dir)) {
			snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
			root = dir;
		} else
			return io_error(ENAMETOOLONG, ".", path);
	}
	/* No experiment named: a missing folder is the path's own failure. */
	if (derived && (rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		int err = errno, code = err == ENOMEM ? HML_ENOMEM
		                      : err == ENOENT && !(flags & O_CREAT) ? HML_ENOTFOUND : HML_EIO;

		hml__error_set(code, "cannot %s '%s': %s", verb_of(flags), path, strerror(err));
		errno = err;
		return code;
	}
	if (!derived && (rfd = root_open(root)) < 0)
		return rfd;
	fd = hml__beneath_openat(rfd, root, rel_of(root, path), flags, mode);
	close(rfd);
	return fd;
}

int hml__beneath_fopen(FILE **out, const char *root, const char *path, const char *mode)
{
	int flags = O_WRONLY | O_CREAT | (mode[0] == 'a' ? O_APPEND : O_TRUNC);
	int fd = hml__beneath_open(root, path, flags, 0666);

	*out = NULL;
	if (fd < 0)
		return fd;
	if (!(*out = fdopen(fd, mode[0] == 'a' ? "a" : "w"))) {
		close(fd);
		return hml__error_oom();
	}
	return 0;
}

/* The directory holding `rel`'s last component, and that component. */
static int parent_open(int rfd, const char *root, const char *rel, char *buf, size_t size,
                       const char **name)
{
	char *slash;
	int rc;

	if ((rc = check_rel(root, rel)) < 0)
		return rc;
	if (strlen(rel) >= size)
		return io_error(ENAMETOOLONG, root, rel);
	strcpy(buf, rel);
	if (!(slash = strrchr(buf, '/'))) {
		int fd = fcntl(rfd, F_DUPFD_CLOEXEC, 0);

		*name = rel;
		return fd < 0 ? io_error(errno, root, rel) : fd;
	}
	*slash = '\0';
	*name = rel + (slash - buf) + 1;
	if (!**name)
		return hml__error_set(HML_EINVALID, "'%s' in experiment '%s' is not a file name",
		                      rel, root);
	return hml__beneath_openat(rfd, root, buf, O_RDONLY | O_DIRECTORY, 0);
}

int hml__beneath_mkdir_p(const char *root, const char *path)
{
	const char *rel = rel_of(root, path);
	char buf[4096];
	int rfd, fd = -1, rc = 0;

	if (!*rel)
		return (rfd = root_open(root)) < 0 ? rfd : close(rfd);
	if ((rc = check_rel(root, rel)) < 0)
		return rc;
	if (strlen(rel) >= sizeof(buf))
		return io_error(ENAMETOOLONG, root, rel);
	if ((rfd = root_open(root)) < 0)
		return rfd;
	strcpy(buf, rel);
	/* Each prefix in turn, made when missing, then opened as a directory
	 * beneath the root: a link anywhere is found and named. */
	for (size_t i = 1;; i++) {
		char c = buf[i];

		if (c != '/' && c != '\0')
			continue;
		buf[i] = '\0';
		if ((fd = hml__beneath_openat(rfd, root, buf, O_RDONLY | O_DIRECTORY, 0)) < 0 &&
		    fd == HML_ENOTFOUND) {
			char *slash = strrchr(buf, '/');
			int pfd = slash ? (*slash = '\0',
			                   hml__beneath_openat(rfd, root, buf, O_RDONLY | O_DIRECTORY, 0))
			                : fcntl(rfd, F_DUPFD_CLOEXEC, 0);

			if (slash)
				*slash = '/';
			if (pfd < 0) {
				rc = pfd;
				goto done;
			}
			if (mkdirat(pfd, slash ? slash + 1 : buf, 0777) < 0 && errno != EEXIST) {
				rc = io_error(errno, root, buf);
				close(pfd);
				goto done;
			}
			close(pfd);
			fd = hml__beneath_openat(rfd, root, buf, O_RDONLY | O_DIRECTORY, 0);
		}
		if (fd < 0) {
			rc = fd;
			goto done;
		}
		close(fd);
		buf[i] = c;
		if (c == '\0')
			break;
	}
done:
	close(rfd);
	return rc;
}

/* What is at `name` in `dir` may be replaced: nothing, or a regular file. */
static int replaceable(int dir, const char *name, const char *root, const char *rel)
{
	struct stat st;

	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : io_error(errno, root, rel);
	if (S_ISLNK(st.st_mode))
		return link_error(root, rel, strlen(rel));
	if (!S_ISREG(st.st_mode))
		return hml__error_set(HML_EINVALID, "'%s' in experiment '%s' is not a regular file; "
		                      "hml does not write to it", rel, root);
	return 1;
}

static int rename_in(int rfd, const char *root, const char *from, const char *to, int noreplace)
{
	char fbuf[4096], tbuf[4096];
	const char *fname, *tname;
	struct stat st;
	int ffd = -1, tfd = -1, rc;

	if ((ffd = parent_open(rfd, root, from, fbuf, sizeof(fbuf), &fname)) < 0)
		return ffd;
	if ((tfd = rc = parent_open(rfd, root, to, tbuf, sizeof(tbuf), &tname)) < 0)
		goto done;
	if (fstatat(ffd, fname, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		rc = io_error(errno, root, from);
		goto done;
	}
	if (S_ISLNK(st.st_mode)) {
		rc = link_error(root, from, strlen(from));
		goto done;
	}
	if ((rc = replaceable(tfd, tname, root, to)) < 0)
		goto done;
	if (rc == 1 && noreplace) {
		rc = hml__error_set(HML_EEXISTS, "'%s' already exists in experiment '%s'; "
		                    "not overwriting it", to, root);
		goto done;
	}
	rc = noreplace ? renameat2(ffd, fname, tfd, tname, RENAME_NOREPLACE) : -1;
	/* A file system without RENAME_NOREPLACE: checked just above. */
	if (!noreplace || (rc < 0 && (errno == EINVAL || errno == ENOSYS || errno == ENOTSUP)))
		rc = renameat(ffd, fname, tfd, tname);
	if (rc < 0)
		rc = errno == EEXIST ? hml__error_set(HML_EEXISTS, "'%s' already exists in experiment "
		                                      "'%s'; not overwriting it", to, root)
		                     : io_error(errno, root, to);
	else
		fsync(tfd);
done:
	close(ffd);
	if (tfd >= 0)
		close(tfd);
	return rc < 0 ? rc : 0;
}

int hml__beneath_rename(const char *root, const char *from, const char *to, int noreplace)
{
	int rfd = root_open(root), rc;

	if (rfd < 0)
		return rfd;
	rc = rename_in(rfd, root, rel_of(root, from), rel_of(root, to), noreplace);
	close(rfd);
	return rc;
}

int hml__beneath_unlink(const char *root, const char *path)
{
	const char *rel = rel_of(root, path), *name;
	char buf[4096];
	int rfd = root_open(root), dfd, rc = 0;

	if (rfd < 0)
		return rfd;
	dfd = parent_open(rfd, root, rel, buf, sizeof(buf), &name);
	close(rfd);
	if (dfd == HML_ENOTFOUND)
		return 0;
	if (dfd < 0)
		return dfd;
	if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT)
		rc = io_error(errno, root, rel);
	close(dfd);
	return rc;
}

static int write_all(int fd, const char *p, size_t size)
{
	while (size > 0) {
		ssize_t n = write(fd, p, size);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		size -= (size_t)n;
	}
	return 0;
}

static int write_in(int dfd, const char *root, const char *rel, const char *name,
                    const void *data, size_t size)
{
	char tmp[512];
	int fd, rc, err;

	if ((rc = replaceable(dfd, name, root, rel)) < 0)
		return rc;
	do {
		snprintf(tmp, sizeof(tmp), ".tmp-%ld-%u-%.400s", (long)getpid(),
		         atomic_fetch_add(&tmp_counter, 1), name);
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	} while (fd < 0 && errno == EEXIST);
	if (fd < 0)
		return io_error(errno, root, rel);
	err = write_all(fd, data, size) < 0 || fsync(fd) < 0 ? errno : 0;
	if (close(fd) < 0 && !err)
		err = errno;
	if (err || renameat(dfd, tmp, dfd, name) < 0) {
		err = err ? err : errno;
		unlinkat(dfd, tmp, 0);
		return io_error(err, root, rel);
	}
	fsync(dfd);   /* EINVAL where directories cannot be synced: renamed all the same */
	return 0;
}

int hml__beneath_write_atomic(const char *root, const char *path, const void *data,
                              size_t size)
{
	const char *rel = rel_of(root, path), *name;
	char buf[4096];
	int rfd = root_open(root), dfd, rc;

	if (rfd < 0)
		return rfd;
	dfd = parent_open(rfd, root, rel, buf, sizeof(buf), &name);
	close(rfd);
	if (dfd < 0)
		return dfd;
	rc = write_in(dfd, root, rel, name, data, size);
	close(dfd);
	return rc;
}

int hml__beneath_mkdtemp(const char *root, char *templ)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	const char *rel = rel_of(root, templ), *name;
	size_t n = strlen(templ);
	char buf[4096];
	int rfd, dfd, rc = 0;

	if (n < 6 || strcmp(templ + n - 6, "XXXXXX") != 0)
		return hml__error_set(HML_EINVALID, "bad temporary directory name '%s'", templ);
	if ((rfd = root_open(root)) < 0)
		return rfd;
	dfd = parent_open(rfd, root, rel, buf, sizeof(buf), &name);
	close(rfd);
	if (dfd < 0)
		return dfd;
	for (unsigned tries = 0;; tries++) {
		unsigned v = (unsigned)getpid() * 2654435761u ^ atomic_fetch_add(&tmp_counter, 1) * 40503u;

		for (size_t i = 0; i < 6; i++, v /= 62)
			templ[n - 6 + i] = chars[v % 62];
		if (mkdirat(dfd, name, 0777) == 0)
			break;
		if (errno != EEXIST || tries > 1000) {
			rc = io_error(errno, root, rel);
			break;
		}
	}
	close(dfd);
	return rc;
}
