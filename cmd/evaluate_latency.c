/*
 * cmd/evaluate_latency.c - hml evaluate's latency of the model in the form
 * evaluated (cmd.h): the model card's, or measured now.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "deploy/latency.h"
#include "run/workflow.h"
#include "store/checked.h"
#include "store/records.h"
#include "train/dataset.h"

/* The model's TorchScript file, measured in each target on rows of its
 * first data set at the region's batch (cmd/latency.c, as hml train does). */
static int measure_latency(hml__store *s, const char *id, const hml__workflow *w,
                           const char *label, json_t **card)
{
	hml__model_view model;
	hml__dataset d;
	const hml__workflow_region *r = hml__workflow_region_find(w, label);
	const char *ds;
	char *pt = NULL, *data = NULL;
	int rc;

	memset(&d, 0, sizeof(d));
	*card = NULL;
	if ((rc = hml__checked_model(s, id, &model, &pt)) < 0)
		goto done;
	if (!(ds = json_string_value(json_array_get(model.datasets, 0)))) {
		rc = hml__error_set(HML_EINVALID, "model '%s' names no data set", id);
		goto done;
	}
	if ((rc = hml__checked_file(s, hml__store_find(s, "datasets", ds), "data set",
	                            "data", "collected", &data)) < 0 ||
	    (rc = hml__dataset_load(&d, (const char *const *)&data, 1, label,
	                            HML__NONFINITE_DROP)) < 0)
		goto done;
	*card = cmd_latency_card(pt, &d, r && r->batch > 0 ? r->batch : 1, 0);
done:
	hml__dataset_release(&d);
	free(data);
	free(pt);
	return rc;
}

/* The latency of the form evaluated: the card's; when the card has no
 * figure for it (a model registered before cards had one, a C form that
 * could not be measured then), measured now, so that the figures of an
 * evaluation never silently lack the deployed form's latency. */
const char *cmd_evaluate_latency(hml__latency *lat, hml__store *s, const char *id,
                                 const hml__workflow *w, const char *label, const char *target)
{
	int t = hml__target_parse(target);
	const char *source = NULL;
	json_t *card = NULL;

	if (t < 0)
		return NULL;
	if (hml__latency_of_record(lat, hml__store_find(s, "models", id)) == 0 &&
	    isfinite(lat->seconds[t]))
		return "card";
	cmd_info("model %s's card has no %s latency: measuring it", id, target);
	if (measure_latency(s, id, w, label, &card) < 0)
		cmd_warn("the %s latency was not measured: %s", target, hml_error_last()->message);
	else if (card && hml__latency_from_json(lat, card) == 0 && isfinite(lat->seconds[t]))
		source = "measured";
	else if (card)
		cmd_warn("the %s latency was not measured: %s", target,
		         lat->unavailable[t][0] ? lat->unavailable[t] : "no figure");
	json_decref(card);
	return source;
}
