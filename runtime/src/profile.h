/*
 * runtime/src/profile.h - the registry of regions, and the per-region
 * profile written at process exit (internal).
 *
 * Every open region is registered. At exit (an atexit handler that must
 * run before HDF5's: installed at the first region, and again when the
 * HDF5 plugin is loaded later) live regions' collected data is flushed,
 * then the profile of every region that asked for one (HML_PROFILE) is
 * printed as a table through the log handler ("1") or written as JSON to the
 * path given. Freed regions leave a record so they are reported too.
 *
 * The registry sits below the regions (region.c registers them): what it
 * needs of a region at exit, it asks through the hooks handed to it at
 * registration, never by calling into region.c.
 */
#ifndef HML_RUNTIME_PROFILE_H
#define HML_RUNTIME_PROFILE_H

#include "core/profile_file.h"
#include "hml/region.h"

/** What the registry asks of a live region. */
typedef struct hml__registry_hooks {
	/** Write out the collected data it buffers; negative, with an hml
	 * error set, when they are lost. Called by the exit handler. */
	int (*flush)(hml_region *r);
	/** Copy its statistics into *out (at exit, and when it is freed). */
	int (*stats)(const hml_region *r, hml_region_stats *out);
	/** Copy its hot swaps into *out (at exit, and when it is freed). */
	int (*swaps)(const hml_region *r, hml__profile_swaps *out);
} hml__registry_hooks;

/**
 * Register live region `r`, labelled `label` (copied, cut at 71 bytes), in
 * `mode`, giving its model `threads` threads (recorded in the profile,
 * lib/core/profile_file.h), whose profile goes to `dest` (HML_PROFILE: "1"
 * or a JSON path, copied; NULL: none). `hooks` is borrowed for as long as the region is
 * registered (static storage). The first call installs the exit handler.
 * Errors: HML_ERROR when the exit handler cannot be installed, HML_ENOMEM.
 */
int hml__registry_add(hml_region *r, const char *label, hml_mode mode, int threads,
                      const char *dest, const hml__registry_hooks *hooks);

/**
 * Install the exit handler again, if it is installed, so that it runs
 * before any exit handler installed since (HDF5's, when the plugin that
 * holds it was loaded after the first region). It then runs once.
 */
/** Record region r's guard spec (NULL: none) for its profile record. */
void hml__registry_guard(hml_region *r, const char *spec);

void hml__registry_exit_hook(void);

/**
 * Have the exit handler call `fn` first, before it writes the regions
 * still registered, without its lock held (so `fn` may free regions). One
 * such function: the directive sites' (directive_site.c), which free their
 * regions and end the process when data is lost under the fail policy.
 */
void hml__registry_exit_first(void (*fn)(void));

/** The live region registered last under `label`, or NULL. */
hml_region *hml__registry_find(const char *label);

/** Unregister a region being freed, keeping its profile record (with its
 * final statistics) if it has a destination. */
void hml__registry_remove(hml_region *r);

#endif
