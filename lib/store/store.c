/*
 * lib/store/store.c - the experiment store: a directory, its manifest.json and
 * the lock that serialises the processes that register artefacts; this
 * file opens or creates a store and answers its paths and records
 * (store_private.h names the others).
 *
 * The manifest on disk is the only truth: every change re-reads it under
 * the lock, applies itself to the fresh copy and writes it back
 * atomically, so two hml processes never lose each other's records. A
 * manifest that does not validate is never written over: a failed parse
 * ends the operation before any write path runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "core/beneath.h"
#include "core/error.h"
#include "core/util.h"
#include "store/lock.h"
#include "store/store_private.h"
#include "sys/fsutil.h"

/* Make `m` (stolen) the current manifest. The one it replaces is kept
 * until hml__store_free, so what callers borrowed from it stays valid. */
void hml__store_manifest_replace(hml__store *s, json_t *m)
{
	if (s->manifest && (s->retired || (s->retired = json_array())))
		json_array_append_new(s->retired, s->manifest);
	else
		json_decref(s->manifest);
	s->manifest = m;
}

/* The experiment's lock (lock.h), naming our command for whoever waits. */
int hml__store_lock_take(const hml__store *s, int *fd)
{
	return hml__lock_take(fd, s->lock_path, s->dir, hml__store_command_name());
}

json_t *hml__store_provenance(const hml__store *s, const char *const *rel_files,
                              size_t nfiles)
{
	char (*hashes)[65] = NULL;
	json_t *p = NULL;

	if (nfiles && !(hashes = calloc(nfiles, sizeof(*hashes)))) {
		hml__error_oom();
		return NULL;
	}
	for (size_t i = 0; i < nfiles; i++) {
		char *abs = hml__store_path(s, rel_files[i]);
		int rc = abs ? hml__sha256_file(abs, hashes[i]) : HML_ENOMEM;

		free(abs);
		if (rc < 0)
			goto done;
	}
	p = hml__store_provenance_new(rel_files, hashes, nfiles);

done:
	free(hashes);
	return p;
}

static int store_new(hml__store **out, const char *dir)
{
	hml__store *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return hml__error_oom();
	s->dir = hml__strdup(dir);
	s->manifest_path = hml__path_join(dir, "manifest.json");
	s->lock_path = hml__path_join(dir, ".lock");
	if (!s->dir || !s->manifest_path || !s->lock_path) {
		hml__store_free(s);
		return hml__error_oom();
	}
	*out = s;
	return 0;
}

/* Make the directories and, under the lock (two processes may create the
 * same experiment at once), an empty manifest when there is none. */
static int store_create(hml__store *s)
{
	static const char *const subdirs[] = { "data", "models", "eval" };
	struct stat st;
	json_t *m = NULL;
	int fd = -1, rc = 0;

	if (hml__mkdir_p(s->dir) < 0) {
		rc = hml__error_set(HML_EIO, "cannot create experiment '%s': %s", s->dir,
		                    strerror(errno));
		goto done;
	}
	for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		/* Inside: never through a link (core/beneath.h). */
		if ((rc = hml__beneath_mkdir_p(s->dir, subdirs[i])) == HML_EIO)
			rc = hml__error_set(HML_EIO, "cannot create experiment '%s': %s", s->dir,
			                    strerror(errno));
		if (rc < 0)
			goto done;
	}
	if (stat(s->manifest_path, &st) == 0)
		goto done;
	if ((rc = hml__store_lock_take(s, &fd)) < 0)
		goto done;
	if (stat(s->manifest_path, &st) == 0)
		goto done;
	if (!(m = hml__manifest_new())) {
		rc = hml__error_oom();
		goto done;
	}
	if ((rc = hml__manifest_write(s->dir, s->manifest_path, m)) == HML_EIO)
		rc = hml__error_set(HML_EIO, "cannot create experiment '%s': %s", s->dir,
		                    strerror(errno));

done:
	hml__lock_release(fd);
	json_decref(m);
	return rc;
}

