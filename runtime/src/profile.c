/*
 * runtime/src/profile.c - the registry of regions and the profile at exit
 * (see profile.h).
 */
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/profile_file.h"
#include "core/rankfile.h"
#include "core/util.h"
#include "log.h"
#include "profile.h"

typedef struct record {
	hml_region *live;        /* NULL once the region was freed */
	const hml__registry_hooks *hooks;
	char label[72];
	hml_mode mode;
	int threads;             /* the threads its model is given */
	char guard[48];          /* its guard's spec, "" for none */
	char *dest;              /* HML_PROFILE destination, NULL: none */
	hml_region_stats stats;  /* final stats of a freed region */
	hml__profile_swaps swaps; /* its hot swaps, likewise */
} record;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;      /* records */
static record *records;
static size_t nrecords, caprecords;
static int atexit_installed;
static void (*exit_first)(void);  /* hml__registry_exit_first() */

static void print_table(const record *recs, size_t n)
{
	size_t i;

	hml__log(HML_LOG_INFO, "profile: %-16s %-10s %8s %8s %8s %8s %10s %10s %10s %10s %10s %10s",
	         "region", "mode", "calls", "original", "model", "shadow",
	         "region_s", "gather_s", "forward_s", "scatter_s", "original_s", "write_s");
	for (i = 0; i < n; i++) {
		const hml_region_stats *s = &recs[i].stats;
		hml__log(HML_LOG_INFO,
		         "profile: %-16s %-10s %8llu %8llu %8llu %8llu %10.4f %10.4f %10.4f %10.4f %10.4f %10.4f",
		         recs[i].label, hml_mode_name(recs[i].mode),
		         (unsigned long long)s->calls, (unsigned long long)s->original_calls,
		         (unsigned long long)s->model_calls, (unsigned long long)s->shadow_calls,
		         s->region_s, s->gather_s, s->forward_s, s->scatter_s,
		         s->original_s, s->write_s);
		if (s->fallback_calls)
			hml__log(HML_LOG_INFO, "profile: %-16s %llu calls fell back to the original code",
			         recs[i].label, (unsigned long long)s->fallback_calls);
		if (s->nonfinite_calls)
			hml__log(HML_LOG_INFO, "profile: %-16s %llu calls had non-finite model outputs",
			         recs[i].label, (unsigned long long)s->nonfinite_calls);
		if (recs[i].guard[0])
			hml__log(HML_LOG_INFO, "profile: %-16s guard %s: %llu of %llu rows guarded in "
			         "%llu calls (%llu whole calls), %.4f s", recs[i].label, recs[i].guard,
			         (unsigned long long)s->guarded_rows, (unsigned long long)s->checked_rows,
			         (unsigned long long)s->guarded_calls,
			         (unsigned long long)s->guard_whole_calls, s->guard_s);
		if (s->agreed_calls)
			hml__log(HML_LOG_INFO, "profile: %-16s %llu calls ran the original code "
			         "because another process did", recs[i].label,
			         (unsigned long long)s->agreed_calls);
		if (s->shadow_calls)
			hml__log(HML_LOG_INFO, "profile: %-16s shadow rmse %.6g, max abs error %.6g",
			         recs[i].label, s->shadow_rmse, s->shadow_max_abs);
		for (size_t k = 0; k < recs[i].swaps.n; k++)
			hml__log(HML_LOG_INFO, "profile: %-16s swapped model '%s' for '%s' after %llu calls",
			         recs[i].label, recs[i].swaps.at[k].from, recs[i].swaps.at[k].to,
			         (unsigned long long)recs[i].swaps.at[k].call);
		if (recs[i].swaps.refused)
			hml__log(HML_LOG_INFO, "profile: %-16s %llu deployments refused",
			         recs[i].label, (unsigned long long)recs[i].swaps.refused);
	}
}

/* The process's threads' CPU and CPU-wait seconds (lib/core/profile_file.h
 * "cpu"), from Linux's /proc/self/task/TID/schedstat ("run_ns wait_ns
 * slices"); NaN where there is none. */
