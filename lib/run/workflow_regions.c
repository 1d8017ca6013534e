/*
 * lib/run/workflow_regions.c - the "regions" section of workflow.json
 * (workflow_keys.h): each region's label, model (family, architecture,
 * categorical features) and training defaults, whose names and types are
 * checked when the workflow loads.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "run/workflow_keys.h"
#include "core/conserve.h"
#include "train/arch.h"
#include "train/categorical.h"
#include "train/train.h"

static int check_train(const hml__wf_ctx *v, const json_t *train, const char *parent)
{
	static const struct { const char *key; char type; } known[] = {
		{ "epochs", 'i' }, { "batch", 'i' }, { "lr", 'n' }, { "weight_decay", 'n' },
		{ "optimizer", 's' }, { "schedule", 's' }, { "patience", 'i' },
		{ "clip", 'n' }, { "seed", 'i' }, { "threads", 'i' },
		{ "val_fraction", 'n' }, { "test_fraction", 'n' }, { "nonfinite", 's' },
		{ "max_seconds", 'n' }, { "loss", 's' }, { "rollout", 'i' },
	};
	const char *key;
	json_t *val;

	json_object_foreach((json_t *)train, key, val) {
		char full[256];
		size_t i;

		hml__wf_key_join(full, sizeof(full), parent, key);
		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (strcmp(known[i].key, key) == 0)
				break;
		if (i == sizeof(known) / sizeof(known[0]))
			return hml__error_set(HML_EINVALID, "workflow '%s': unknown key '%s'",
			                      v->path, full);
		if (known[i].type == 'i' && (!json_is_integer(val) || json_integer_value(val) < 0))
			return hml__wf_bad_key(v, full, "must be a non-negative integer");
		if (known[i].type == 'n' && (!json_is_number(val) || json_number_value(val) < 0))
			return hml__wf_bad_key(v, full, "must be a non-negative number");
		if (known[i].type == 's' && !json_is_string(val))
			return hml__wf_bad_key(v, full, "must be a string");
		if (strcmp(key, "loss") == 0 && hml__train_loss_check(json_string_value(val)) < 0)
			return hml__wf_bad_key(v, full, "names an %s", hml_error_last()->message);
	}
	return 0;
}

/* model.categorical (lib/train/categorical.h): MLP family only; kept in
 * its canonical "F:K,..." form, the training option. */
static int parse_categorical(const hml__wf_ctx *v, const json_t *model, const char *mparent,
                             hml__workflow_region *r)
{
	const json_t *arr = json_object_get(model, "categorical");
	hml__categorical *c = NULL;
	char where[PATH_MAX + 128];
	size_t n;
	int rc;

	if (!arr)
		return 0;
	snprintf(where, sizeof(where), "workflow '%s': %s.categorical", v->path, mparent);
	if ((rc = hml__categorical_from_json(&c, &n, arr, where)) < 0)
		return rc;
	if (n > 0 && strcmp(r->family, "mlp") != 0)
		rc = hml__error_set(HML_EINVALID, "%s: categorical features are for the mlp family, "
		                    "not '%s'", where, r->family);
	else if (n > 0 && !(r->categorical = malloc(n * 48)))
		rc = hml__error_oom();
	else if (n > 0)
		hml__categorical_format(r->categorical, n * 48, c, n);
	free(c);
	return rc;
}

/* "conserve": a spec (lib/core/conserve.h), its grammar checked here and
 * kept in the canonical form HML_CONSERVE_<LABEL> carries; its fit to the
 * output's shape is the runtime's, at the model's first call. */
static int parse_conserve(const hml__wf_ctx *v, const json_t *item, const char *parent,
                          hml__workflow_region *r)
{
	hml__conserve c;
	char full[96], canonical[256];
	int rc;

	if ((rc = hml__wf_get_string(v, item, parent, "conserve", 0, &r->conserve)) < 0 ||
	    !r->conserve)
		return rc;
	snprintf(full, sizeof(full), "%s.conserve", parent);
	if (hml__conserve_parse(&c, r->conserve) < 0 ||
	    hml__conserve_format(canonical, sizeof(canonical), &c) < 0)
		return hml__wf_bad_key(v, full, "is not a spec (%s)", hml_error_last()->message);
	free(r->conserve);
	return (r->conserve = hml__strdup(canonical)) ? 0 : HML_ENOMEM;
}

