/*
 * lib/sys/fsutil.c - files, paths, hashes and provenance facts (CLI side).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "core/error.h"
#include "core/read_file.h"
#include "core/util.h"
#include "sys/fsutil.h"
#include "sys/interrupt.h"

/* Temporary names must differ between threads of one process too. */
static atomic_uint tmp_counter;

/* Record "cannot <verb> 'PATH': <strerror>" as HML_EIO (HML_ENOTFOUND for
 * a missing file when reading); errno is left as `err` so that callers
 * may word their own message. */
static int io_error(int err, const char *verb, const char *path)
{
	int code = err == ENOMEM ? HML_ENOMEM : HML_EIO;

	if (err == ENOENT && (strcmp(verb, "read") == 0 || strcmp(verb, "resolve") == 0))
		code = HML_ENOTFOUND;
	hml__error_set(code, "cannot %s '%s': %s", verb, path, strerror(err));
	errno = err;
	return code;
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

/* fsync of the directory that holds `path`, so that a rename survives a
 * crash. A file system that cannot sync directories (EINVAL) is not an
 * error: the rename itself has already happened. */
static void sync_parent(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int fd;

	if (!slash)
		dir = strdup(".");
	else if (slash == path)
		dir = strdup("/");
	else
		dir = strndup(path, (size_t)(slash - path));
	if (!dir)
		return;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(dir);
}

int hml__write_atomic(const char *path, const void *data, size_t size)
{
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	const char *base = path + dirlen;
	char *tmp = NULL;
	size_t tmplen;
	int fd = -1, rc = 0, err;

	tmplen = strlen(path) + 64;
	if (!(tmp = malloc(tmplen))) {
		rc = hml__error_oom();
		goto done;
	}
	for (;;) {
		snprintf(tmp, tmplen, "%.*s.tmp-%ld-%u-%s", (int)dirlen, path,
		         (long)getpid(), atomic_fetch_add(&tmp_counter, 1), base);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		rc = io_error(errno, "write", path);
		goto done;
	}
	if (write_all(fd, data, size) < 0 || fsync(fd) < 0) {
		err = errno;
		close(fd);
		fd = -1;
		unlink(tmp);
		rc = io_error(err, "write", path);
		goto done;
	}
	err = close(fd) < 0 ? errno : 0;
	fd = -1;
	if (err || rename(tmp, path) < 0) {
		err = err ? err : errno;
		unlink(tmp);
		rc = io_error(err, "write", path);
		goto done;
	}
	sync_parent(path);

done:
	free(tmp);
	return rc;
}

int hml__mkdir_p(const char *path)
{
	char *p = NULL;
	struct stat st;
	int rc = 0;

	if (!path || !*path)
		return hml__error_set(HML_EINVALID, "cannot create a directory with an empty name");
	if (!(p = strdup(path))) {
		rc = hml__error_oom();
		goto done;
	}
	/* Every prefix that ends before a '/', then the whole path. */
	for (char *s = p + 1; ; s++) {
		char c = *s;

		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		/* An existing directory may fail with EACCES or EROFS rather
		 * than EEXIST: what counts is that a directory is there. */
		if (mkdir(p, 0777) < 0) {
			int err = errno;

			if (stat(p, &st) < 0) {
				rc = io_error(err, "create directory", path);
				goto done;
			}
			if (!S_ISDIR(st.st_mode)) {
				rc = io_error(ENOTDIR, "create directory", path);
				goto done;
			}
		}
		*s = c;
		if (c == '\0')
			break;
	}

done:
	free(p);
	return rc;
}

/* Through the directory's descriptor, so that no name is resolved again
 * once the directory is open: a link swapped in meanwhile is not followed. */
void hml__remove_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (fd >= 0 && !d)
		close(fd);
	while (d && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
	rmdir(dir);
}

int hml__sha256_file(const char *path, char hex[65])
{
	enum { BUFSIZE = 64 * 1024 };
	static const char digits[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	EVP_MD_CTX *ctx = NULL;
	unsigned char *buf = NULL;
	struct stat st;
	int fd, rc = 0;

	hex[0] = '\0';
	if ((fd = hml__open_regular(path, &st)) < 0)
		return fd;
	if (!(buf = malloc(BUFSIZE)) || !(ctx = EVP_MD_CTX_new())) {
		rc = hml__error_oom();
		goto done;
	}
	if (EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
		rc = hml__error_set(HML_ERROR, "cannot hash '%s': OpenSSL has no SHA-256", path);
		goto done;
	}
	for (;;) {
		ssize_t n;

		if (hml__interrupt_pending()) {
			rc = hml__error_set(HML_ERROR, "interrupted while hashing '%s'", path);
			goto done;
		}
		if ((n = read(fd, buf, BUFSIZE)) < 0) {
			if (errno == EINTR)
				continue;
			rc = io_error(errno, "read", path);
			goto done;
		}
		if (n == 0)
			break;
		EVP_DigestUpdate(ctx, buf, (size_t)n);
	}
	if (EVP_DigestFinal_ex(ctx, md, &mdlen) != 1 || mdlen != 32) {
		rc = hml__error_set(HML_ERROR, "cannot hash '%s': SHA-256 failed", path);
		goto done;
	}
	for (unsigned int i = 0; i < mdlen; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[64] = '\0';

done:
	EVP_MD_CTX_free(ctx);
	free(buf);
	close(fd);
	return rc;
}

char *hml__path_join(const char *a, const char *b)
{
	size_t la, lb;
	char *p;

	if (!a || !*a || (b && b[0] == '/'))
		return hml__strdup(b);
	if (!b || !*b)
		return hml__strdup(a);
	la = strlen(a);
	while (la > 1 && a[la - 1] == '/')
		la--;
	lb = strlen(b);
	if (!(p = malloc(la + lb + 2))) {
		hml__error_oom();
		return NULL;
	}
	memcpy(p, a, la);
	p[la] = '/';
	memcpy(p + la + (a[la - 1] == '/' ? 0 : 1), b, lb + 1);
	return p;
}

char *hml__path_abs(const char *path)
{
	char *p = realpath(path, NULL);

	if (!p)
		io_error(errno, "resolve", path);
	return p;
}

char *hml__find_on_path(const char *name)
{
	const char *path = getenv("PATH");
	char *copy, *found = NULL;

	if (!path || !*path || !(copy = hml__strdup(path)))
		return NULL;
	/* strtok would skip empty entries, which name the current directory */
	for (char *d = copy, *end; d && !found; d = end ? end + 1 : NULL) {
		char *p;
		struct stat st;

		if ((end = strchr(d, ':')) != NULL)
			*end = '\0';
		p = hml__path_join(*d ? d : ".", name);
		if (p && stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0)
			found = p;
		else
			free(p);
	}
	free(copy);
	return found;
}

char *hml__exe_dir(void)
{
	size_t cap = 256;
	char *buf = NULL;

	for (;;) {
		char *nb = realloc(buf, cap);
		ssize_t n;

		if (!nb) {
			free(buf);
			hml__error_oom();
			return NULL;
		}
		buf = nb;
		n = readlink("/proc/self/exe", buf, cap);
		if (n < 0) {
			io_error(errno, "read", "/proc/self/exe");
			free(buf);
			return NULL;
		}
		if ((size_t)n < cap) {
			char *slash;

			buf[n] = '\0';
			slash = strrchr(buf, '/');
			if (slash == buf)
				slash[1] = '\0';
			else if (slash)
				*slash = '\0';
			return buf;
		}
		cap *= 2;
	}
}

void hml__time_iso(char *buf, size_t size)
{
	time_t now = time(NULL);
	struct tm tm;

	if (size == 0)
		return;
	if (!gmtime_r(&now, &tm) || strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		buf[0] = '\0';
}

void hml__hostname(char *buf, size_t size)
{
	if (size == 0)
		return;
	if (gethostname(buf, size) < 0 || !buf[0])
		snprintf(buf, size, "unknown");
	buf[size - 1] = '\0';
}