static hml__profile_cpu process_cpu(void)
{
	hml__profile_cpu c = { NAN, NAN, 1 };
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	double run = 0, wait = 0;
	int any = 0;

	while (d && (e = readdir(d)) != NULL) {
		char path[64];
		unsigned long long r, w;
		FILE *f;

		if (e->d_name[0] == '.' ||
		    (size_t)snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat",
		                     e->d_name) >= sizeof(path) || !(f = fopen(path, "r")))
			continue;
		if (fscanf(f, "%llu %llu", &r, &w) == 2) {
			run += 1e-9 * (double)r;
			wait += 1e-9 * (double)w;
			any = 1;
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	if (any)
		c = (hml__profile_cpu){ run, wait, 1 };
	return c;
}

/* The profile file (lib/core/profile_file.h) of the selected records. */
static int write_json(const char *path, const record *recs, size_t n,
                      const hml__profile_cpu *cpu)
{
	hml__profile_record *out = calloc(n ? n : 1, sizeof(*out));
	char *own = NULL;
	int rc;

	if (!out)
		return hml__error_oom();
	/* One of several MPI ranks writes its rank's file (core/rankfile.h). */
	if ((rc = hml__rankfile_own(&own, path)) < 0) {
		free(out);
		return rc;
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(out[i].label, sizeof(out[i].label), "%s", recs[i].label);
		snprintf(out[i].mode, sizeof(out[i].mode), "%s", hml_mode_name(recs[i].mode));
		out[i].stats = recs[i].stats;
		out[i].threads = recs[i].threads;
		snprintf(out[i].guard, sizeof(out[i].guard), "%s", recs[i].guard);
		out[i].swaps = recs[i].swaps;
	}
	rc = hml__profile_file_write(own, out, n, cpu);
	free(own);
	free(out);
	return rc;
}

static void at_exit(void)
{
	static int done;
	void (*first)(void);
	hml__profile_cpu cpu;
	record *sel;
	size_t i, j, n;

	pthread_mutex_lock(&lock);
	/* Installed again after HDF5's handler (hml__registry_exit_hook), the
	 * handler runs twice: the first run, before HDF5's, does the work. */
	if (done)
		goto done;
	done = 1;
	first = exit_first;
	pthread_mutex_unlock(&lock);
	if (first)
		first();
	pthread_mutex_lock(&lock);
	for (i = 0; i < nrecords; i++) {
		if (!records[i].live)
			continue;
		if (records[i].hooks->flush(records[i].live) < 0)
			hml__log(HML_LOG_WARNING, "region '%s': collected data lost at exit: %s",
			         records[i].label, hml_error_last()->message);
		records[i].hooks->stats(records[i].live, &records[i].stats);
		records[i].hooks->swaps(records[i].live, &records[i].swaps);
	}
	sel = malloc((nrecords ? nrecords : 1) * sizeof(*sel));
	if (!sel)
		goto done;
	cpu = process_cpu();
	/* One table for all regions asking for "1"; one JSON file per path. */
	for (n = 0, i = 0; i < nrecords; i++)
		if (records[i].dest && strcmp(records[i].dest, "1") == 0)
			sel[n++] = records[i];
	if (n)
		print_table(sel, n);
	for (i = 0; i < nrecords; i++) {
		const char *dest = records[i].dest;
		int seen = 0;
		if (!dest || strcmp(dest, "1") == 0)
			continue;
		for (j = 0; j < i; j++)
			if (records[j].dest && strcmp(records[j].dest, dest) == 0)
				seen = 1;
		if (seen)
			continue;
		for (n = 0, j = i; j < nrecords; j++)
			if (records[j].dest && strcmp(records[j].dest, dest) == 0)
				sel[n++] = records[j];
		if (write_json(dest, sel, n, &cpu) < 0)
			hml__log(HML_LOG_WARNING, "%s", hml_error_last()->message);
	}
	free(sel);
done:
	pthread_mutex_unlock(&lock);
}

int hml__registry_add(hml_region *r, const char *label, hml_mode mode, int threads,
                      const char *dest, const hml__registry_hooks *hooks)
{
	record *rec;
	int rc = 0;

	pthread_mutex_lock(&lock);
	if (!atexit_installed) {
		if (atexit(at_exit) != 0) {
			rc = hml__error_set(HML_ERROR, "cannot install the exit handler");
			goto done;
		}
		atexit_installed = 1;
	}
	if (nrecords == caprecords) {
		size_t cap = caprecords ? 2 * caprecords : 8;
		record *grown = realloc(records, cap * sizeof(*grown));
		if (!grown) {
			rc = hml__error_oom();
			goto done;
		}
		records = grown;
		caprecords = cap;
	}
	rec = &records[nrecords];
	memset(rec, 0, sizeof(*rec));
	rec->live = r;
	rec->hooks = hooks;
	snprintf(rec->label, sizeof(rec->label), "%s", label);
	rec->mode = mode;
	rec->threads = threads;
	if (dest && !(rec->dest = strdup(dest))) {
		rc = hml__error_oom();
		goto done;
	}
	nrecords++;
done:
	pthread_mutex_unlock(&lock);
	return rc;
}

void hml__registry_guard(hml_region *r, const char *spec)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nrecords; i++)
		if (records[i].live == r)
			snprintf(records[i].guard, sizeof(records[i].guard), "%s", spec ? spec : "");
	pthread_mutex_unlock(&lock);
}

void hml__registry_exit_hook(void)
{
	pthread_mutex_lock(&lock);
	if (atexit_installed && atexit(at_exit) != 0)
		hml__log(HML_LOG_WARNING, "cannot install the exit handler again: "
		         "collected data may be lost at exit");
	pthread_mutex_unlock(&lock);
}

void hml__registry_exit_first(void (*fn)(void))
{
	pthread_mutex_lock(&lock);
	exit_first = fn;
	pthread_mutex_unlock(&lock);
}

hml_region *hml__registry_find(const char *label)
{
	hml_region *r = NULL;
	size_t i;

	pthread_mutex_lock(&lock);
	for (i = nrecords; label && i-- > 0 && !r;)
		if (records[i].live && strcmp(records[i].label, label) == 0)
			r = records[i].live;
	pthread_mutex_unlock(&lock);
	return r;
}

void hml__registry_remove(hml_region *r)
{
	size_t i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < nrecords; i++) {
		if (records[i].live != r)
			continue;
		if (records[i].dest) {
			/* Keep the final numbers for the report at exit. */
			records[i].hooks->stats(r, &records[i].stats);
			records[i].hooks->swaps(r, &records[i].swaps);
			records[i].live = NULL;
		} else {
			records[i] = records[--nrecords];
		}
		break;
	}
	pthread_mutex_unlock(&lock);
}
