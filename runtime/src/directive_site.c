/*
 * runtime/src/directive_site.c - the sites of translated directives
 * (hml/directive.h): the regions they open per label, bound anew (batch
 * sites) or checked (row sites) when their lengths change, and what is
 * left of them at process exit.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/envname.h"
#include "core/error.h"
#include "directive_internal.h"
#include "hml/directive.h"
#include "profile.h"

/* Guards the list of sites and the making of row sites' entries. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static hml_dir_site *sites;

/* HML_<WHAT>_<LABEL> as the runtime names it (lib/core/envname.h). */
static const char *env_region(const char *what, const char *label)
{
	char var[HML_DIR_LABEL_MAX + 32];

	if (hml__envname_region(var, sizeof(var), what, label) < 0)
		return NULL;
	return getenv(var);
}

/* Called by the runtime's exit handler before it writes the regions still
 * registered: write what the sites' regions buffer and free them. Under
 * the fail policy data lost now is an error only the exit status can show
 * (hml/directive.h): one line per region, streams flushed, _Exit(1) (exit()
 * cannot be called again from an exit handler). Under fallback the
 * runtime's handler, which goes on, retries and warns: a region whose flush
 * failed is left to it, not freed (freeing would retry). */
static void sites_at_exit(void)
{
	int lost = 0;

	pthread_mutex_lock(&mu);
	for (hml_dir_site *s = sites; s; s = s->next)
		for (int i = 0; i < s->n; i++) {
			hml_region *r = s->e[i].r;
			s->e[i].r = NULL;
			if (r && hml_region_flush(r) < 0) {
				if (hml_region_on_error(r) == HML_ON_ERROR_FAIL) {
					fprintf(stderr, "hml: error: %s: region '%s': collected data lost at exit: %s\n",
					        s->where, s->e[i].label, hml_error_last()->message);
					lost = 1;
				}
				continue;
			}
			hml_region_free(r);
		}
	pthread_mutex_unlock(&mu);
	if (lost) {
		fflush(NULL);
		_Exit(1);
	}
}

/* The site in the list the exit handler walks, under mu. */
static void site_link(hml_dir_site *s, const char *where)
{
	if (s->registered)
		return;
	if (!sites)
		hml__registry_exit_first(sites_at_exit);
	if (where)
		s->where = where;
	s->next = sites;
	sites = s;
	s->registered = 1;
}

/* Open the region of entry e with the directive's defaults under the
 * environment's settings (hml/directive.h), and bind its maps. */
static int entry_open(hml_dir_site *s, hml_dir_entry *e, const char *mode, const char *model,
                      const char *db, int interleave, double shadow, const hml_dir_map *maps,
                      size_t nmaps, const hml_symbol *sym, size_t nsym)
{
	hml_region_options o = HML_REGION_OPTIONS_INIT;
	int env_model = getenv(HML__ENV_MODEL) || env_region(HML__ENV_MODEL, e->label);
	int rc = 0;

	if (!env_model)
		o.model = model ? model : getenv("SURROGATE_MODEL");
	if (mode && !getenv(HML__ENV_MODE) && !env_region(HML__ENV_MODE, e->label) &&
	    hml_mode_parse(&o.mode, mode) < 0)
		return hml__dir_error(0, s->where, e->label, NULL);
	/* a model mode with no model anywhere: run the original code */
	if (!env_model && !o.model && o.mode != HML_MODE_COLLECT)
		o.mode = HML_MODE_DEFAULT;
	if (!getenv(HML__ENV_DB))
		o.db = db ? db : getenv("HPAC_DB_FILE");
	if (interleave > 0 && !getenv(HML__ENV_INTERLEAVE))
		o.interleave = interleave;
	if (shadow > 0 && !getenv(HML__ENV_SHADOW))
		o.shadow = shadow;
	if (hml_region_open(&e->r, e->label, &o) < 0)
		return hml__dir_error(0, s->where, e->label, NULL);
	for (size_t k = 0; k < nmaps && rc >= 0; k++) {
		const hml_dir_map *m = &maps[k];
		const char *dom = m->domain[0] ? m->domain : NULL;
		rc = m->kind == 0 ? hml_region_input(e->r, m->functor, dom, m->arrays, m->narrays, sym, nsym) :
		     m->kind == 1 ? hml_region_output(e->r, m->functor, dom, m->arrays, m->narrays, sym, nsym) :
		     hml_region_inout(e->r, m->functor, dom, m->arrays, m->narrays, sym, nsym);
	}
	if (rc < 0)
		return hml__dir_error(0, s->where, e->label, NULL);
	if (s->subset)   /* refused for data updated in place: whole calls fall back */
		(void)hml_region_subset_enable(e->r);
	for (size_t k = 0; k < nsym; k++)
		e->sig[k] = sym[k].value;
	e->nsig = nsym;
	return 0;
}

