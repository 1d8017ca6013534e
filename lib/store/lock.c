/*
 * lib/store/lock.c - the experiment's lock (see lock.h).
 *
 * Its own file: the one part of the store that deals with other processes
 * (flock, polling, the interrupt, who holds the lock), apart from the
 * manifest and the records.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "core/beneath.h"
#include "core/error.h"
#include "core/util.h"
#include "store/lock.h"
#include "sys/interrupt.h"

#define LOCK_TIMEOUT_DEFAULT 60.0
#define LOCK_POLL_NS 50000000L

static int lock_timeout(double *out)
{
	const char *v = getenv("HML_LOCK_TIMEOUT");
	double t;

	*out = LOCK_TIMEOUT_DEFAULT;
	if (!v || !*v)
		return 0;
	if (hml__parse_double(v, &t) < 0 || !isfinite(t) || t < 0)
		return hml__error_set(HML_EINVALID,
		                      "invalid HML_LOCK_TIMEOUT '%s' (expected a number of seconds >= 0)", v);
	*out = t;
	return 0;
}

/* " (pid 1234, 'hml train')" from the lock file, or "" when it is empty. */
static void lock_holder(int fd, char *buf, size_t size)
{
	char text[160];
	ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
	char *end;
	long pid;

	buf[0] = '\0';
	if (n <= 0)
		return;
	text[n] = '\0';
	text[strcspn(text, "\n")] = '\0';
	pid = strtol(text, &end, 10);
	if (end == text || pid <= 0)
		return;
	while (*end == ' ')
		end++;
	if (*end)
		snprintf(buf, size, " (pid %ld, '%s')", pid, end);
	else
		snprintf(buf, size, " (pid %ld)", pid);
}

int hml__lock_take(int *out, const char *path, const char *dir, const char *command)
{
	double timeout, start;
	char holder[200], text[160];
	int fd = -1, rc, n;

	*out = -1;
	if ((rc = lock_timeout(&timeout)) < 0)
		return rc;
	/* Never through a link: the lock file is truncated below. */
	if ((fd = hml__beneath_open(dir, path, O_RDWR | O_CREAT, 0666)) < 0)
		return fd != HML_EIO ? fd : hml__error_set(HML_EIO, "cannot lock experiment '%s': %s",
		                                           dir, strerror(errno));
	start = hml__now();
	for (;;) {
		struct timespec ts = { 0, LOCK_POLL_NS };

		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK) {
			rc = hml__error_set(HML_EIO, "cannot lock experiment '%s': %s", dir,
			                    strerror(errno));
			goto fail;
		}
		if (hml__interrupt_pending()) {
			rc = hml__error_set(HML_ERROR, "interrupted while waiting for the lock of experiment '%s'",
			                    dir);
			goto fail;
		}
		if (hml__now() - start >= timeout) {
			lock_holder(fd, holder, sizeof(holder));
			rc = hml__error_set(HML_ELOCKED,
			                    "experiment '%s' is locked by another hml process%s; waited %g s",
			                    dir, holder, timeout);
			goto fail;
		}
		nanosleep(&ts, NULL);
	}
	/* Informational only: a failure to write it does not matter. */
	n = snprintf(text, sizeof(text), "%ld %s\n", (long)getpid(), command);
	if (ftruncate(fd, 0) == 0 && n > 0)
		(void)!pwrite(fd, text, (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1, 0);
	*out = fd;
	return 0;

fail:
	close(fd);
	return rc;
}

void hml__lock_release(int fd)
{
	if (fd < 0)
		return;
	(void)!ftruncate(fd, 0);
	close(fd);
}
