/*
 * lib/search/history.c - the trial history file of hml search
 * (search/<id>/trials.jsonl, see history.h): appended to with its lines
 * made durable in the background, and read back. A line's JSON is
 * history_line.c's, the "searches" record history_record.c's
 * (history_private.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/beneath.h"
#include "core/error.h"
#include "core/util.h"
#include "search/history_private.h"
#include "sys/fsutil.h"

struct hml__history {
	int fd;
	char *path;
	/* Lines written and made durable, counted from 1 since open; a thread
	 * (started by the first hml__history_write) syncs in the background
	 * and says so on the pipe. */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	int thread_on, stop, sync_errno;
	uint64_t written, synced;
	int pipe[2];
};

/* Cut a torn last line (a writer killed mid-line) so the next line starts clean. */
static int cut_torn_tail(int fd)
{
	struct stat st;
	off_t end, pos;
	char buf[4096];

	if (fstat(fd, &st) < 0)
		return -1;
	end = st.st_size;
	pos = end;
	while (pos > 0) {
		size_t n = pos >= (off_t)sizeof(buf) ? sizeof(buf) : (size_t)pos;
		ssize_t got = pread(fd, buf, n, pos - (off_t)n);

		if (got != (ssize_t)n)
			return -1;
		for (size_t i = n; i-- > 0;)
			if (buf[i] == '\n') {
				off_t keep = pos - (off_t)n + (off_t)i + 1;

				return keep == end ? 0 : ftruncate(fd, keep);
			}
		pos -= (off_t)n;
	}
	return end ? ftruncate(fd, 0) : 0;
}

int hml__history_open(hml__history **out, const char *root, const char *path)
{
	hml__history *h = calloc(1, sizeof(*h));

	*out = NULL;
	if (!h || !(h->path = hml__strdup(path))) {
		free(h);
		return hml__error_oom();
	}
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->cv, NULL);
	h->fd = h->pipe[0] = h->pipe[1] = -1;
	if (pipe(h->pipe) < 0 || fcntl(h->pipe[0], F_SETFL, O_NONBLOCK) < 0 ||
	    fcntl(h->pipe[1], F_SETFL, O_NONBLOCK) < 0 || fcntl(h->pipe[0], F_SETFD, FD_CLOEXEC) < 0 ||
	    fcntl(h->pipe[1], F_SETFD, FD_CLOEXEC) < 0) {
		int rc = hml__error_set(HML_EIO, "cannot open trial history '%s': %s", path,
		                        strerror(errno));

		hml__history_close(h);
		return rc;
	}
	h->fd = hml__beneath_open(root, path, O_RDWR | O_APPEND | O_CREAT, 0666);
	if (h->fd < 0 || cut_torn_tail(h->fd) < 0) {
		int rc = h->fd < 0 && h->fd != HML_EIO
		         ? h->fd
		         : hml__error_set(HML_EIO, "cannot open trial history '%s': %s", path,
		                          strerror(errno));

		hml__history_close(h);
		return rc;
	}
	*out = h;
	return 0;
}

void hml__history_close(hml__history *h)
{
	if (!h)
		return;
	if (h->thread_on) {
		pthread_mutex_lock(&h->mu);
		h->stop = 1;
		pthread_cond_signal(&h->cv);
		pthread_mutex_unlock(&h->mu);
		pthread_join(h->thread, NULL);
	}
	if (h->fd >= 0 && h->written > h->synced)
		(void)fdatasync(h->fd);
	if (h->fd >= 0)
		close(h->fd);
	for (int i = 0; i < 2; i++)
		if (h->pipe[i] >= 0)
			close(h->pipe[i]);
	pthread_cond_destroy(&h->cv);
	pthread_mutex_destroy(&h->mu);
	free(h->path);
	free(h);
}

/* The sync thread: fdatasync() whatever was written since the last sync,
 * then one byte on the pipe. One sync covers every line written before it. */