int hml__store_open(hml__store **out, const char *dir, int create)
{
	hml__store *s = NULL;
	struct stat st;
	int rc;

	*out = NULL;
	if (!dir || !*dir)
		return hml__error_set(HML_EINVALID, "the experiment directory name is empty");
	if ((rc = store_new(&s, dir)) < 0)
		return rc;
	if (create) {
		if ((rc = store_create(s)) < 0)
			goto done;
	} else if (stat(s->dir, &st) < 0 || !S_ISDIR(st.st_mode) ||
	           (stat(s->manifest_path, &st) < 0 && errno == ENOENT)) {
		rc = hml__error_set(HML_ENOTFOUND, "no experiment at '%s' (run 'hml collect' first)",
		                    s->dir);
		goto done;
	}
	if ((rc = hml__manifest_load(s->manifest_path, &s->manifest)) < 0)
		goto done;
	*out = s;
	s = NULL;

done:
	hml__store_free(s);
	return rc;
}

void hml__store_free(hml__store *s)
{
	if (!s)
		return;
	json_decref(s->manifest);
	json_decref(s->retired);
	free(s->dir);
	free(s->manifest_path);
	free(s->lock_path);
	free(s);
}

const char *hml__store_dir(const hml__store *s)
{
	return s->dir;
}

const json_t *hml__store_manifest(const hml__store *s)
{
	return s->manifest;
}

int hml__store_reload(hml__store *s)
{
	json_t *m;
	int rc;

	if ((rc = hml__manifest_load(s->manifest_path, &m)) < 0)
		return rc;
	hml__store_manifest_replace(s, m);
	return 0;
}

char *hml__store_path(const hml__store *s, const char *rel)
{
	return hml__path_join(s->dir, rel);
}

char *hml__store_tmp_path(const hml__store *s, const char *subdir, const char *ext)
{
	static _Atomic unsigned counter;
	char name[96];
	char *d, *p;

	snprintf(name, sizeof(name), ".tmp-%ld-%u%s", (long)getpid(), counter++,
	         ext ? ext : "");
	if (!subdir || !*subdir)
		return hml__path_join(s->dir, name);
	if (!(d = hml__path_join(s->dir, subdir)))
		return NULL;
	p = hml__path_join(d, name);
	free(d);
	return p;
}

char *hml__store_tmp_create(const hml__store *s, const char *subdir, const char *ext)
{
	char *p = hml__store_tmp_path(s, subdir, ext);
	int fd = p ? hml__beneath_open(s->dir, p, O_WRONLY | O_CREAT | O_EXCL, 0666) : -1;

	if (fd >= 0)
		close(fd);
	else {
		if (p && fd == HML_EIO)
			hml__error_set(HML_EIO, "cannot create '%s': %s", p, strerror(errno));
		free(p);
		p = NULL;
	}
	return p;
}

char *hml__store_tmp_dir(const hml__store *s, const char *subdir)
{
	char name[128], *p;

	snprintf(name, sizeof(name), "%s/.tmp-%ld-XXXXXX", subdir, (long)getpid());
	if ((p = hml__store_path(s, name)) && hml__beneath_mkdtemp(s->dir, p) < 0) {
		if (hml_error_last()->code == HML_EIO)
			hml__error_set(HML_EIO, "cannot create '%s': %s", p, strerror(errno));
		free(p);
		p = NULL;
	}
	return p;
}

json_t *hml__manifest_find(json_t *manifest, const char *collection, const char *id)
{
	json_t *rec;
	size_t i;

	if (!manifest || !id)
		return NULL;
	json_array_foreach(json_object_get(manifest, collection), i, rec) {
		const char *rid = json_string_value(json_object_get(rec, "id"));

		if (rid && strcmp(rid, id) == 0)
			return rec;
	}
	return NULL;
}

const json_t *hml__store_find(const hml__store *s, const char *collection, const char *id)
{
	return hml__manifest_find(s->manifest, collection, id);
}