static int parse_region(const hml__wf_ctx *v, const json_t *item, size_t idx,
                        hml__workflow_region *r)
{
	static const char *const keys[] = { "label", "batch", "model", "conserve", NULL };
	static const char *const model_keys[] = { "family", "arch", "train",
	                                          "search_space", "categorical", NULL };
	char parent[64], mparent[80], full[128];
	json_t *model, *train, *space;
	int rc;

	snprintf(parent, sizeof(parent), "regions[%zu]", idx);
	snprintf(mparent, sizeof(mparent), "%s.model", parent);
	if (!json_is_object(item))
		return hml__wf_bad_key(v, parent, "must be an object");
	if ((rc = hml__wf_check_keys(v, item, parent, keys)) < 0 ||
	    (rc = hml__wf_get_string(v, item, parent, "label", 1, &r->label)) < 0 ||
	    (rc = hml__wf_get_int(v, item, parent, "batch", 0, 0, INT64_MAX, &r->batch)) < 0 ||
	    (rc = parse_conserve(v, item, parent, r)) < 0 ||
	    (rc = hml__wf_get_object(v, item, parent, "model", 1, &model)) < 0 ||
	    (rc = hml__wf_check_keys(v, model, mparent, model_keys)) < 0 ||
	    (rc = hml__wf_get_string(v, model, mparent, "family", 1, &r->family)) < 0 ||
	    (rc = hml__wf_get_string(v, model, mparent, "arch", 0, &r->arch)) < 0 ||
	    (rc = hml__wf_get_object(v, model, mparent, "train", 0, &train)) < 0 ||
	    (rc = hml__wf_get_object(v, model, mparent, "search_space", 0, &space)) < 0)
		return rc;
	snprintf(full, sizeof(full), "%s.label", parent);
	if (!hml__wf_name_ok(r->label))
		return hml__wf_bad_key(v, full, "is '%s': a region label has at most %d " HML__WF_NAME_CHARS,
		                       r->label, HML__WF_LABEL_MAX);
	snprintf(full, sizeof(full), "%s.family", mparent);
	if (!hml__arch_family_json(r->family))
		return hml__wf_bad_key(v, full, "must be a model family (%s), not '%s'", hml__arch_families(),
		                       r->family);
	if (r->arch) {
		size_t n = strlen(r->family);

		snprintf(full, sizeof(full), "%s.arch", mparent);
		if (strncmp(r->arch, r->family, n) != 0 ||
		    (r->arch[n] != ':' && r->arch[n] != '\0'))
			return hml__wf_bad_key(v, full, "is '%s', which is not of family '%s'",
			                       r->arch, r->family);
	}
	snprintf(full, sizeof(full), "%s.train", mparent);
	if ((train && (rc = check_train(v, train, full)) < 0) ||
	    (rc = parse_categorical(v, model, mparent, r)) < 0)
		return rc;
	r->train = train;
	r->search_space = space;
	return 0;
}

int hml__wf_parse_regions(const hml__wf_ctx *v, hml__workflow *w)
{
	json_t *regions, *item;
	size_t i, j;
	int rc;

	if ((rc = hml__wf_get(v, w->json, "", "regions", 1, &regions)) < 0)
		return rc;
	if (!json_is_array(regions) || json_array_size(regions) == 0)
		return hml__wf_bad_key(v, "regions", "must be a non-empty array of objects");
	w->nregions = json_array_size(regions);
	if (!(w->regions = calloc(w->nregions, sizeof(*w->regions))))
		return hml__error_oom();
	json_array_foreach(regions, i, item) {
		if ((rc = parse_region(v, item, i, &w->regions[i])) < 0)
			return rc;
		for (j = 0; j < i; j++)
			if (strcmp(w->regions[j].label, w->regions[i].label) == 0) {
				char full[64];

				snprintf(full, sizeof(full), "regions[%zu].label", i);
				return hml__wf_bad_key(v, full, "repeats label '%s' of regions[%zu]",
				                       w->regions[i].label, j);
			}
	}
	return 0;
}

