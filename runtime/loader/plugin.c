/*
 * runtime/loader/plugin.c - hml's plugins (loader.h): where they lie and
 * the one way they are opened, for libhml's (libhml-torch.so,
 * libhml-hdf5.so) and the hml CLI's (libhml-cli-*.so) alike.
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "loader/loader.h"

#ifndef HML__BIN_TO_PLUGIN_DIR
#  define HML__BIN_TO_PLUGIN_DIR "../lib/hml"
#endif

/* The first place `file` lies, relative to `dir` (the directory of the
 * object holding this code), into buf; 1 when found, else 0 with buf the
 * last place tried. */
static int plugin_near(char *buf, size_t size, const char *dir, int dir_len, const char *file)
{
	/* Beside libhml.so (build tree and LIBDIR), in its hml/ (LIBDIR/hml);
	 * for an executable (the hml CLI), the build tree's runtime/ beside its
	 * cmd/, or LIBDIR/hml relative to BINDIR. */
	static const char *const near[] = { "", "/hml", "/../runtime", "/" HML__BIN_TO_PLUGIN_DIR };

	for (size_t k = 0; k < sizeof(near) / sizeof(near[0]); k++) {
		snprintf(buf, size, "%.*s%s/%s", dir_len, dir, near[k], file);
		if (access(buf, F_OK) == 0)
			return 1;
	}
	return 0;
}

void hml__plugin_path(char *buf, size_t size, const char *file, const char *env)
{
	const char *var = env ? getenv(env) : NULL;
	const char *name = NULL, *slash;
	char exe[4096];
	Dl_info info;
	ssize_t n;

	if (var && *var) {
		snprintf(buf, size, "%s", var);
		return;
	}
	if (dladdr((void *)&hml__plugin_path, &info) && info.dli_fname)
		name = info.dli_fname;
	if (name && (slash = strrchr(name, '/')) &&
	    plugin_near(buf, size, name, (int)(slash - name), file))
		return;
	/* glibc names the main executable as it was started ("hml" found on
	 * PATH, "./hml" before a chdir), which says nothing of where it lies:
	 * the kernel's link to it does. */
	if ((!name || name[0] != '/') &&
	    (n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0) {
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')) && plugin_near(buf, size, exe, (int)(slash - exe), file))
			return;
	}
	if (!name || !strchr(name, '/'))
		snprintf(buf, size, "%s", file);  /* the loader's search path */
}

/* Opens the plugin and checks its table; on failure p->rc and p->msg say why. */
static void plugin_open(hml__plugin *p)
{
	const hml__plugin_spec *s = p->spec;
	hml__plugin_entry entry;
	const hml__plugin_head *head;
	const char *version;
	char path[4096];
	void *dl;

	hml__plugin_path(path, sizeof(path), s->file, s->env);
	if (!(dl = dlopen(path, RTLD_NOW | RTLD_LOCAL | s->dlflags))) {
		const char *e = dlerror();

		p->rc = HML_ENOTFOUND;
		snprintf(p->msg, sizeof(p->msg), "%s cannot be loaded: %s", s->what, e ? e : path);
		return;
	}
	entry = (hml__plugin_entry)dlsym(dl, s->entry);
	head = entry ? entry(s->abi) : NULL;
	if (!head || head->abi != s->abi || head->size < s->size) {
		p->rc = HML_ENOTSUPPORTED;
		snprintf(p->msg, sizeof(p->msg), "%s '%s' is not an hml %s of interface version %d",
		         s->what, path, s->kind, s->abi);
	} else if (version = *(const char *const *)((const char *)head + s->version_at),
	           !version || strcmp(version, s->version()) != 0) {
		p->rc = HML_ENOTSUPPORTED;
		snprintf(p->msg, sizeof(p->msg), "%s '%s' was built with %s %s, this %s with %s",
		         s->what, path, s->version_of, version ? version : "(none)", s->host,
		         s->version());
	} else {
		p->table = head;
		return;
	}
	dlclose(dl);
}

int hml__plugin_load(hml__plugin *p, const void **table)
{
	if (!__atomic_load_n(&p->tried, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&p->lock);
		if (!p->tried) {
			plugin_open(p);
			if (p->table && p->spec->loaded)
				p->spec->loaded(p->table);
			__atomic_store_n(&p->tried, 1, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&p->lock);
	}
	*table = p->table;
	return p->table ? 0 : hml__error_set(p->rc, "%s", p->msg);
}

const void *hml__plugin_loaded(hml__plugin *p)
{
	return __atomic_load_n(&p->tried, __ATOMIC_ACQUIRE) ? p->table : NULL;
}

int hml__plugin_fail(int rc, const char *message)
{
	return hml__error_set(rc < 0 ? rc : HML_ERROR, "%s", message ? message : "unknown failure");
}
