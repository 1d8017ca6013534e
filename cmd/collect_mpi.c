/*
 * cmd/collect_mpi.c - the ranks' files of an MPI workflow's run as one
 * data set (collect_mpi.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "collect_mpi.h"
#include "core/error.h"
#include "core/rankfile.h"
#include "core/util.h"
#include "run/argv.h"
#include "sys/fsutil.h"

int collect_mpi_launcher_find(char ***launcher, const hml__workflow *w)
{
	char *found;

	*launcher = NULL;
	if (!w->launcher)
		return 0;
	if (hml__argv_copy(launcher, (const char *const *)w->launcher, -1) < 0)
		return hml_error_last()->code;
	if (strchr((*launcher)[0], '/')) {
		if (access((*launcher)[0], X_OK) == 0)
			return 0;
		found = NULL;
	} else {
		found = hml__find_on_path((*launcher)[0]);
	}
	if (!found) {
		int rc = hml__error_set(HML_ENOTFOUND, "launcher '%s' of workflow '%s' is not "
		                        "found%s (is MPI installed?)", (*launcher)[0], w->name,
		                        strchr((*launcher)[0], '/') ? " or not executable"
		                                                     : " on PATH");
		hml__strv_free(*launcher);
		*launcher = NULL;
		return rc;
	}
	free((*launcher)[0]);
	(*launcher)[0] = found;
	return 0;
}

int collect_mpi_launcher(char ***launcher, int *ranks, const hml__workflow *w,
                         int ranks_opt, const char *cmd)
{
	*launcher = NULL;
	*ranks = ranks_opt > 0 ? ranks_opt : w->ranks;
	if (!w->launcher) {
		if (*ranks > 1) {
			cmd_error("%s: --ranks %d needs an MPI workflow, and workflow '%s' has "
			          "no \"launcher\" (hml-workflow(5))", cmd, *ranks, w->name);
			return HML_EXIT_USAGE;
		}
		return 0;
	}
	if (collect_mpi_launcher_find(launcher, w) < 0) {
		if (hml_error_last()->code == HML_ENOMEM)
			return cmd_fail(HML_ENOMEM);
		cmd_error("%s: %s", cmd, hml_error_last()->message);
		return HML_EXIT_INVALID;
	}
	return 0;
}

int collect_mpi_prepare(collect_mpi *m, const char *db, int ranks)
{
	int rc;

	m->ranks = ranks;
	if (!(m->paths = calloc((size_t)ranks + 1, sizeof(*m->paths))) ||
	    !(m->parts = calloc((size_t)ranks, sizeof(*m->parts))) ||
	    !(m->roles = calloc((size_t)ranks + 1, sizeof(*m->roles))) ||
	    !(m->exts = calloc((size_t)ranks + 1, sizeof(*m->exts))) ||
	    !(m->names = calloc((size_t)ranks + 1, sizeof(*m->names))) ||
	    !(m->lost = calloc((size_t)ranks + 1, sizeof(*m->lost))))
		return hml__error_oom();
	for (int k = 0; k < ranks; k++) {
		if ((rc = hml__rankfile_path(&m->paths[k], db, k)) < 0)
			return rc;
		/* The runtime would add a run to it: a fresh name must be free. */
		if (access(m->paths[k], F_OK) == 0)
			return hml__error_set(HML_EEXISTS, "rank %d's file '%s' exists already", k,
			                      m->paths[k]);
		m->parts[k].path = m->paths[k];
	}
	return 0;
}

int collect_mpi_lost(collect_mpi *m, const char *prof, const char *why)
{
	char *gone = calloc((size_t)m->ranks + 1, 1), text[600];
	int lost = 0, done = 0;

	if (!gone)
		return -1;
	for (int k = 0; k < m->ranks; k++) {
		char *own = NULL;

		if (hml__rankfile_path(&own, prof, k) < 0) {
			free(gone);
			return -1;
		}
		gone[k] = access(own, F_OK) != 0;
		done += !gone[k];
		free(own);
	}
	snprintf(text, sizeof(text), "it did not finish a run (%s; no profile at its exit: "
	         "killed or crashed)", why);
	for (int k = 0; done && k < m->ranks; k++)
		if (gone[k] && !m->lost[k]) {
			m->lost[k] = hml__strdup(text);
			lost++;
		}
	free(gone);
	return done ? lost : -1;
}

int collect_mpi_view(collect_mpi *m, hml__store *s)
{
	hml__coll_vds_part *kept = calloc((size_t)m->ranks + 1, sizeof(*kept));
	size_t n = 0;
	int rc;

	if (!kept)
		return hml__error_oom();
	if (!(m->view = hml__store_tmp_create(s, "data", ".h5"))) {
		free(kept);
		return hml_error_last()->code;
	}
	for (int k = 0; k < m->ranks; k++)   /* a lost rank's file is not read */
		if (!m->lost[k])
			kept[n++] = m->parts[k];
	rc = hml__coll_vds_build(m->view, kept, n, &m->used);
	for (int k = 0, i = 0; rc == 0 && k < m->ranks; k++) {
		if (!m->lost[k])
			m->parts[k] = kept[i++];
		else {
			m->parts[k].used = 0;
			snprintf(m->parts[k].why, sizeof(m->parts[k].why), "%s", m->lost[k]);
		}
		if (!m->parts[k].used)
			cmd_warn("rank %d of %d left out of the data set: %s", k, m->ranks,
			         m->parts[k].why);
	}
	free(kept);
	return rc;
}

