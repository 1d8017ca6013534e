#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "core/util.h"

double hml__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double hml__thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int hml__thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

char *hml__strdup(const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d)
		hml__error_oom();
	return d;
}

int hml__parse_i64(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!s || !*s || isspace((unsigned char)*s))
		return HML_EINVALID;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end)
		return HML_EINVALID;
	*out = (int64_t)v;
	return 0;
}

int hml__threads_max(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return (int)(HML__THREADS_PER_CORE * (n > 0 ? (n < 4096 ? n : 4096) : 1));
}

int hml__parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s || isspace((unsigned char)*s))
		return HML_EINVALID;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end)
		return HML_EINVALID;
	*out = v;
	return 0;
}

void hml__format_shape(char *buf, size_t size, const int64_t *shape, int ndim)
{
	size_t len = 0;
	int d;

	if (size == 0)
		return;
	buf[0] = '\0';
	len += (size_t)snprintf(buf + len, size - len, "[");
	for (d = 0; d < ndim && len < size; d++)
		len += (size_t)snprintf(buf + len, size - len, "%s%lld",
		                        d ? ", " : "", (long long)shape[d]);
	if (len < size)
		snprintf(buf + len, size - len, "]");
}

size_t hml_dtype_size(hml_dtype dtype)
{
	switch (dtype) {
	case HML_F32: return sizeof(float);
	case HML_F64: return sizeof(double);
	case HML_I32: return sizeof(int32_t);
	case HML_I64: return sizeof(int64_t);
	default: return 0;
	}
}

const char *hml_dtype_name(hml_dtype dtype)
{
	switch (dtype) {
	case HML_F32: return "float32";
	case HML_F64: return "float64";
	case HML_I32: return "int32";
	case HML_I64: return "int64";
	default: return "unknown";
	}
}

void hml__convert(void *dst, hml_dtype dst_dtype, const void *src,
                  hml_dtype src_dtype, size_t n)
{
	size_t i;

	if (dst_dtype == src_dtype) {
		memcpy(dst, src, n * hml_dtype_size(dst_dtype));
	} else if (dst_dtype == HML_F32) {
		float *d = dst;
		const double *s = src;
		for (i = 0; i < n; i++)
			d[i] = (float)s[i];
	} else {
		double *d = dst;
		const float *s = src;
		for (i = 0; i < n; i++)
			d[i] = (double)s[i];
	}
}

void hml__strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

static const char *file_kind(mode_t m)
{
	return S_ISLNK(m) ? "a symbolic link" : S_ISDIR(m) ? "a directory"
	     : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
	     : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "of unknown type";
}

int hml__path_replaceable(const char *path)
{
	struct stat st;

	if (!path || !*path)
		return hml__error_set(HML_EINVALID, "cannot write a file without a name");
	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : hml__error_set(HML_EIO, "cannot write '%s': %s",
		                                            path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return hml__error_set(HML_EINVALID, "cannot write '%s': not a regular file (%s)",
		                      path, file_kind(st.st_mode));
	return 0;
}
