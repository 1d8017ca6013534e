/*
 * lib/core/read_file.c - bounded reads of regular files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/read_file.h"

/* "cannot read 'PATH': <strerror>": HML_ENOTFOUND for a missing file,
 * HML_ENOMEM, else HML_EIO; errno left as `err`. */
static int read_error(int err, const char *path)
{
	int code = err == ENOENT ? HML_ENOTFOUND : err == ENOMEM ? HML_ENOMEM : HML_EIO;

	hml__error_set(code, "cannot read '%s': %s", path, strerror(err));
	errno = err;
	return code;
}

int hml__read_file(const char *path, char **out, size_t *size)
{
	return hml__read_file_max(path, HML__READ_MAX, out, size);
}

/* Open for reading without blocking on a FIFO, and accept only a regular
 * file (procfs files are regular too): a FIFO, a device or a socket in
 * place of a file hml reads would block it or feed it without end. */
int hml__open_regular(const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return read_error(errno, path);
	if (fstat(fd, st) < 0) {
		int rc = read_error(errno, path);

		close(fd);
		return rc;
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		if (S_ISDIR(st->st_mode))
			return read_error(EISDIR, path);
		return hml__error_set(HML_EINVALID, "cannot read '%s': not a regular file", path);
	}
	/* Back to blocking reads: a regular file never blocks anyway. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

int hml__read_file_max(const char *path, size_t max, char **out, size_t *size)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	struct stat st;
	int fd, rc = 0;

	*out = NULL;
	if (size)
		*size = 0;
	if ((fd = hml__open_regular(path, &st)) < 0)
		return fd;
	if ((uint64_t)st.st_size > max) {
		rc = hml__error_set(HML_EINVALID, "cannot read '%s': it is larger than %zu bytes",
		                    path, max);
		goto done;
	}
	/* Read in one go; /proc files report size 0 and grow. */
	cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
	if (!(buf = malloc(cap))) {
		rc = hml__error_oom();
		goto done;
	}
	for (;;) {
		ssize_t n;

		if (len + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				rc = hml__error_oom();
				goto done;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = read_error(errno, path);
			goto done;
		}
		if (n == 0)
			break;
		if ((len += (size_t)n) > max) {
			rc = hml__error_set(HML_EINVALID, "cannot read '%s': it is larger than %zu bytes",
			                    path, max);
			goto done;
		}
	}
	buf[len] = '\0';
	*out = buf;
	buf = NULL;
	if (size)
		*size = len;

done:
	free(buf);
	close(fd);
	return rc;
}

const char *hml__read_file_reason(const char *msg, const char *path)
{
	size_t n = strlen(path);

	if (strncmp(msg, "cannot read '", 13) == 0 && strncmp(msg + 13, path, n) == 0 &&
	    strncmp(msg + 13 + n, "': ", 3) == 0)
		return msg + 13 + n + 3;
	return msg;
}
