/*
 * runtime/loader/modelfile.c - how every model file is opened (loader.h,
 * hml__model_file_open): by the TorchScript loader (model.c), the
 * compiled-model loader and its sniff (cmodel.c), and hml import.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "loader/loader.h"

/* Opened without blocking (a FIFO would block an open for reading, and
 * the backend's reads, forever) and checked on the open descriptor, so
 * nothing can be swapped in between the check and the open. */
int hml__model_file_open(const char *path, const char *what, struct stat *st)
{
	int fd, rc = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return hml__error_set(HML_ENOTFOUND, "cannot open %s '%s': no such file", what,
			                      path);
		return hml__error_set(HML_EIO, "cannot open %s '%s': %s", what, path, strerror(errno));
	}
	if (fstat(fd, st) != 0)
		rc = hml__error_set(HML_EIO, "cannot open %s '%s': %s", what, path, strerror(errno));
	else if (S_ISDIR(st->st_mode))
		rc = hml__error_set(HML_EIO, "cannot open %s '%s': is a directory", what, path);
	else if (!S_ISREG(st->st_mode))
		rc = hml__error_set(HML_EINVALID, "cannot open %s '%s': not a regular file", what,
		                    path);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	/* Back to blocking reads: a regular file never blocks anyway. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}
