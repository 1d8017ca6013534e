/*
 * lib/deploy/export_proxy.c - export.h's hml__export_model as the CLI has
 * it: over its TorchScript reader plugin, libhml-cli-export.so
 * (export_plugin.h), or, in a build without libtorch (HML_WITH_TORCH=OFF),
 * a refusal, so that `hml deploy --target c` is refused with
 * HML_ENOTSUPPORTED before anything is compiled or registered.
 *
 * The CLI links no libtorch, so a command that compiles no model to C
 * never maps it: the plugin is opened the first time a model is read and
 * stays loaded. A failure there becomes the caller's hml error.
 */
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "deploy/export.h"
#include "deploy/export_plugin.h"
#include "hml/version.h"
#include "loader/archive.h"
#include "loader/loader.h"

#ifdef HML_WITH_TORCH

static const hml__plugin_spec spec = {
	HML__EXPORT_PLUGIN, NULL, HML__EXPORT_ENTRY, HML__EXPORT_PLUGIN_ABI,
	sizeof(hml__export_plugin), "the TorchScript reader plugin", "plugin",
	offsetof(hml__export_plugin, hml_version), "hml", hml_version, "hml", 0, NULL
};
static hml__plugin plugin = HML__PLUGIN_INIT(spec);

int hml__export_model(const char *path, hml__cg_model *out)
{
	const hml__export_plugin *t;
	const void *table;
	struct stat st;
	int fd, rc;

	if (out)
		memset(out, 0, sizeof(*out));
	/* The archive limits first, as the runtime's loader checks them
	 * (runtime/loader/archive.h): libtorch never sees a file past them. */
	if ((fd = hml__model_file_open(path, "model", &st)) < 0)
		return fd;
	rc = hml__archive_check(fd, path);
	close(fd);
	if (rc < 0)
		return rc;
	if ((rc = hml__plugin_load(&plugin, &table)) < 0)
		return hml__error_set(rc, "cannot compile model '%s' to C: %s", path, plugin.msg);
	t = table;
	if ((rc = t->export_model(path, out)) < 0)
		return hml__plugin_fail(rc, t->last_error());
	return rc;
}

#else

int hml__export_model(const char *path, hml__cg_model *out)
{
	if (out)
		memset(out, 0, sizeof(*out));
	return hml__error_set(HML_ENOTSUPPORTED,
		"cannot compile model '%s' to C: hml was built without libtorch "
		"(HML_WITH_TORCH=OFF), which reads TorchScript models", path);
}

#endif
