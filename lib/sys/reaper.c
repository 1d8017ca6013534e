/*
 * lib/sys/reaper.c - delete files in the background (see reaper.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/util.h"
#include "sys/reaper.h"

typedef struct reap_item {
	struct reap_item *next;
	char path[];
} reap_item;

struct hml__reaper {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	int thread_on, stop;
	reap_item *head, **tail;
	size_t failed;
};

int hml__reaper_open(hml__reaper **out)
{
	hml__reaper *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (!r)
		return hml__error_oom();
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	r->tail = &r->head;
	*out = r;
	return 0;
}

/* 1 when `path` exists and could not be deleted. */
static int reap(const char *path)
{
	return unlink(path) < 0 && errno != ENOENT;
}

/* The thread: unlink the queue's head until told to stop with it empty. */
static void *reaper_thread(void *arg)
{
	hml__reaper *r = arg;

	pthread_mutex_lock(&r->mu);
	for (;;) {
		reap_item *it;
		int failed;

		while (!r->stop && !r->head)
			pthread_cond_wait(&r->cv, &r->mu);
		if (!(it = r->head))
			break;   /* stopping, and nothing is left */
		if (!(r->head = it->next))
			r->tail = &r->head;
		pthread_mutex_unlock(&r->mu);
		failed = reap(it->path);
		free(it);
		pthread_mutex_lock(&r->mu);
		r->failed += (size_t)failed;
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

static int start_thread(hml__reaper *r)
{
	/* Signals go to the caller's thread, not to this one. */
	int rc = hml__thread_start(&r->thread, reaper_thread, r);

	r->thread_on = rc == 0;
	return rc;
}

void hml__reaper_add(hml__reaper *r, const char *path)
{
	size_t n = strlen(path) + 1;
	reap_item *it;

	if ((!r->thread_on && start_thread(r) != 0) || !(it = malloc(sizeof(*it) + n))) {
		int failed = reap(path);

		pthread_mutex_lock(&r->mu);
		r->failed += (size_t)failed;
		pthread_mutex_unlock(&r->mu);
		return;
	}
	memcpy(it->path, path, n);
	it->next = NULL;
	pthread_mutex_lock(&r->mu);
	*r->tail = it;
	r->tail = &it->next;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

size_t hml__reaper_close(hml__reaper *r)
{
	size_t failed;

	if (!r)
		return 0;
	if (r->thread_on) {
		pthread_mutex_lock(&r->mu);
		r->stop = 1;
		pthread_cond_signal(&r->cv);
		pthread_mutex_unlock(&r->mu);
		pthread_join(r->thread, NULL);
	}
	failed = r->failed;
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
	free(r);
	return failed;
}