static void *sync_thread(void *arg)
{
	hml__history *h = arg;

	pthread_mutex_lock(&h->mu);
	for (;;) {
		uint64_t upto;
		int rc;

		while (!h->stop && h->written == h->synced)
			pthread_cond_wait(&h->cv, &h->mu);
		if (h->written == h->synced)
			break;   /* stopping, and nothing is left */
		upto = h->written;
		pthread_mutex_unlock(&h->mu);
		rc = fdatasync(h->fd);
		pthread_mutex_lock(&h->mu);
		if (rc < 0 && !h->sync_errno)
			h->sync_errno = errno;
		if (upto > h->synced)
			h->synced = upto;
		(void)!write(h->pipe[1], "s", 1);   /* full pipe: a wake-up is pending anyway */
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

static int start_thread(hml__history *h)
{
	/* Signals go to the coordinator's thread, not to this one. */
	int rc = hml__thread_start(&h->thread, sync_thread, h);

	if (rc != 0)
		return hml__error_set(HML_ERROR, "cannot start the trial history's sync thread: %s",
		                      strerror(rc));
	h->thread_on = 1;
	return 0;
}

/* Write ev as one line (one write(2) on the O_APPEND descriptor); *seq:
 * its number. */
static int write_line(hml__history *h, const hml__hist_event *ev, uint64_t *seq)
{
	json_t *o;
	char *line;
	size_t len;
	ssize_t n;

	if (!hml__hist_status_name(ev->status))
		return hml__error_set(HML_EINVALID, "trial %ld: status %d is not valid", ev->trial,
		                      (int)ev->status);
	if (!(o = hml__hist_event_json(ev)))
		return hml__error_oom();
	/* Doubles keep all 17 digits, so "u" reads back bit for bit. */
	line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
	json_decref(o);
	if (!line)
		return hml__error_oom();
	len = strlen(line);
	line[len] = '\n';   /* json_dumps's NUL becomes the newline: one write */
	n = write(h->fd, line, len + 1);
	free(line);
	if (n != (ssize_t)(len + 1))
		return hml__error_set(HML_EIO, "cannot write trial history '%s': %s", h->path,
		                      n < 0 ? strerror(errno) : "short write");
	pthread_mutex_lock(&h->mu);
	*seq = ++h->written;
	pthread_mutex_unlock(&h->mu);
	return 0;
}

/* Sync now, in this thread: lines 1 .. upto (and any after) are durable. */
static int sync_upto(hml__history *h, uint64_t upto)
{
	if (fdatasync(h->fd) < 0)
		return hml__error_set(HML_EIO, "cannot write trial history '%s': %s", h->path,
		                      strerror(errno));
	pthread_mutex_lock(&h->mu);
	if (upto > h->synced)
		h->synced = upto;
	pthread_mutex_unlock(&h->mu);
	return 0;
}

int hml__history_append(hml__history *h, const hml__hist_event *ev)
{
	uint64_t seq;
	int rc = write_line(h, ev, &seq);

	return rc < 0 ? rc : sync_upto(h, seq);
}

int hml__history_write(hml__history *h, const hml__hist_event *ev, uint64_t *seq)
{
	int rc;

	if (!h->thread_on && (rc = start_thread(h)) < 0)
		return rc;
	if ((rc = write_line(h, ev, seq)) < 0)
		return rc;
	pthread_mutex_lock(&h->mu);
	pthread_cond_signal(&h->cv);
	pthread_mutex_unlock(&h->mu);
	return 0;
}

int hml__history_sync_fd(const hml__history *h)
{
	return h->pipe[0];
}

int hml__history_durable(hml__history *h, uint64_t *seq)
{
	char buf[64];
	int err;

	while (read(h->pipe[0], buf, sizeof(buf)) > 0)
		;
	pthread_mutex_lock(&h->mu);
	*seq = h->synced;
	err = h->sync_errno;
	pthread_mutex_unlock(&h->mu);
	if (err)
		return hml__error_set(HML_EIO, "cannot write trial history '%s': %s", h->path,
		                      strerror(err));
	return 0;
}

int hml__history_flush(hml__history *h, uint64_t *seq)
{
	uint64_t upto;
	int rc;

	pthread_mutex_lock(&h->mu);
	upto = h->written;
	pthread_mutex_unlock(&h->mu);
	if ((rc = sync_upto(h, upto)) < 0)
		return rc;
	return hml__history_durable(h, seq);
}

static int bad_line(const char *path, size_t line, const char *why)
{
	return hml__error_set(HML_EINVALID, "trial history '%s' line %zu: %s", path, line, why);
}

int hml__history_read(const char *path, int (*fn)(const hml__hist_event *ev, void *payload),
                      void *payload, int *torn)
{
	char *text = NULL, *p, *nl;
	size_t len = 0, line = 0;
	int rc;

	if (torn)
		*torn = 0;
	if (access(path, F_OK) < 0 && errno == ENOENT)
		return 0;
	if ((rc = hml__read_file(path, &text, &len)) < 0)
		return rc;
	for (p = text; p < text + len && rc == 0; p = nl + 1) {
		json_error_t je;
		json_t *o;
		hml__hist_event ev;
		double *u = NULL;
		const char *why;
		char whybuf[256];

		line++;
		if (!(nl = memchr(p, '\n', (size_t)(text + len - p)))) {
			if (torn)
				*torn = 1;   /* killed mid-line: never completed */
			break;
		}
		if (!(o = json_loadb(p, (size_t)(nl - p), 0, &je))) {
			rc = bad_line(path, line, je.text);
			break;
		}
		if (!json_is_object(o))
			rc = bad_line(path, line, "not a JSON object");
		else if ((why = hml__hist_event_of(&ev, o, &u, whybuf, sizeof(whybuf))) != NULL)
			rc = bad_line(path, line, why);
		else if ((rc = fn(&ev, payload)) < 0 && hml_error_last()->code == HML_EINVALID) {
			hml__error_saved saved;   /* the file and the line named */

			hml__error_save(&saved);
			rc = bad_line(path, line, saved.message);
		}
		free(u);
		json_decref(o);
	}
	free(text);
	return rc;
}
