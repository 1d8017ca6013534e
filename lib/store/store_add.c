/*
 * lib/store/store_add.c - registering in the store (store_private.h):
 * the next id of a collection, a record's files moved into place under
 * the lock with its provenance and card, undone on failure; and changes
 * made by a caller's function to a fresh copy of the manifest.
 */
/* renameat2() and RENAME_NOREPLACE. */
#define _GNU_SOURCE 1

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "core/beneath.h"
#include "core/error.h"
#include "core/util.h"
#include "store/ids.h"
#include "store/lock.h"
#include "store/store_private.h"
#include "sys/fsutil.h"

/* The number in an id "m12" of collection `name`, or 0 when `s` is not
 * one (ids.h). A file name "m12.pt" counts too when `ext_ok`. */
static long id_number(const char *s, const char *name, int ext_ok)
{
	size_t len = s ? (ext_ok ? strcspn(s, ".") : strlen(s)) : 0;
	long v = hml__id_number(name, s, len);

	return v > 0 ? v : 0;
}

/* One more than the largest number the collection ever used: in the
 * manifest and in the names of its files, so that an id is never given
 * twice even when records were removed by hand. */
static long next_id(const hml__store *s, const json_t *m, const hml__collection_info *ci)
{
	json_t *rec;
	long max = 0;
	size_t i;

	json_array_foreach(json_object_get(m, ci->name), i, rec) {
		long v = id_number(json_string_value(json_object_get(rec, "id")), ci->name, 0);

		if (v > max)
			max = v;
	}
	if (ci->subdir) {
		char *d = hml__path_join(s->dir, ci->subdir);
		DIR *dh = d ? opendir(d) : NULL;
		struct dirent *e;

		while (dh && (e = readdir(dh)) != NULL) {
			long v = id_number(e->d_name, ci->name, 1);

			if (v > max)
				max = v;
		}
		if (dh)
			closedir(dh);
		free(d);
	}
	return max + 1;
}

static int exists_error(const hml__store *s, const char *rel)
{
	return hml__error_set(HML_EEXISTS, "'%s' already exists in experiment '%s'; not overwriting it",
	                      rel, s->dir);
}

/* The record as stored: "id" first, the command's fields, then "files"
 * and "provenance". */
static json_t *record_new(const char *id, json_t *record)
{
	json_t *r = json_object(), *files = json_object_get(record, "files"), *v;
	const char *k;

	if (!r || json_object_set_new(r, "id", json_string(id)))
		goto oom;
	json_object_foreach(record, k, v) {
		if (strcmp(k, "id") == 0 || strcmp(k, "files") == 0 || strcmp(k, "provenance") == 0)
			continue;
		if (json_object_set(r, k, v))
			goto oom;
	}
	files = json_is_object(files) ? json_deep_copy(files) : json_object();
	if (!files || json_object_set_new(r, "files", files))
		goto oom;
	return r;

oom:
	json_decref(r);
	return NULL;
}

static int card_write(const hml__store *s, const char *path, const json_t *rec)
{
	return hml__manifest_write(s->dir, path, rec);
}

/* A registration in progress: the files' final names, hashes and how far
 * the moves went, so that a failure can put everything back. */
typedef struct add_plan {
	const hml__collection_info *ci;
	const hml__store_file *files;
	size_t nfiles;
	char id[32];
	char (*hashes)[65];
	char **rels, **finals;   /* "<subdir>/<id><ext>" and its absolute path */
	char *card_rel, *card_abs;
	size_t nrenamed;
	int card_written;
} add_plan;

static void plan_release(add_plan *p)
{
	for (size_t i = 0; p->rels && p->finals && i < p->nfiles; i++) {
		free(p->finals[i]);
		free(p->rels[i]);
	}
	free(p->finals);
	free(p->rels);
	free(p->hashes);
	free(p->card_rel);
	free(p->card_abs);
}

