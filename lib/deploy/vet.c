/*
 * lib/deploy/vet.c - a model loaded first in a child under limits (vet.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "core/error.h"
#include "core/util.h"
#include "deploy/vet.h"
#include "sys/proc.h"

extern char **environ;

static int env_positive(const char *name, uint64_t *out)
{
	const char *v = getenv(name);
	int64_t n;

	if (!v || !*v)
		return 0;
	if (hml__parse_i64(v, &n) < 0 || n <= 0 || n > ((int64_t)1 << 40))
		return hml__error_set(HML_EINVALID, "%s must be a positive integer, not '%s'", name, v);
	*out = (uint64_t)n;
	return 0;
}

int hml__vet_limits(uint64_t file_bytes, double *limit_s, uint64_t *memory_mib)
{
	uint64_t t = HML__VET_TIMEOUT_S, m = HML__VET_MEMORY_MIB + 4 * (file_bytes >> 20) + 4;
	int rc;

	if ((rc = env_positive(HML__ENV_MODEL_LOAD_TIMEOUT, &t)) < 0 ||
	    (rc = env_positive(HML__ENV_MODEL_LOAD_MEMORY, &m)) < 0)
		return rc;
	*limit_s = (double)t;
	*memory_mib = m;
	return 0;
}

/* The limits a child ran under, for messages. */
static const char *limits_said(double limit_s, uint64_t mib)
{
	static _Thread_local char buf[160];

	snprintf(buf, sizeof(buf), "limits: %llu MiB beyond libtorch's own, %s; %.0f s, %s",
	         (unsigned long long)mib, HML__ENV_MODEL_LOAD_MEMORY, limit_s,
	         HML__ENV_MODEL_LOAD_TIMEOUT);
	return buf;
}

char *hml__vet_report_write(int rc, const char *message)
{
	json_t *j = rc == 0 ? json_pack("{s:b}", "ok", 1)
	                    : json_pack("{s:b, s:i, s:s}", "ok", 0, "code", rc, "message",
	                                message ? message : "");
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;

	json_decref(j);
	return text;
}

int hml__vet_report_read(const char *text, const char *path)
{
	json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, NULL), *ok;
	const char *msg;
	json_int_t code;
	int rc;

	ok = json_object_get(j, "ok");
	msg = json_string_value(json_object_get(j, "message"));
	code = json_integer_value(json_object_get(j, "code"));
	if (!json_is_boolean(ok) || (!json_is_true(ok) && (!msg || code >= 0)))
		rc = hml__error_set(HML_EINVALID, "cannot open model '%s': the model check's report "
		                    "is not one", path);
	else if (json_is_true(ok))
		rc = 0;
	else
		/* The file's fault is invalid input; a missing file or backend,
		 * or a build without libtorch, keeps its own code. */
		rc = hml__error_set(code == HML_ENOTFOUND || code == HML_ENOTSUPPORTED ||
		                    code == HML_EIO ? (int)code : HML_EINVALID, "%s", msg);
	json_decref(j);
	return rc;
}

/* What the child said on the pipe, when it exited. */
static int child_report(int fd, const char *path, const hml__proc_result *res,
                        double limit_s, uint64_t mib)
{
	char buf[8192];
	ssize_t n;

	do
		n = read(fd, buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	buf[n > 0 ? n : 0] = 0;
	if (n <= 0)
		return hml__error_set(HML_EINVALID, "cannot open model '%s': libtorch's loader ended "
		                      "(%s) without a report (%s)", path, hml__proc_describe(res),
		                      limits_said(limit_s, mib));
	return hml__vet_report_read(buf, path);
}

static int run_check(const char *exe, const char *path, double limit_s, uint64_t mib, int fd,
                     hml__proc_result *res)
{
	char mem[32], out[32];
	const char *argv[] = { exe, "model-check", "--memory", mem, "--", path, NULL };
	int rc;

	snprintf(mem, sizeof(mem), "%llu", (unsigned long long)mib);
	snprintf(out, sizeof(out), "/dev/fd/%d", fd);
	if ((rc = hml__proc_run_env(argv, (const char *const *)environ, out, "/dev/null", limit_s,
	                            res)) < 0)
		return rc;
	if (res->interrupted)
		return hml__error_set(HML_ERROR, "interrupted while model '%s' was loading", path);
	if (res->timed_out)
		return hml__error_set(HML_EINVALID, "cannot open model '%s': loading it took longer "
		                      "than %.0f s (%s)", path, limit_s, HML__ENV_MODEL_LOAD_TIMEOUT);
	if (!res->exited)
		return hml__error_set(HML_EINVALID, "cannot open model '%s': libtorch's loader was "
		                      "%s while reading it (%s)", path, hml__proc_describe(res),
		                      limits_said(limit_s, mib));
	return 0;
}

int hml__vet_model(const char *exe, const char *path)
{
	hml__proc_result res;
	struct stat st;
	double limit_s;
	uint64_t mib;
	int p[2], rc;

	if (stat(path, &st) != 0)
		st.st_size = 0;   /* the child says what is wrong */
	if ((rc = hml__vet_limits((uint64_t)st.st_size, &limit_s, &mib)) < 0)
		return rc;
	if (pipe(p) != 0)
		return hml__error_set(HML_EIO, "cannot check model '%s': %s", path, strerror(errno));
	fcntl(p[0], F_SETFD, FD_CLOEXEC);
	fcntl(p[1], F_SETFD, FD_CLOEXEC);
	memset(&res, 0, sizeof(res));
	rc = run_check(exe, path, limit_s, mib, p[1], &res);
	close(p[1]);
	/* The child has exited: what it wrote is in the pipe, or nothing is. */
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	if (rc == 0)
		rc = child_report(p[0], path, &res, limit_s, mib);
	close(p[0]);
	return rc;
}
