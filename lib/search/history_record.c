/*
 * lib/search/history_record.c - the "searches" record of an experiment
 * (history.h): registered and updated, its space's digest, and the lock
 * that lets one search at a time run.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "core/beneath.h"
#include "core/error.h"
#include "search/history.h"
#include "sys/fsutil.h"

int hml__json_sha256(const json_t *v, char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char *text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY |
	                           JSON_REAL_PRECISION(17));

	if (!text)
		return hml__error_oom();
	if (EVP_Digest(text, strlen(text), md, &mdlen, EVP_sha256(), NULL) != 1) {
		free(text);
		return hml__error_set(HML_ERROR, "SHA-256 failed");
	}
	free(text);
	for (unsigned i = 0; i < mdlen && i < 32; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[64] = '\0';
	return 0;
}

typedef struct set_args {
	const char *id;
	const json_t *fields;
	const char *dir;
} set_args;

static int set_fields(json_t *m, void *payload)
{
	const set_args *a = payload;
	json_t *rec = hml__manifest_find(m, "searches", a->id);

	if (rec)
		return json_object_update(rec, (json_t *)a->fields) ? hml__error_oom() : 0;
	return hml__error_set(HML_ENOTFOUND, "no search '%s' in experiment '%s'", a->id, a->dir);
}

int hml__search_set(hml__store *s, const char *id, const json_t *fields)
{
	set_args a = { id, fields, hml__store_dir(s) };

	return hml__store_update(s, set_fields, &a);
}

int hml__search_register(hml__store *s, json_t *record, char *id_out, size_t id_size)
{
	char rel[96], *dir = NULL;
	json_t *files = NULL;
	int rc;

	if ((rc = hml__store_add(s, "searches", record, NULL, 0, 0, id_out, id_size)) < 0)
		return rc;
	snprintf(rel, sizeof(rel), "search/%s", id_out);
	if (!(dir = hml__store_path(s, rel)))
		return hml__error_oom();
	if ((rc = hml__beneath_mkdir_p(hml__store_dir(s), dir)) < 0) {
		if (rc == HML_EIO)
			rc = hml__error_set(HML_EIO, "cannot create '%s': %s", dir, strerror(errno));
		goto done;
	}
	snprintf(rel, sizeof(rel), "search/%s/%s", id_out, HML__HISTORY_FILE);
	if (!(files = json_pack("{s:{s:s}}", "files", "history", rel))) {
		rc = hml__error_oom();
		goto done;
	}
	rc = hml__search_set(s, id_out, files);
done:
	json_decref(files);
	free(dir);
	return rc;
}

int hml__search_lock(hml__store *s, int *fd)
{
	char *dir = hml__store_path(s, "search"), *path = NULL, text[64];
	int rc = 0, n;

	*fd = -1;
	if (!dir || !(path = hml__path_join(dir, ".lock"))) {
		rc = hml__error_oom();
		goto done;
	}
	if ((rc = hml__beneath_mkdir_p(hml__store_dir(s), dir)) < 0 ||
	    (rc = *fd = hml__beneath_open(hml__store_dir(s), path, O_RDWR | O_CREAT, 0666)) < 0) {
		*fd = -1;
		if (rc == HML_EIO)
			rc = hml__error_set(HML_EIO, "cannot lock '%s': %s", path, strerror(errno));
		goto done;
	}
	rc = 0;
	/* A reader's probe (hml__search_holder) holds it for an instant. */
	for (int i = 0; i < 20 && flock(*fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK; i++)
		usleep(10000);
	if (flock(*fd, LOCK_EX | LOCK_NB) < 0) {
		ssize_t got = pread(*fd, text, sizeof(text) - 1, 0);
		long pid = 0;

		text[got > 0 ? got : 0] = '\0';
		pid = strtol(text, NULL, 10);
		rc = errno == EWOULDBLOCK
		     ? hml__error_set(HML_ELOCKED, "a search is already running in experiment '%s' "
		                      "(pid %ld)", hml__store_dir(s), pid)
		     : hml__error_set(HML_EIO, "cannot lock '%s': %s", path, strerror(errno));
		close(*fd);
		*fd = -1;
		goto done;
	}
	n = snprintf(text, sizeof(text), "%ld\n", (long)getpid());
	if (ftruncate(*fd, 0) == 0 && n > 0)
		(void)!pwrite(*fd, text, (size_t)n, 0);
done:
	free(path);
	free(dir);
	return rc;
}

void hml__search_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

void hml__search_lock_name(int fd, const char *id)
{
	char text[64];
	int n = snprintf(text, sizeof(text), "%ld %s\n", (long)getpid(), id);

	if (fd >= 0 && n > 0 && (size_t)n < sizeof(text) && ftruncate(fd, 0) == 0)
		(void)!pwrite(fd, text, (size_t)n, 0);
}

int hml__search_holder(const hml__store *s, char *id, size_t size)
{
	char *path = hml__store_path(s, "search/.lock"), text[64];
	const char *p;
	ssize_t got;
	int fd, held;

	if (id && size)
		id[0] = '\0';
	if (!path)
		return hml__error_oom();
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int rc = errno == ENOENT ? 0 : hml__error_set(HML_EIO, "cannot probe '%s': %s", path,
		                                               strerror(errno));
		free(path);
		return rc;
	}
	free(path);
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		flock(fd, LOCK_UN);
		close(fd);
		return 0;
	}
	held = errno == EWOULDBLOCK;
	got = pread(fd, text, sizeof(text) - 1, 0);
	text[got > 0 ? got : 0] = '\0';
	close(fd);
	if (!held)
		return hml__error_set(HML_EIO, "cannot probe the search lock: %s", strerror(errno));
	p = text + strcspn(text, " \n");
	p += strspn(p, " ");
	if (id && size)
		snprintf(id, size, "%.*s", (int)strcspn(p, " \n"), p);
	return 1;
}

const char *hml__search_status(const hml__store *s, const json_t *rec)
{
	const char *status = json_string_value(json_object_get(rec, "status"));
	const char *sid = json_string_value(json_object_get(rec, "id"));
	char id[32];
	int held;

	if (!status || strcmp(status, "running") != 0 || !sid)
		return status;
	held = hml__search_holder(s, id, sizeof(id));
	if (held < 0)
		return status;
	/* A live holder runs this search, or has not named its search yet. */
	if (held && (!id[0] || strcmp(id, sid) == 0))
		return status;
	return "interrupted";
}
