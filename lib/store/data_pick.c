/*
 * lib/store/data_pick.c - the region and data sets a command learns from.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "store/data_pick.h"
#include "store/records.h"

static const char *workflow_of(const hml__dataset_view *d)
{
	return d->workflow_name ? d->workflow_name : "";
}

static int has_rows(const hml__dataset_view *d, const char *label)
{
	return hml__dataset_view_rows(d, label) > 0;
}

static int named(const hml__data_query *q, const char *id)
{
	for (size_t k = 0; k < q->nids; k++)
		if (id && strcmp(q->ids[k], id) == 0)
			return 1;
	return 0;
}

static int push(hml__data_choice *c, const char *id)
{
	const char **grown = realloc(c->ids, (c->n + 1) * sizeof(*grown));

	if (!grown)
		return hml__error_oom();
	c->ids = grown;
	c->ids[c->n++] = id;
	return 0;
}

/* The only region the considered data sets hold rows of. */
static int only_region(hml__data_choice *c, const hml__store *s, const hml__data_query *q)
{
	hml__dataset_view d;
	const json_t *r;
	const char *key, *only = NULL;
	json_t *seen = json_object();     /* labels with rows, as a set */
	char names[512] = "";
	size_t used = 0, nseen;

	if (!seen)
		return hml__error_oom();
	for (size_t i = 0; hml__records_dataset_at(&d, s, i); i++) {
		if (q->nids && !named(q, d.id))
			continue;
		json_object_foreach((json_t *)d.regions, key, r)
			if (has_rows(&d, key)) {
				json_object_set_new(seen, key, json_true());
				only = only ? only : key;
			}
	}
	nseen = json_object_size(seen);
	json_object_foreach(seen, key, r)
		if (used + strlen(key) + 8 < sizeof(names))
			used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s",
			                         used ? ", " : "", key);
	json_decref(seen);
	if (nseen == 0)
		return hml__error_set(HML_EINVALID, "experiment '%s' has no collected rows to %s "
		                      "(run 'hml collect')", hml__store_dir(s),
		                      q->purpose ? q->purpose : "train on");
	if (nseen > 1)
		return hml__error_set(HML_EINVALID, "the data sets hold several regions (%s): "
		                      "choose one with --region", names);
	c->region = only;
	return 0;
}

/* The named data sets: each holds the region, all of one workflow. */
static int pick_named(hml__data_choice *c, const hml__store *s, const hml__data_query *q)
{
	hml__dataset_view d;
	int rc;

	for (size_t k = 0; k < q->nids; k++) {
		if ((rc = hml__records_dataset(&d, s, q->ids[k])) < 0)
			return rc;
		if (!has_rows(&d, c->region))
			return hml__error_set(HML_EINVALID, "data set '%s' has no rows of region '%s'",
			                      q->ids[k], c->region);
		if (c->workflow && strcmp(c->workflow, workflow_of(&d)) != 0)
			return hml__error_set(HML_EINVALID, "data sets '%s' and '%s' come from "
			                      "different workflows", c->ids[0], q->ids[k]);
		c->workflow = workflow_of(&d);
		if ((rc = push(c, d.id)) < 0)
			return rc;
	}
	return 0;
}

/* Why no data set was found for the region. */
static int none_found(const hml__store *s, const hml__data_query *q, const char *region)
{
	hml__dataset_view d;
	int known = 0;

	for (size_t i = 0; hml__records_dataset_at(&d, s, i); i++)
		known |= hml__dataset_view_region(&d, region) != NULL;
	if (known && q->workflow)
		return hml__error_set(HML_ENOTFOUND, "no data set of workflow '%s' in experiment "
		                      "'%s' has rows of region '%s'", q->workflow, hml__store_dir(s),
		                      region);
	if (known)
		return hml__error_set(HML_EINVALID, "region '%s' has no collected rows in "
		                      "experiment '%s'", region, hml__store_dir(s));
	return hml__error_set(HML_ENOTFOUND, "no data set of experiment '%s' holds region '%s' "
	                      "(collect it first: hml collect)", hml__store_dir(s), region);
}

/* Every data set of the workflow (given, else the newest holding data
 * set's) with rows of the region. */
static int pick_default(hml__data_choice *c, const hml__store *s, const hml__data_query *q)
{
	hml__dataset_view d;
	size_t i;
	int rc;

	c->workflow = q->workflow;
	if (!c->workflow && hml__data_pick_newest(&d, s, NULL, c->region))
		c->workflow = workflow_of(&d);
	for (i = 0; c->workflow && hml__records_dataset_at(&d, s, i); i++)
		if (has_rows(&d, c->region) && strcmp(workflow_of(&d), c->workflow) == 0 &&
		    (rc = push(c, d.id)) < 0)
			return rc;
	return c->n ? 0 : none_found(s, q, c->region);
}

int hml__data_pick_newest(hml__dataset_view *out, const hml__store *s, const char *workflow,
                          const char *region)
{
	for (size_t i = hml__records_count(s, "datasets"); i-- > 0;)
		if (hml__records_dataset_at(out, s, i) && has_rows(out, region) &&
		    (!workflow || strcmp(workflow_of(out), workflow) == 0))
			return 1;
	return 0;
}

int hml__data_pick(hml__data_choice *out, const hml__store *s, const hml__data_query *q)
{
	hml__dataset_view d;
	int rc;

	memset(out, 0, sizeof(*out));
	for (size_t k = 0; k < q->nids; k++)
		if ((rc = hml__records_dataset(&d, s, q->ids[k])) < 0)
			return rc;
	out->region = q->region;
	if (!out->region && (rc = only_region(out, s, q)) < 0)
		return rc;
	rc = q->nids ? pick_named(out, s, q) : pick_default(out, s, q);
	if (rc < 0)
		hml__data_choice_release(out);
	return rc;
}

void hml__data_choice_release(hml__data_choice *c)
{
	if (!c)
		return;
	free(c->ids);
	c->ids = NULL;
	c->n = 0;
}
