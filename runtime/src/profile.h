/*
 * runtime/src/profile.h - the runtime's own output: warnings through the log
 * handler, and the per-region profile written at process exit (internal).
 *
 * Every open region is registered. At exit (an atexit handler that must
 * run before HDF5's: installed at the first region, and again when the
 * HDF5 plugin is loaded later) live regions' collected data is flushed,
 * then the profile of every region that asked for one (HML_PROFILE) is
 * printed as a table through the log handler ("1") or written as JSON to the
 * path given. Freed regions leave a record so they are reported too.
 */
#ifndef HML_RUNTIME_PROFILE_H
#define HML_RUNTIME_PROFILE_H

#include "hml/region.h"

/** Send a formatted line to the log handler. */
void hml__log(hml_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

/** Register a live region; the first call installs the exit handler. */
int hml__registry_add(hml_region *r);

/**
 * Install the exit handler again, if it is installed, so that it runs
 * before any exit handler installed since (HDF5's, when the plugin that
 * holds it was loaded after the first region). It then runs once.
 */
void hml__registry_exit_hook(void);

/** Unregister a region being freed, keeping its profile record if needed. */
void hml__registry_remove(hml_region *r);

/* Implemented by region.c for the exit handler. */
int hml__region_flush_at_exit(hml_region *r);
const char *hml__region_profile_dest(const hml_region *r);

#endif
