/*
 * runtime/src/log.c - the log handler and hml__log() (see log.h).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "log.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;  /* log_fn */
static hml_log_fn log_fn;
static void *log_payload;

static void default_log(hml_log_level level, const char *message, void *payload)
{
	(void)payload;
	if (level == HML_LOG_WARNING)
		fprintf(stderr, "hml: warning: %s\n", message);
	else
		fprintf(stderr, "hml: %s\n", message);
}

void hml_set_log_handler(hml_log_fn fn, void *payload)
{
	pthread_mutex_lock(&log_lock);
	log_fn = fn;
	log_payload = payload;
	pthread_mutex_unlock(&log_lock);
}

void hml__log(hml_log_level level, const char *fmt, ...)
{
	char buf[1024];
	hml_log_fn fn;
	void *payload;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&log_lock);
	fn = log_fn ? log_fn : default_log;
	payload = log_payload;
	pthread_mutex_unlock(&log_lock);
	fn(level, buf, payload);
}
