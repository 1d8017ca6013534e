/*
 * lib/search/mpi_proxy.c - mpi_relay.h over the CLI's MPI plugin,
 * libhml-cli-mpi.so (mpi_plugin.h).
 *
 * The CLI links no MPI, so hml without an MPI launcher never maps libmpi:
 * the plugin is opened by hml__mpi_init, which cmd/search.c calls only
 * when a launcher started it, and stays loaded. Each function forwards to
 * the plugin's function of the same name and turns a failure there into
 * the caller's hml error.
 */
#include <stddef.h>

#include "core/error.h"
#include "hml/version.h"
#include "loader/loader.h"
#include "search/mpi_plugin.h"
#include "search/mpi_relay.h"

static const hml__plugin_spec spec = {
	HML__MPI_PLUGIN, NULL, HML__MPI_ENTRY, HML__MPI_PLUGIN_ABI, sizeof(hml__mpi_plugin),
	"the MPI plugin", "plugin", offsetof(hml__mpi_plugin, hml_version), "hml",
	hml_version, "hml", 0, NULL
};
static hml__plugin plugin = HML__PLUGIN_INIT(spec);

int hml__mpi_init(int *rank, int *size)
{
	const hml__mpi_plugin *t;
	const void *table;
	int rc;

	if ((rc = hml__plugin_load(&plugin, &table)) < 0)
		return rc;
	t = table;
	return (rc = t->mpi_init(rank, size)) < 0 ? hml__plugin_fail(rc, t->last_error()) : rc;
}

/* Called only after hml__mpi_init succeeded: the plugin is loaded. */
int hml__mpi_relay_start(int rank, int size, int *to, int *from, int *in, int *out)
{
	const hml__mpi_plugin *t = hml__plugin_loaded(&plugin);
	int rc;

	if (!t)
		return hml__error_set(HML_EINVALID, "the MPI relay starts after hml__mpi_init");
	rc = t->mpi_relay_start(rank, size, to, from, in, out);
	return rc < 0 ? hml__plugin_fail(rc, t->last_error()) : rc;
}

void hml__mpi_finish(void)
{
	const hml__mpi_plugin *t = hml__plugin_loaded(&plugin);

	if (t)
		t->mpi_finish();
}
