/*
 * bench/torchload - where the fixed cost of a TorchScript model goes in a
 * process: the phases the runtime goes through the first time a region
 * opens a TorchScript model, timed one by one (#13).
 *
 *   bench_torchload PLUGIN MODEL.pt ROWS CALLS [THREADS]
 *
 * dlopen of the libtorch plugin (libhml-torch.so: libtorch and everything
 * it needs mapped, relocated and constructed), the entry point, the model
 * load (torch::jit::load and the backend's checks), the first forward call
 * and the best of the next CALLS - 1 (ROWS rows of 5 features each, on THREADS
 * intra-op threads, default 1, as HML_THREADS sets them), and freeing the
 * model. One line of "name ms" pairs on stdout; the process's
 * remaining cost (exec, exit with libtorch's destructors and unmapping) is
 * what bench/torchload.sh sees around it.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "loader/backend.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail(const char *what, const char *why)
{
	fprintf(stderr, "bench_torchload: error: %s: %s\n", what, why ? why : "unknown");
	return 1;
}

int main(int argc, char **argv)
{
	const hml__backend *be;
	hml__backend_entry entry;
	double t0, t1, t2, t3, t4, t5, first = 0, best = 1e30;
	int64_t rows, shape[2];
	float *x;
	void *dl, *m;
	int calls, threads = 1, i;

	if ((argc != 5 && argc != 6) || (rows = atoll(argv[3])) < 1 || (calls = atoi(argv[4])) < 2 ||
	    (argc == 6 && (threads = atoi(argv[5])) < 1))
		return fail("usage", "bench_torchload PLUGIN MODEL.pt ROWS CALLS [THREADS] "
		            "(CALLS >= 2, THREADS >= 1)");
	if (!(x = calloc((size_t)rows * 5, sizeof(float))))
		return fail("input", "out of memory");
	shape[0] = rows;
	shape[1] = 5;
	t0 = now();
	if (!(dl = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL)))
		return fail(argv[1], dlerror());
	t1 = now();
	entry = (hml__backend_entry)dlsym(dl, HML__TORCH_ENTRY);
	if (!entry || !(be = entry(HML__BACKEND_ABI)))
		return fail(argv[1], "not an hml libtorch backend of this interface version");
	t2 = now();
	if (be->load(&m, argv[2], threads, NULL) < 0)
		return fail("load", be->last_error());
	t3 = now();
	for (i = 0; i < calls; i++) {
		double a = now(), d;

		if (be->forward(m, x, HML_F32, 2, shape) < 0)
			return fail("forward", be->last_error());
		d = now() - a;
		if (i == 0)
			first = d;
		else if (d < best)
			best = d;
	}
	t4 = now();
	be->free(m);
	t5 = now();
	printf("dlopen %.3f entry %.3f load %.3f first_forward %.3f next_forward %.3f free %.3f\n",
	       (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3, first * 1e3, best * 1e3,
	       (t5 - t4) * 1e3);
	free(x);
	return 0;
}