/* The store's hook: the view again, over the final names of the files. */
static int make_view(const char *tmp_path, const char *id, void *payload)
{
	collect_mpi *m = payload;
	hml__coll_vds_part *used = calloc((size_t)m->ranks + 1, sizeof(*used));
	char base[64];
	size_t n = 0, got = 0;
	int rc = 0;

	if (!used)
		return hml__error_oom();
	snprintf(base, sizeof(base), "%s.h5", id);
	for (int k = 0; k < m->ranks && rc == 0; k++) {
		if (!m->parts[k].used)
			continue;
		free(m->names[k]);
		m->names[k] = NULL;
		if ((rc = hml__rankfile_path(&m->names[k], base, k)) < 0)
			break;
		used[n].path = m->paths[k];
		used[n++].name = m->names[k];
	}
	if (rc == 0 && (rc = hml__coll_vds_build(tmp_path, used, n, &got)) == 0 && got != n)
		rc = hml__error_set(HML_EINVALID, "the ranks' files changed while they were "
		                    "registered (%zu of %zu readable)", got, n);
	free(used);
	return rc;
}

int collect_mpi_files(collect_mpi *m, const char *tmp_data, hml__store_file *files,
                      size_t *n)
{
	int rc;

	files[0] = (hml__store_file){ "data", tmp_data, ".h5", make_view, m };
	*n = 1;
	for (int k = 0; k < m->ranks; k++) {
		char *name = NULL;

		if (!m->parts[k].used)
			continue;
		/* "data.r0003" and ".r0003.h5": the rank rule of the role and of
		 * the data file's name (d1.h5 -> d1.r0003.h5). */
		if ((rc = hml__rankfile_path(&m->roles[k], "data", k)) < 0 ||
		    (rc = hml__rankfile_path(&name, "x.h5", k)) < 0)
			return rc;
		m->exts[k] = hml__strdup(name + 1);
		free(name);
		if (!m->exts[k])
			return hml__error_oom();
		files[(*n)++] = (hml__store_file){ m->roles[k], m->paths[k], m->exts[k], NULL, NULL };
	}
	return 0;
}

json_t *collect_mpi_json(const collect_mpi *m, char *const *launcher)
{
	json_t *l = json_array(), *in = json_array(), *out = json_array();

	for (; launcher && *launcher; launcher++)
		json_array_append_new(l, json_string(*launcher));
	for (int k = 0; k < m->ranks; k++) {
		if (m->parts[k].used)
			json_array_append_new(in, json_integer(k));
		else
			json_array_append_new(out, json_pack("{s:i, s:s, s:s}", "rank", k, "file",
			                      m->paths[k], "why", m->parts[k].why));
	}
	return json_pack("{s:i, s:o, s:o, s:o}", "ranks", m->ranks, "launcher", l,
	                 "collected", in, "left_out", out);
}

int collect_mpi_times_add(const collect_mpi *m, hml__cost_times *t, size_t n,
                          const char *prof)
{
	int rc = 0;

	for (int k = 0; k < m->ranks; k++) {
		char *own = NULL;

		if (hml__rankfile_path(&own, prof, k) < 0)
			return hml_error_last()->code;
		if (rc == 0 && !m->lost[k])
			rc = hml__cost_times_add(t, n, own);
		unlink(own);
		free(own);
	}
	return rc;
}

int collect_mpi_run_lost(collect_mpi *m, const char *prof, char *why, hml__cost_times **t,
                         size_t n)
{
	int lost = collect_mpi_lost(m, prof, why);

	if (lost <= 0)
		return 0;
	cmd_warn("%s; %d of %d ranks did not finish: the others' data is kept", why, lost,
	         m->ranks);
	why[0] = '\0';
	if (*t && collect_mpi_times_add(m, *t, n, prof) < 0) {
		free(*t);
		*t = NULL;
	}
	return 1;
}

void collect_mpi_remove(const collect_mpi *m)
{
	for (int k = 0; m->paths && k < m->ranks; k++)
		if (m->paths[k])
			unlink(m->paths[k]);
	if (m->view)
		unlink(m->view);
}

/* A list with holes (the ranks left out). */
static void free_n(char **v, int n)
{
	for (int k = 0; v && k < n; k++)
		free(v[k]);
	free(v);
}

void collect_mpi_release(collect_mpi *m)
{
	free_n(m->paths, m->ranks);
	free_n(m->roles, m->ranks);
	free_n(m->exts, m->ranks);
	free_n(m->names, m->ranks);
	free_n(m->lost, m->ranks);
	free(m->parts);
	free(m->view);
	memset(m, 0, sizeof(*m));
}
