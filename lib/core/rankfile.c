/*
 * lib/core/rankfile.c - the file each MPI rank collects into (rankfile.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/rankfile.h"
#include "core/util.h"

static const char *const rank_vars[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", NULL };
static const char *const size_vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", NULL };

/* The first of `vars` that is set, as a number in lo..hi into *out;
 * 0 when none is set (out untouched), 1 when one is, or the error. */
static int env_number(const char *const *vars, int64_t lo, int64_t hi, int *out,
                      const char *what)
{
	for (; *vars; vars++) {
		const char *s = getenv(*vars);
		int64_t v;

		if (!s)
			continue;
		if (hml__parse_i64(s, &v) < 0 || v < lo || v > hi)
			return hml__error_set(HML_EINVALID,
				"environment variable '%s' is not a %s: '%s'", *vars, what, s);
		*out = (int)v;
		return 1;
	}
	return 0;
}

int hml__rank_from_env(int *rank, int *size)
{
	const char *e;
	int r = -1, n = 0, rc;

	if ((rc = env_number(rank_vars, 0, HML__RANK_MAX, &r, "rank")) < 0 ||
	    (rc = env_number(size_vars, 1, (int64_t)HML__RANK_MAX + 1, &n, "size")) < 0)
		return rc;
	if (r >= 0 && n == 0 && (e = getenv(HML__SINGLETON_ENV)) &&
	    strcmp(e, HML__SINGLETON_VALUE) == 0)
		n = 1;   /* Open MPI's singleton: one process, no launcher */
	if (rank)
		*rank = r;
	if (size)
		*size = n;
	if (r >= 0 && n > 0 && r >= n)
		return hml__error_set(HML_EINVALID,
			"rank %d is not below the size %d (environment %s; %s)", r, n,
			HML__RANK_ENV_VARS, HML__SIZE_ENV_VARS);
	return r >= 0 && n != 1;
}

/* Where the extension of the last component starts (its end when none;
 * a leading dot, as in ".h5", is not an extension). */
static size_t ext_at(const char *path)
{
	const char *base = strrchr(path, '/');
	const char *dot;

	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	return dot && dot != base ? (size_t)(dot - path) : strlen(path);
}

int hml__rankfile_path(char **out, const char *path, int rank)
{
	size_t at, len;
	char *p;

	*out = NULL;
	if (!path || !*path)
		return hml__error_set(HML_EINVALID, "the data file path is empty");
	if (rank < 0 || rank > HML__RANK_MAX)
		return hml__error_set(HML_EINVALID, "rank %d is out of range 0..%d", rank,
		                      HML__RANK_MAX);
	at = ext_at(path);
	len = strlen(path) + 16;
	if (!(p = malloc(len)))
		return hml__error_oom();
	snprintf(p, len, "%.*s.r%04d%s", (int)at, path, rank, path + at);
	*out = p;
	return 0;
}

int hml__rankfile_own(char **out, const char *path)
{
	int rank, rc = hml__rank_from_env(&rank, NULL);

	*out = NULL;
	if (rc < 0)
		return rc;
	if (rc == 0)
		return (*out = hml__strdup(path)) ? 0 : hml__error_oom();
	return hml__rankfile_path(out, path, rank);
}

int hml__rankfile_parse(const char *path, const char *name)
{
	size_t at, nlen, digits;
	const char *d;
	long v;

	if (!path || !name || !*path)
		return -1;
	at = ext_at(path);
	nlen = strlen(name);
	if (strncmp(name, path, at) != 0 || strncmp(name + at, ".r", 2) != 0)
		return -1;
	d = name + at + 2;
	for (digits = 0; d[digits] >= '0' && d[digits] <= '9'; digits++)
		;
	/* Four digits, or more without a leading zero: one name per rank. */
	if (digits < 4 || digits > 7 || (digits > 4 && d[0] == '0'))
		return -1;
	if (strcmp(d + digits, path + at) != 0 || at + 2 + digits + strlen(path + at) != nlen)
		return -1;
	v = strtol(d, NULL, 10);
	return v <= HML__RANK_MAX ? (int)v : -1;
}