/* The arguments of hml__store_add, checked before anything is touched. */
static int add_check(const hml__collection_info *ci, const char *collection,
                     const json_t *record, const hml__store_file *files, size_t nfiles,
                     int card)
{
	if (!json_is_object(record))
		return hml__error_set(HML_EINVALID, "a record of '%s' must be a JSON object",
		                      collection ? collection : "?");
	if (!ci)
		return hml__error_set(HML_EINVALID, "unknown collection '%s'",
		                      collection ? collection : "(null)");
	if (!ci->subdir && (nfiles || card))
		return hml__error_set(HML_EINVALID, "records of '%s' have no files", ci->name);
	for (size_t i = 0; i < nfiles; i++)
		if (!files[i].role || !files[i].tmp_path || !files[i].ext ||
		    (card && strcmp(files[i].role, "card") == 0))
			return hml__error_set(HML_EINVALID, "file %zu of a '%s' record is not described",
			                      i, ci->name);
	return 0;
}

/* "<subdir>/<id><suffix>" and its absolute path. */
static int plan_name(const hml__store *s, const add_plan *p, const char *suffix,
                     char **rel, char **abs)
{
	size_t len = strlen(p->ci->subdir) + strlen(p->id) + strlen(suffix) + 2;

	if (!(*rel = malloc(len)))
		return hml__error_oom();
	snprintf(*rel, len, "%s/%s%s", p->ci->subdir, p->id, suffix);
	return (*abs = hml__store_path(s, *rel)) ? 0 : HML_ENOMEM;
}

/* The final names of the files and of the card: distinct, and none may
 * exist (an artefact is never overwritten). */
static int plan_names(const hml__store *s, add_plan *p, int card)
{
	struct stat st;
	int rc;

	for (size_t i = 0; i < p->nfiles; i++) {
		if ((rc = plan_name(s, p, p->files[i].ext, &p->rels[i], &p->finals[i])) < 0)
			return rc;
		for (size_t j = 0; j < i; j++)
			if (strcmp(p->rels[j], p->rels[i]) == 0)
				return hml__error_set(HML_EINVALID,
					"two files of record '%s' would both be '%s'", p->id, p->rels[i]);
		if (lstat(p->finals[i], &st) == 0)
			return exists_error(s, p->rels[i]);
	}
	if (!card)
		return 0;
	if ((rc = plan_name(s, p, ".json", &p->card_rel, &p->card_abs)) < 0)
		return rc;
	for (size_t i = 0; i < p->nfiles; i++)
		if (strcmp(p->rels[i], p->card_rel) == 0)
			return hml__error_set(HML_EINVALID,
				"a file of record '%s' would overwrite its card '%s'", p->id, p->card_rel);
	return lstat(p->card_abs, &st) == 0 ? exists_error(s, p->card_rel) : 0;
}

/* Rename the files to their final names and list them in rec["files"]. */
static int plan_move(const hml__store *s, add_plan *p, json_t *rec)
{
	json_t *fobj = json_object_get(rec, "files");

	for (size_t i = 0; i < p->nfiles; i++) {
		int rc = hml__beneath_rename(s->dir, p->files[i].tmp_path, p->finals[i], 1);

		if (rc == HML_EEXISTS)
			return exists_error(s, p->rels[i]);
		if (rc == HML_EIO)
			return hml__error_set(HML_EIO, "cannot move '%s' to '%s': %s",
			                      p->files[i].tmp_path, p->finals[i], strerror(errno));
		if (rc < 0)
			return rc;
		p->nrenamed++;
		if (json_object_set_new(fobj, p->files[i].role, json_string(p->rels[i])))
			return hml__error_oom();
	}
	if (p->card_rel && json_object_set_new(fobj, "card", json_string(p->card_rel)))
		return hml__error_oom();
	return 0;
}

/* Provenance, then the card: the card is the whole record, so its own
 * hash can only be in the manifest's copy. */
static int plan_seal(const hml__store *s, add_plan *p, json_t *rec)
{
	char card_hash[65];
	json_t *prov;
	int rc;

	if (!(prov = hml__store_provenance_new((const char *const *)p->rels, p->hashes, p->nfiles)))
		return HML_ENOMEM;
	json_object_set_new(rec, "provenance", prov);
	if (!p->card_rel)
		return 0;
	if ((rc = card_write(s, p->card_abs, rec)) < 0)
		return rc;
	p->card_written = 1;
	if ((rc = hml__sha256_file(p->card_abs, card_hash)) < 0)
		return rc;
	json_object_set_new(json_object_get(prov, "sha256"), p->card_rel, json_string(card_hash));
	return 0;
}