/* Point the maps at this call's arrays (the same shapes as when bound). */
static int entry_rebind(hml_dir_site *s, hml_dir_entry *e, const hml_dir_map *maps, size_t nmaps)
{
	size_t in = 0, out = 0;

	for (size_t k = 0; k < nmaps; k++) {
		hml_tmap *mi = maps[k].kind != 1 ? hml_region_input_map(e->r, in++) : NULL;
		hml_tmap *mo = maps[k].kind != 0 ? hml_region_output_map(e->r, out++) : NULL;
		for (size_t j = 0; j < maps[k].narrays; j++)
			if ((mi && hml_tmap_set_data(mi, j, maps[k].arrays[j].data) < 0) ||
			    (mo && hml_tmap_set_data(mo, j, maps[k].arrays[j].data) < 0))
				return hml__dir_error(0, s->where, e->label, NULL);
	}
	return 0;
}

static int check_label(const char *where, const char *label, size_t nsym)
{
	if (!label || strlen(label) >= HML_DIR_LABEL_MAX || nsym > HML_DIR_SYMS)
		return hml__dir_error(HML_EINVALID, where, label, "the label is missing or too long");
	return 0;
}

static int too_many_labels(const char *where, const char *label)
{
	return hml__dir_error(HML_EINVALID, where, label, "more than 8 labels at one directive");
}

/* The entry of `label` at batch site s, made if new. */
static int batch_entry(hml_dir_entry **out, hml_dir_site *s, const char *label)
{
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->e[i].label, label) == 0) {
			*out = &s->e[i];
			return 0;
		}
	if (s->n == HML_DIR_LABELS)
		return too_many_labels(s->where, label);
	*out = &s->e[s->n++];
	strcpy((*out)->label, label);
	return 0;
}

int hml_dir_begin(hml_dir_site *s, const char *label, const char *mode, int use_model,
                  const char *model, const char *db, int interleave, double shadow,
                  const hml_dir_map *maps, size_t nmaps, const hml_symbol *sym, size_t nsym,
                  int64_t seek)
{
	hml_dir_entry *e = NULL;
	int rc;

	if ((rc = check_label(s->where, label, nsym)) < 0 || (rc = batch_entry(&e, s, label)) < 0)
		return rc;
	if (!s->registered) {
		pthread_mutex_lock(&mu);
		site_link(s, NULL);
		pthread_mutex_unlock(&mu);
	}
	/* other sizes than the region was bound with: bind it anew */
	for (size_t k = 0; e->r && k < nsym; k++)
		if (k >= e->nsig || e->sig[k] != sym[k].value) {
			if (hml_region_flush(e->r) < 0)
				return hml__dir_error(0, s->where, e->label, NULL);
			hml_region_free(e->r);
			e->r = NULL;
		}
	if (!e->r)
		rc = entry_open(s, e, mode, model, db, interleave, shadow, maps, nmaps, sym, nsym);
	else
		rc = entry_rebind(s, e, maps, nmaps);
	if (rc < 0)
		return rc;
	if (seek >= 0 && hml_region_seek(e->r, seek) < 0)
		return hml__dir_error(0, s->where, e->label, NULL);
	s->cur = e;
	if ((rc = hml_region_begin_if(e->r, !use_model)) < 0)
		return hml__dir_error(0, s->where, e->label, NULL);
	return rc;
}

int64_t hml_dir_rows(hml_dir_site *s, const int64_t **idx)
{
	int64_t n = 0;

	if (!s->cur)
		return hml__dir_error(HML_EINVALID, s->where, NULL, "no directive call in progress");
	if (hml_region_rows(s->cur->r, idx, &n) < 0)
		return hml__dir_error(0, s->where, s->cur->label, NULL);
	return n;
}

