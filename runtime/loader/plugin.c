/*
 * runtime/loader/plugin.c - where libhml's plugins lie (loader.h).
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loader/loader.h"

#ifndef HML__BIN_TO_PLUGIN_DIR
#  define HML__BIN_TO_PLUGIN_DIR "../lib/hml"
#endif

void hml__plugin_path(char *buf, size_t size, const char *file, const char *env)
{
	const char *var = env ? getenv(env) : NULL;
	Dl_info info;
	const char *slash;
	int dir_len;

	if (var && *var) {
		snprintf(buf, size, "%s", var);
		return;
	}
	if (!dladdr((void *)&hml__plugin_path, &info) || !info.dli_fname ||
	    !(slash = strrchr(info.dli_fname, '/'))) {
		snprintf(buf, size, "%s", file);  /* the loader's search path */
		return;
	}
	dir_len = (int)(slash - info.dli_fname);
	snprintf(buf, size, "%.*s/%s", dir_len, info.dli_fname, file);
	if (access(buf, F_OK) == 0)
		return;
	snprintf(buf, size, "%.*s/hml/%s", dir_len, info.dli_fname, file);
	if (access(buf, F_OK) == 0)
		return;
	/* This code inside an executable (the hml CLI): the build tree's
	 * runtime/ beside its cmd/, or LIBDIR/hml relative to BINDIR. */
	snprintf(buf, size, "%.*s/../runtime/%s", dir_len, info.dli_fname, file);
	if (access(buf, F_OK) == 0)
		return;
	snprintf(buf, size, "%.*s/%s/%s", dir_len, info.dli_fname, HML__BIN_TO_PLUGIN_DIR, file);
}