/* Put every file back where the caller had it, keeping the error. */
static void plan_undo(const hml__store *s, add_plan *p)
{
	hml__error_saved saved;

	hml__error_save(&saved);
	if (p->card_written)
		hml__beneath_unlink(s->dir, p->card_abs);
	while (p->nrenamed-- > 0)
		hml__beneath_rename(s->dir, p->finals[p->nrenamed], p->files[p->nrenamed].tmp_path, 0);
	hml__error_restore(&saved);
}

int hml__store_add(hml__store *s, const char *collection, json_t *record,
                   const hml__store_file *files, size_t nfiles, int card,
                   char *id_out, size_t id_size)
{
	add_plan p = { hml__store_collection_find(collection), files, nfiles, "", NULL, NULL, NULL,
	               NULL, NULL, 0, 0 };
	json_t *m = NULL, *rec = NULL;
	int fd = -1, rc;

	if (id_out && id_size)
		id_out[0] = '\0';
	if ((rc = add_check(p.ci, collection, record, files, nfiles, card)) < 0)
		goto done;
	p.hashes = calloc(nfiles + 1, sizeof(*p.hashes));
	p.finals = calloc(nfiles + 1, sizeof(*p.finals));
	p.rels = calloc(nfiles + 2, sizeof(*p.rels));
	if (!p.hashes || !p.finals || !p.rels) {
		rc = hml__error_oom();
		goto done;
	}
	/* Hash before taking the lock: a large data file keeps no one waiting. */
	for (size_t i = 0; i < nfiles; i++)
		if (!files[i].make && (rc = hml__sha256_file(files[i].tmp_path, p.hashes[i])) < 0)
			goto done;

	if ((rc = hml__store_lock_take(s, &fd)) < 0 || (rc = hml__manifest_load(s->manifest_path, &m)) < 0)
		goto done;
	/* Made by the grammar the readers check (ids.h): one contract. */
	if ((rc = hml__id_format(p.id, sizeof(p.id), p.ci->name, next_id(s, m, p.ci))) < 0)
		goto done;
	for (size_t i = 0; i < nfiles; i++)
		if (files[i].make &&
		    ((rc = files[i].make(files[i].tmp_path, p.id, files[i].payload)) < 0 ||
		     (rc = hml__sha256_file(files[i].tmp_path, p.hashes[i])) < 0))
			goto done;
	if (!(rec = record_new(p.id, record))) {
		rc = hml__error_oom();
		goto done;
	}
	if ((rc = plan_names(s, &p, card)) < 0 || (rc = plan_move(s, &p, rec)) < 0 ||
	    (rc = plan_seal(s, &p, rec)) < 0)
		goto done;
	if (json_array_append(json_object_get(m, p.ci->name), rec)) {
		rc = hml__error_oom();
		goto done;
	}
	if ((rc = hml__manifest_write(s->dir, s->manifest_path, m)) < 0)
		goto done;
	hml__store_manifest_replace(s, m);
	m = NULL;
	if (id_out && id_size)
		snprintf(id_out, id_size, "%s", p.id);

done:
	if (rc < 0)
		plan_undo(s, &p);
	hml__lock_release(fd);
	plan_release(&p);
	json_decref(rec);
	json_decref(m);
	json_decref(record);
	return rc;
}

int hml__store_update(hml__store *s, int (*fn)(json_t *manifest, void *payload),
                      void *payload)
{
	json_t *m = NULL;
	int fd = -1, rc;

	if ((rc = hml__store_lock_take(s, &fd)) < 0)
		goto done;
	if ((rc = hml__manifest_load(s->manifest_path, &m)) < 0)
		goto done;
	if ((rc = fn(m, payload)) < 0)
		goto done;
	/* Whatever fn did, the manifest written must read back. */
	if ((rc = hml__manifest_validate(s->manifest_path, m)) < 0) {
		hml__error_saved why;

		hml__error_save(&why);
		rc = hml__error_set(HML_EINVALID, "an update of experiment '%s' was not written: %s",
		                    s->dir, why.message);
		goto done;
	}
	if ((rc = hml__manifest_write(s->dir, s->manifest_path, m)) < 0)
		goto done;
	hml__store_manifest_replace(s, m);
	m = NULL;
	rc = 0;

done:
	hml__lock_release(fd);
	json_decref(m);
	return rc;
}
