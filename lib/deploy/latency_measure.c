/*
 * lib/deploy/latency_measure.c - a model timed in each deployment form
 * (latency.h): TorchScript through the runtime's backend loader, C built
 * with the system compiler and loaded through the runtime's compiled-model
 * loader.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "deploy/cbuild.h"
#include "deploy/codegen.h"
#include "deploy/export.h"
#include "deploy/latency.h"
#include "loader/loader.h"
#include "sys/fsutil.h"
#include "sys/interrupt.h"
#include "sys/proc.h"
#include "train/dataset.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Best mean seconds per call of `m` on x [batch, *shape], 3 rounds. */
static int time_model(hml__model *m, const float *x, const hml__latency_options *o,
                      double *per_call)
{
	int64_t shape[HML_MAX_DIMS + 1];
	double best = INFINITY, budget = (o->seconds > 0 ? o->seconds : 0.15) / 3;
	int rc;

	shape[0] = o->batch;
	memcpy(shape + 1, o->in_shape, (size_t)o->in_ndim * sizeof(int64_t));
	if ((rc = hml__model_forward(m, x, HML_F32, o->in_ndim + 1, shape)) < 0)   /* warm-up */
		return rc;
	for (int round = 0; round < 3; round++) {
		double t0 = now(), t;
		long n = 0;

		do {
			if ((rc = hml__model_forward(m, x, HML_F32, o->in_ndim + 1, shape)) < 0)
				return rc;
			n++;
		} while ((t = now() - t0) < budget);
		best = fmin(best, t / (double)n);
	}
	*per_call = best;
	return 0;
}

/*
 * The C form is built in TMPDIR/hml-latency-PID-XXXXXX, PID that of the
 * process building it, which removes it when done. A process killed before
 * it could (kill -9 during hml train) leaves its directory behind: the next
 * measurement removes those of processes that no longer exist (and only
 * directories of this user).
 */
#define DIR_PREFIX "hml-latency-"

static void reclaim_orphans(const char *base)
{
	const size_t n = strlen(DIR_PREFIX);
	DIR *d = opendir(base);
	struct dirent *e;

	while (d && (e = readdir(d)) != NULL) {
		struct stat st;
		char *end, *p;
		long pid;

		if (strncmp(e->d_name, DIR_PREFIX, n) != 0)
			continue;
		errno = 0;
		pid = strtol(e->d_name + n, &end, 10);
		if (errno || end == e->d_name + n || *end != '-' || pid <= 0 || pid == (long)getpid())
			continue;
		/* ESRCH only: EPERM means the process exists, under another user */
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if ((p = hml__path_join(base, e->d_name)) != NULL && lstat(p, &st) == 0 &&
		    S_ISDIR(st.st_mode) && st.st_uid == getuid())
			hml__remove_dir(p);
		free(p);
	}
	if (d)
		closedir(d);
}

/* ---- start-up: hml-probe with the model, less without ---------------- */

/* The best of 3 wall times of `probe MODEL SHAPE` (exec to exit), or NaN
 * when it cannot run or fails. An interrupt (SIGINT/SIGTERM to the CLI)
 * is left pending, so that the rest of the measurement stops too. */
static double probe_wall(const char *probe, const char *model, const char *shape)
{
	const char *argv[] = { probe, model, shape, NULL };
	double best = NAN;

	for (int i = 0; i < 3; i++) {
		hml__proc_result r;

		if (hml__proc_run(argv, NULL, "/dev/null", "/dev/null", &r) < 0)
			return NAN;
		if (r.interrupted) {
			hml__interrupt(r.interrupted);   /* pending again: the measurement stops */
			return NAN;
		}
		if (!r.exited || r.exit_code != 0)
			return NAN;
		if (!(r.wall_s >= best))
			best = r.wall_s;
	}
	return best;
}

/* The probe's baseline: the process with no model (NaN: no probe). */
static double probe_base(const hml__latency_options *o, char *shape, size_t size)
{
	size_t n = 0;

	if (!o->probe)
		return NAN;
	for (int i = 0; i < o->in_ndim && n < size; i++)
		n += (size_t)snprintf(shape + n, size - n, "%s%lld", i ? "x" : "",
		                      (long long)o->in_shape[i]);
	return probe_wall(o->probe, "-", shape);
}

/* What `model` adds to the probe's start-up, or NaN. */
static double startup_of(const hml__latency_options *o, const char *shape, double base,
                         const char *model)
{
	double with = isfinite(base) ? probe_wall(o->probe, model, shape) : NAN;

	return isfinite(with) ? fmax(0, with - base) : NAN;
}

/* ---- the forms ---------------------------------------------------------- */

/* The C form: exported, built in a temporary directory, loaded, timed.
 * Failures that only mean "no C form" are put in out->unavailable. */
