/*
 * lib/deploy/cbuild.c - generated C compiled into a shared object (cbuild.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/util.h"
#include "deploy/cbuild.h"
#include "sys/fsutil.h"
#include "sys/proc.h"

static const char *const base_flags[HML__CBUILD_NFLAGS] = HML__CBUILD_FLAGS;

#ifdef HML__CBUILD_BLAS_DIR
#define BLAS_LIB HML__CBUILD_BLAS_DIR "/libopenblas.so"
#define BLAS_RPATH "-Wl,-rpath," HML__CBUILD_BLAS_DIR
#endif

const char *hml__cbuild_blas(void)
{
#ifdef BLAS_LIB
	return access(BLAS_LIB, R_OK) == 0 ? BLAS_LIB : NULL;
#else
	return NULL;
#endif
}

/* -march=ARCH and, with it, no target clones: the generated kernels carry
 * an AVX2 copy chosen at load time (HML_<ID>_KERNEL in lib/deploy/codegen.c),
 * which only pays in a portable build; built for one CPU, the clones keep
 * gcc from inlining the activations (compiled for that CPU, a superset of
 * the clone's x86-64-v3) into them, and a GELU MLP ran 3x slower with
 * -march=native than portable. flags gets up to 2, NULL-terminated. */
static void march_flags(const hml__cbuild_info *info, char *buf, size_t size,
                        const char **flags)
{
	flags[0] = NULL;
	if (!info->march[0])
		return;
	snprintf(buf, size, "-march=%s", info->march);
	flags[0] = buf, flags[1] = "-DHML_CMODEL_NO_CLONES", flags[2] = NULL;
}

/* The flags after the base ones and -march: the define before the source,
 * the library after it (argv order); n of each written, NULL-terminated. */
static void blas_flags(const hml__cbuild_info *info, const char **pre, const char **post)
{
	pre[0] = post[0] = NULL;
#ifdef BLAS_LIB
	if (info->blas) {
		pre[0] = "-DHML_CMODEL_CBLAS", pre[1] = NULL;
		post[0] = info->blas, post[1] = BLAS_RPATH, post[2] = NULL;
	}
#else
	(void)info;
#endif
}

int hml__cbuild_find_cc(char **out)
{
	if (!(*out = hml__find_on_path("cc")))
		return hml__error_set(HML_ERROR, "no C compiler: 'cc' is not on PATH "
		                      "(--target c compiles the model with it)");
	return 0;
}

/* The first line of file `path` into buf ("" when unreadable). */
static void first_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, (int)size, f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\r\n")] = '\0';
}

/* Run the compiler; its output into log_path (out_path: stdout apart). */
static int run_cc(const char *const *argv, const char *log_path, const char *out_path)
{
	hml__proc_result res;
	char line[300];
	int rc;

	if ((rc = hml__proc_run(argv, NULL, out_path ? out_path : log_path, log_path, &res)) < 0)
		return rc;
	if (res.interrupted)
		return hml__error_set(HML_ERROR, "interrupted");
	if (!res.exited || res.exit_code != 0) {
		first_line(log_path, line, sizeof(line));
		return hml__error_set(HML_ERROR, "C compiler '%s' failed (%s)%s%s", argv[0],
		                      hml__proc_describe(&res), line[0] ? ": " : "", line);
	}
	return 0;
}

int hml__cbuild_so(const hml__cg_model *m, const hml__cg_options *o, const char *march,
                   const char *c_path, const char *h_path, const char *so_path,
                   hml__cbuild_info *info)
{
	const char *argv[HML__CBUILD_NFLAGS + 16], *pre[4], *post[4], *arch[3];
	char *log = NULL, *ver = NULL, arch_flag[80];
	int rc, n = 0;

	memset(info, 0, sizeof(*info));
	if (march && *march) {
		if (strlen(march) >= sizeof(info->march))
			return hml__error_set(HML_EINVALID, "-march value '%s' is too long", march);
		strcpy(info->march, march);
	}
	if ((rc = hml__cbuild_find_cc(&info->cc)) < 0)
		return rc;
	if (!(log = malloc(strlen(so_path) + 9)) || !(ver = malloc(strlen(so_path) + 9))) {
		rc = hml__error_oom();
		goto done;
	}
	sprintf(log, "%s.log", so_path);
	sprintf(ver, "%s.version", so_path);
	if ((rc = hml__cg_write(m, o, c_path, h_path)) < 0)
		goto done;
	argv[0] = info->cc, argv[1] = "--version", argv[2] = NULL;
	if ((rc = run_cc(argv, log, ver)) < 0)
		goto done;
	first_line(ver, info->version, sizeof(info->version));
	argv[n++] = info->cc;
	for (int i = 0; i < HML__CBUILD_NFLAGS; i++)
		argv[n++] = base_flags[i];
	march_flags(info, arch_flag, sizeof(arch_flag), arch);
	for (int i = 0; arch[i]; i++)
		argv[n++] = arch[i];
	info->blas = hml__cg_uses_blas(m) ? hml__cbuild_blas() : NULL;
	blas_flags(info, pre, post);
	for (int i = 0; pre[i]; i++)
		argv[n++] = pre[i];
	argv[n++] = "-o", argv[n++] = so_path, argv[n++] = c_path;
	for (int i = 0; post[i]; i++)
		argv[n++] = post[i];
	argv[n++] = "-lm";
	argv[n] = NULL;
	rc = run_cc(argv, log, NULL);
done:
	if (log)
		unlink(log);
	if (ver)
		unlink(ver);
	free(log);
	free(ver);
	return rc;
}

json_t *hml__cbuild_info_json(const hml__cbuild_info *info)
{
	json_t *fl = json_array();
	const char *pre[4], *post[4], *arch[3];
	char arch_flag[80];

	if (!fl)
		return NULL;
	for (int i = 0; i < HML__CBUILD_NFLAGS; i++)
		json_array_append_new(fl, json_string(base_flags[i]));
	march_flags(info, arch_flag, sizeof(arch_flag), arch);
	for (int i = 0; arch[i]; i++)
		json_array_append_new(fl, json_string(arch[i]));
	blas_flags(info, pre, post);
	for (int i = 0; pre[i]; i++)
		json_array_append_new(fl, json_string(pre[i]));
	for (int i = 0; post[i]; i++)
		json_array_append_new(fl, json_string(post[i]));
	json_array_append_new(fl, json_string("-lm"));
	return json_pack("{s:s, s:s, s:o, s:o}", "path", info->cc ? info->cc : "",
	                 "version", info->version, "flags", fl,
	                 "blas", info->blas ? json_string(info->blas) : json_null());
}

void hml__cbuild_info_release(hml__cbuild_info *info)
{
	if (!info)
		return;
	free(info->cc);
	memset(info, 0, sizeof(*info));
}
