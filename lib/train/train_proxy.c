/*
 * lib/train/train_proxy.c - train.h's hml__train as the CLI has it: over
 * its training plugin, libhml-cli-train.so (train_plugin.h), or, in a
 * build without libtorch (HML_WITH_TORCH=OFF), a refusal with
 * HML_ENOTSUPPORTED.
 *
 * The CLI links no libtorch, so a command that does not train never maps
 * it: the plugin is opened the first time hml__train is called and stays
 * loaded (libtorch does not survive dlclose). A failure there becomes the
 * caller's hml error.
 *
 * libtorch's OpenMP runtime (libgomp) is mapped with the plugin and reads
 * OMP_WAIT_POLICY then, once. Unless the environment sets it, the plugin
 * is loaded with OMP_WAIT_POLICY=passive: with libgomp's default, threads
 * that spin between parallel regions hold up every region (every GEMM of
 * a step) on a machine that other work shares (two runs of one training
 * on 2 cores at load 8: 110 and 176 s spinning, 10 and 77 s passive;
 * bench/train-wait.sh compares the two under busy loops). The variable is
 * removed again after loading, so the applications hml starts later see
 * the environment as the user left it.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "hml/version.h"
#include "loader/loader.h"
#include "train/guard_fit.h"
#include "train/train.h"
#include "train/train_plugin.h"

#ifdef HML_WITH_TORCH

static const hml__plugin_spec spec = {
	HML__TRAIN_PLUGIN, NULL, HML__TRAIN_ENTRY, HML__TRAIN_PLUGIN_ABI,
	sizeof(hml__train_plugin), "the training plugin", "plugin",
	offsetof(hml__train_plugin, hml_version), "hml", hml_version, "hml", 0, NULL
};
static hml__plugin plugin = HML__PLUGIN_INIT(spec);

/* libgomp's variable (libgomp(3)); set here for the plugin's loading only. */
#define HML__TRAIN_WAIT_ENV "OMP_WAIT_POLICY"

/* hml__plugin_load of the training plugin, libgomp's wait policy passive
 * unless the user chose one (above). */
static int load(const void **table)
{
	int own = getenv(HML__TRAIN_WAIT_ENV) == NULL, rc;

	if (own && setenv(HML__TRAIN_WAIT_ENV, "passive", 1) != 0)
		return hml__error_oom();
	rc = hml__plugin_load(&plugin, table);
	if (own)
		unsetenv(HML__TRAIN_WAIT_ENV);
	return rc;
}

int hml__train(const hml__dataset *d, const hml__train_options *o, const char *out_path,
               hml__train_result *res)
{
	const hml__train_plugin *t;
	const void *table;
	int rc;

	if ((rc = load(&table)) < 0) {
		if (res)
			memset(res, 0, sizeof(*res));
		return hml__error_set(rc, "cannot train: %s", plugin.msg);
	}
	t = table;
	if ((rc = t->train(d, o, out_path, res)) < 0)
		return hml__plugin_fail(rc, t->last_error());
	return rc;
}

int hml__guard_fit(hml__guard_stats *out, const float *x, int64_t rows, int64_t features)
{
	const hml__train_plugin *t;
	const void *table;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = load(&table)) < 0)
		return hml__error_set(rc, "cannot fit guard statistics: %s", plugin.msg);
	t = table;
	if ((rc = t->guard_fit(out, x, rows, features)) < 0)
		return hml__plugin_fail(rc, t->last_error());
	return rc;
}

#else

int hml__train(const hml__dataset *d, const hml__train_options *o, const char *out_path,
               hml__train_result *res)
{
	if (res)
		memset(res, 0, sizeof(*res));
	return hml__error_set(HML_ENOTSUPPORTED,
		"cannot train: hml was built without libtorch (HML_WITH_TORCH=OFF)");
}


int hml__guard_fit(hml__guard_stats *out, const float *x, int64_t rows, int64_t features)
{
	(void)x; (void)rows; (void)features;
	memset(out, 0, sizeof(*out));
	return hml__error_set(HML_ENOTSUPPORTED,
		"cannot fit guard statistics: hml was built without libtorch (HML_WITH_TORCH=OFF)");
}
#endif