static int measure_c(hml__latency *out, const char *pt_path, const float *x,
                     const hml__latency_options *o, const char *shape, double base_s)
{
	const char *base = getenv("TMPDIR");
	char dir[4096], *c = NULL, *so = NULL;
	hml__cg_model d;
	hml__cg_options co = { "latency", NULL, NULL };
	hml__cbuild_info info;
	hml__model *m = NULL;
	double t;
	int rc, made = 0;

	memset(&info, 0, sizeof(info));
	base = base && *base ? base : "/tmp";
	snprintf(dir, sizeof(dir), "%s/" DIR_PREFIX "%ld-XXXXXX", base, (long)getpid());
	memset(&d, 0, sizeof(d));
	/* No compiler: said before the model is read (reading it costs a load). */
	if ((rc = hml__cbuild_find_cc(&c)) < 0 || (rc = hml__export_model(pt_path, &d)) < 0)
		goto unavailable;
	free(c);
	c = NULL;
	reclaim_orphans(base);
	if (!mkdtemp(dir)) {
		rc = hml__error_set(HML_EIO, "cannot create a directory in '%s' to compile in", base);
		goto unavailable;
	}
	made = 1;
	if (!(c = hml__path_join(dir, "latency.c")) || !(so = hml__path_join(dir, "latency.so"))) {
		rc = hml__error_oom();
		goto done;
	}
	if ((rc = hml__cbuild_so(&d, &co, NULL, c, NULL, so, &info)) < 0 ||
	    (rc = hml__model_load(&m, so, o->threads)) < 0 || (rc = time_model(m, x, o, &t)) < 0)
		goto unavailable;
	out->seconds[HML__TARGET_C] = t / (double)o->batch;
	out->startup[HML__TARGET_C] = startup_of(o, shape, base_s, so);
	goto done;
unavailable:
	if (rc == HML_ENOMEM || hml__interrupt_pending())
		goto done;
	snprintf(out->unavailable[HML__TARGET_C], sizeof(out->unavailable[HML__TARGET_C]), "%s",
	         hml_error_last()->message);
	rc = 0;
done:
	hml__model_free(m);
	if (made)
		hml__remove_dir(dir);
	hml__cg_model_release(&d);
	hml__cbuild_info_release(&info);
	free(c);
	free(so);
	return rc;
}

hml__latency_options hml__latency_options_for(const hml__dataset *d, int64_t batch, int threads)
{
	hml__latency_options o = { 0 };

	o.batch = batch > 0 ? batch : 1;
	o.threads = threads;
	o.in_ndim = d->in_ndim;
	o.in_shape = d->in_shape;
	o.rows = d->x;
	o.nrows = d->rows;
	o.c = 1;
	return o;
}

int hml__latency_measure(hml__latency *out, const char *pt_path, const hml__latency_options *o)
{
	int64_t features = 1;
	float *x = NULL;
	hml__model *m = NULL;
	char shape[160] = "";
	double t, base;
	int rc = 0;

	hml__latency_init(out);
	if (o->batch < 1 || o->in_ndim < 1 || o->in_ndim > HML_MAX_DIMS - 1 || !o->rows ||
	    o->nrows < 1)
		return hml__error_set(HML_EINVALID, "latency: bad options (batch %lld, %d dims, "
		                      "%lld rows)", (long long)o->batch, o->in_ndim, (long long)o->nrows);
	for (int i = 0; i < o->in_ndim; i++)
		features *= o->in_shape[i];
	if (features < 1 || o->batch > ((int64_t)1 << 31) / features)
		return hml__error_set(HML_EINVALID, "latency: %lld rows of %lld features are too many",
		                      (long long)o->batch, (long long)features);
	if (!(x = malloc((size_t)(o->batch * features) * sizeof(float))))
		return hml__error_oom();
	for (int64_t r = 0; r < o->batch; r++)
		memcpy(x + r * features, o->rows + (r % o->nrows) * features,
		       (size_t)features * sizeof(float));
	out->batch = o->batch;
	out->threads = o->threads;
	hml__latency_machine(out->machine, sizeof(out->machine));
	base = probe_base(o, shape, sizeof(shape));
	if (!o->no_torchscript) {
		if ((rc = hml__model_load_on(&m, pt_path, o->threads, "cpu")) < 0 ||
		    (rc = time_model(m, x, o, &t)) < 0)
			goto done;
		out->seconds[HML__TARGET_TORCHSCRIPT] = t / (double)o->batch;
		out->startup[HML__TARGET_TORCHSCRIPT] = startup_of(o, shape, base, pt_path);
		hml__model_free(m);
		m = NULL;
	}
	if (hml__interrupt_pending()) {
		rc = hml__error_set(HML_ERROR, "interrupted");
		goto done;
	}
	if (o->c)
		rc = measure_c(out, pt_path, x, o, shape, base);
done:
	hml__model_free(m);
	free(x);
	return rc;
}
