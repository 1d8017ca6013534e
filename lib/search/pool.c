/*
 * lib/search/pool.c - the workers of hml search over processes and MPI
 * ranks (see pool.h).
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/util.h"
#include "search/pool.h"
#include "search/workers.h"

struct hml__pool {
	int n;
	hml__worker *wk;
	struct pollfd *pf;           /* n + 1 */
	char *exe, *log_dir;         /* processes */
	int *to, *from;              /* ranks: pipes not yet handed to a worker (-1 once) */
};

static int pool_alloc(hml__pool **out, int n)
{
	hml__pool *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (!p || !(p->wk = calloc((size_t)n, sizeof(*p->wk))) ||
	    !(p->pf = calloc((size_t)n + 1, sizeof(*p->pf)))) {
		hml__pool_free(p);
		return hml__error_oom();
	}
	p->n = n;
	for (int k = 0; k < n; k++) {
		p->wk[k].index = k;
		p->wk[k].to = -1;
		p->wk[k].trial = -1;
		hml__wire_reader_init(&p->wk[k].from, -1);
	}
	*out = p;
	return 0;
}

int hml__pool_new(hml__pool **out, int n, const char *exe, const char *log_dir)
{
	int rc = pool_alloc(out, n);

	if (rc == 0 && (!((*out)->exe = hml__strdup(exe)) ||
	                !((*out)->log_dir = hml__strdup(log_dir)))) {
		hml__pool_free(*out);
		*out = NULL;
		rc = hml__error_oom();
	}
	return rc;
}

int hml__pool_new_ranks(hml__pool **out, int n, int *to, int *from)
{
	int rc = pool_alloc(out, n);

	if (rc < 0) {
		for (int k = 0; k < n; k++) {
			if (to[k] >= 0)
				close(to[k]);
			if (from[k] >= 0)
				close(from[k]);
		}
		free(to);
		free(from);
		return rc;
	}
	(*out)->to = to;
	(*out)->from = from;
	return 0;
}

static int pool_start(void *pool, int k)
{
	hml__pool *p = pool;
	char log[4200];
	const char *argv[3];

	if (k < 0 || k >= p->n)
		return 1;
	if (p->to) {
		if (p->to[k] < 0)
			return 1;   /* a rank given up is not replaced */
		hml__worker_remote(&p->wk[k], k, k + 1, p->to[k], p->from[k]);
		p->to[k] = p->from[k] = -1;   /* the worker owns them now */
		return 0;
	}
	argv[0] = p->exe;
	argv[1] = "search-worker";
	argv[2] = NULL;
	snprintf(log, sizeof(log), "%s/worker-%d.log", p->log_dir, k);
	return hml__worker_spawn(&p->wk[k], k, argv, log);
}

static int pool_send(void *pool, int k, const json_t *msg)
{
	hml__pool *p = pool;

	return hml__wire_send(p->wk[k].to, msg);
}

/* What worker k sent (poll said its pipe is readable or closed): each
 * whole line, then its loss when the pipe ended. The reader is left
 * alone once its buffer is empty: another read could block. */
static int input(hml__pool *p, int k, hml__pool_event_fn fn, void *payload)
{
	hml__worker *w = &p->wk[k];
	hml__pool_event ev = { k, HML__POOL_MESSAGE, NULL, NULL };
	json_t *msg = NULL;
	int rc;

	while ((rc = hml__wire_recv(&w->from, &msg)) == 1) {
		ev.msg = msg;
		rc = fn(payload, &ev);
		json_decref(msg);
		if (rc != 0 || w->from.len == 0)
			return rc;
	}
	if (rc == 0)
		return 0;
	ev.kind = HML__POOL_LOST;
	ev.msg = NULL;
	ev.detail = rc == HML_EIO ? NULL : hml_error_last()->message;
	return fn(payload, &ev);
}

static int pool_wait(void *pool, double timeout_s, int wake, hml__pool_event_fn fn,
                     void *payload)
{
	hml__pool *p = pool;
	int rc;

	for (int k = 0; k < p->n; k++)
		p->pf[k] = (struct pollfd){ p->wk[k].pid > 0 ? p->wk[k].from.fd : -1, POLLIN, 0 };
	p->pf[p->n] = (struct pollfd){ wake, POLLIN, 0 };
	if (poll(p->pf, (nfds_t)p->n + 1, (int)lround(timeout_s * 1e3)) < 0 && errno != EINTR)
		return hml__error_set(HML_EIO, "poll: %s", strerror(errno));
	for (int k = 0; k < p->n; k++)
		if (p->pf[k].fd >= 0 && (p->pf[k].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    (rc = input(p, k, fn, payload)) != 0)
			return rc;
	return 0;
}

static void pool_stop(void *pool, int k, char *why, size_t size)
{
	hml__pool *p = pool;

	if (k >= 0 && k < p->n)
		hml__worker_stop(&p->wk[k], 1, why, size);
	else if (why && size)
		why[0] = '\0';
}

const hml__pool_ops hml__pool_workers = { pool_start, pool_send, pool_wait, pool_stop };

void hml__pool_free(hml__pool *p)
{
	if (!p)
		return;
	for (int k = 0; p->wk && k < p->n; k++) {
		hml__worker_stop(&p->wk[k], 1, NULL, 0);
		if (p->to && p->to[k] >= 0)
			close(p->to[k]);
		if (p->from && p->from[k] >= 0)
			close(p->from[k]);
	}
	free(p->to);
	free(p->from);
	free(p->wk);
	free(p->pf);
	free(p->exe);
	free(p->log_dir);
	free(p);
}