int hml_dir_end(hml_dir_site *s)
{
	if (!s->cur)
		return hml__dir_error(HML_EINVALID, s->where, NULL, "no directive call in progress");
	if (hml_region_end(s->cur->r) < 0)
		return hml__dir_error(0, s->where, s->cur->label, NULL);
	return 0;
}

/* The entry of `label` at row site s, opened if new. Any thread may call:
 * entries are made under the lock and published by storing n last; a
 * lookup reads n, then only published entries, without the lock. */
static int row_entry(hml_dir_entry **out, hml_dir_site *s, const char *where, const char *label,
                     const char *mode, const char *model, const char *db, int interleave,
                     double shadow, const hml_dir_map *maps, size_t nmaps, const hml_symbol *sym,
                     size_t nsym)
{
	int i, n = __atomic_load_n(&s->n, __ATOMIC_ACQUIRE), rc = 0;

	for (i = 0; i < n; i++)
		if (strcmp(s->e[i].label, label) == 0) {
			*out = &s->e[i];
			return 0;
		}
	pthread_mutex_lock(&mu);
	for (i = 0, *out = NULL; i < s->n && !*out; i++)
		if (strcmp(s->e[i].label, label) == 0)
			*out = &s->e[i];
	if (!*out) {
		hml_dir_entry *e = &s->e[s->n];
		if (s->n == HML_DIR_LABELS) {
			rc = too_many_labels(where, label);
			goto done;
		}
		memset(e, 0, sizeof(*e));
		strcpy(e->label, label);
		site_link(s, where);
		if ((rc = entry_open(s, e, mode, model, db, interleave, shadow, maps, nmaps, sym,
		                     nsym)) < 0)
			goto done;
		__atomic_store_n(&s->n, s->n + 1, __ATOMIC_RELEASE);
		*out = e;
	}
done:
	pthread_mutex_unlock(&mu);
	return rc;
}

int hml_dir_row_begin(hml_dir_site *s, hml_dir_entry **out, const char *where, const char *label,
                      const char *mode, int use_model, const char *model, const char *db,
                      int interleave, double shadow, const hml_dir_map *maps, size_t nmaps,
                      const hml_symbol *sym, size_t nsym)
{
	const void *data[HML_DIR_SYMS];
	hml_dir_entry *e = NULL;
	size_t nd = 0;
	char msg[300];
	int rc;

	if ((rc = check_label(where, label, nsym)) < 0 ||
	    (rc = row_entry(&e, s, where, label, mode, model, db, interleave, shadow, maps, nmaps,
	                    sym, nsym)) < 0)
		return rc;
	/* off mode reads no length: a change does no harm there */
	for (size_t k = 0; k < nsym; k++)
		if (e->sig[k] != sym[k].value && hml_region_mode(e->r) != HML_MODE_OFF) {
			snprintf(msg, sizeof(msg), "a length of a directive inside a loop body changed "
			         "between calls (%lld, then %lld): keep it, or give each length its own "
			         "label() (hml-cc(1))", (long long)e->sig[k], (long long)sym[k].value);
			return hml__dir_error(HML_EINVALID, where, label, msg);
		}
	for (int side = 0; side < 2; side++)
		for (size_t k = 0; k < nmaps; k++)
			if (maps[k].kind != (side ? 0 : 1))
				for (size_t j = 0; j < maps[k].narrays; j++) {
					if (nd == HML_DIR_SYMS)
						return hml__dir_error(HML_EINVALID, where, label,
						                      "more than 64 arrays at one directive");
					data[nd++] = maps[k].arrays[j].data;
				}
	if ((rc = hml_region_row_begin_at(e->r, data, nd, !use_model)) < 0)
		return hml__dir_error(0, where, label, NULL);
	*out = e;
	return rc;
}

int hml_dir_row_end(hml_dir_site *s, hml_dir_entry *e)
{
	if (!e)
		return hml__dir_error(HML_EINVALID, s->where, NULL, "no row call in progress");
	if (hml_region_row_end(e->r) < 0)
		return hml__dir_error(0, s->where, e->label, NULL);
	return 0;
}
