/*
 * lib/run/workflow_find.c - where a workflow is found: the search path of
 * bundled workflows (hml__workflow_search_path, workflow.h), a name looked
 * up along it, and a path given on the command line (workflow_keys.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "core/util.h"
#include "run/workflow_keys.h"
#include "sys/fsutil.h"

char *hml__workflow_search_path(void)
{
	const char *env = getenv("HML_WORKFLOW_PATH");
	char *exe = hml__exe_dir(), *out = NULL, *slash;
	size_t len;

	if (!exe)
		return NULL;
	/* <exe>/.. lexically: /proc/self/exe is already a real path. */
	if ((slash = strrchr(exe, '/')) != NULL && slash != exe)
		*slash = '\0';
	else
		strcpy(exe, "/");
	len = (env ? strlen(env) : 0) + 2 * strlen(exe) + 64;
	if (!(out = malloc(len))) {
		hml__error_oom();
		goto done;
	}
	snprintf(out, len, "%s%s%s/workflows:%s/libexec/hml/workflows",
	         env && *env ? env : "", env && *env ? ":" : "",
	         strcmp(exe, "/") == 0 ? "" : exe, strcmp(exe, "/") == 0 ? "" : exe);
done:
	free(exe);
	return out;
}

/* A name found nowhere; when ./NAME holds a workflow.json, that is most
 * likely what was meant, and a name is never looked up in the working
 * directory: say so. */
static int unknown_name(const char *name, const char *dirs)
{
	char local[HML__WF_LABEL_MAX + 32];
	struct stat st;

	snprintf(local, sizeof(local), "%s/workflow.json", name);
	if (stat(local, &st) == 0 && S_ISREG(st.st_mode))
		return hml__error_set(HML_ENOTFOUND,
			"unknown workflow '%s'; did you mean ./%s? (looked in: %s)", name, name, dirs);
	return hml__error_set(HML_ENOTFOUND, "unknown workflow '%s' (looked in: %s)", name, dirs);
}

/* Find NAME/workflow.json along the search path (*out malloc'ed). */
int hml__wf_find_bundled(const char *name, char **out)
{
	char *path = NULL, *list = NULL, *dirs = NULL, *tok, *save = NULL;
	size_t dlen = 0;
	int rc = 0;

	*out = NULL;
	if (!hml__wf_name_ok(name)) {
		rc = hml__error_set(HML_EINVALID,
			"invalid workflow name '%s': use " HML__WF_NAME_CHARS ", or give a path to a workflow.json",
			name);
		goto done;
	}
	if (!(path = hml__workflow_search_path()) || !(list = hml__strdup(path))) {
		/* Either call recorded why (no memory, no /proc/self/exe). */
		rc = hml_error_last()->code < 0 ? hml_error_last()->code : HML_ENOMEM;
		goto done;
	}
	if (!(dirs = calloc(1, strlen(path) * 2 + 1))) {
		rc = hml__error_oom();
		goto done;
	}
	for (tok = strtok_r(list, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
		size_t len = strlen(tok) + strlen(name) + 32;
		char *cand = malloc(len);
		struct stat st;

		if (!cand) {
			rc = hml__error_oom();
			goto done;
		}
		snprintf(cand, len, "%s/%s/workflow.json", tok, name);
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
			*out = cand;
			goto done;
		}
		free(cand);
		dlen += (size_t)sprintf(dirs + dlen, "%s%s", dlen ? ", " : "", tok);
	}
	rc = unknown_name(name, dlen ? dirs : "nothing");
done:
	free(path);
	free(list);
	free(dirs);
	return rc;
}

/* A path names a workflow.json, or a directory holding one. Anything but
 * a regular file is refused before it is opened (a FIFO would block). */
int hml__wf_locate_path(const char *given, char **out)
{
	struct stat st;
	char *file;
	int rc;

	*out = NULL;
	if (stat(given, &st) != 0)
		return hml__error_set(HML_ENOTFOUND, "cannot read workflow '%s': %s", given,
		                      strerror(errno));
	if (S_ISDIR(st.st_mode)) {
		if (!(file = hml__path_join(given, "workflow.json")))
			return HML_ENOMEM;
		if (stat(file, &st) != 0) {
			rc = hml__error_set(HML_ENOTFOUND, "cannot read workflow '%s': %s",
			                    file, strerror(errno));
			free(file);
			return rc;
		}
	} else if (!(file = hml__strdup(given))) {
		return HML_ENOMEM;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = hml__error_set(HML_EINVALID, "cannot read workflow '%s': not a regular file",
		                    file);
		free(file);
		return rc;
	}
	*out = file;
	return 0;
}
