/*
 * hml train --ensemble N (cmd/train_ensemble.c): N trainings of one
 * configuration, member k with seed SEED + k, each on the rows the
 * ensemble does not hold out for its calibration (lib/train/ensemble.h).
 *
 * Storage: one model id. Member 0 is the model (models/<id>.pt, what
 * hml deploy installs and what the card's metrics describe); member k > 0
 * is models/<id>.e<k>.pt, registered with it (files "member<k>", each
 * with its SHA-256 in the provenance), so every file is renamed beneath
 * the experiment by the store, never written through a link. The card's
 * "ensemble" lists the members (file, seed, validation and test errors,
 * epochs); its guard statistics get the calibration of the members'
 * disagreement ("ensemble" in lib/core/guard.h), which hml deploy --guard
 * ensemble[:fa=A] turns into a threshold.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "store/store.h"
#include "train/ensemble.h"
#include "train_ensemble.h"

void cmd_ensemble_release(cmd_ensemble *e)
{
	if (!e)
		return;
	for (int k = 0; k < HML__GUARD_ENSEMBLE_MAX; k++) {
		if (e->tmp[k])
			unlink(e->tmp[k]);
		free(e->tmp[k]);
	}
	hml__ensemble_rows_release(&e->fit);
	hml__ensemble_rows_release(&e->cal);
	hml__guard_ensemble_release(&e->calib);
	memset(e, 0, sizeof(*e));
}

void cmd_ensemble_registered(cmd_ensemble *e)
{
	for (int k = 0; k < HML__GUARD_ENSEMBLE_MAX; k++) {
		free(e->tmp[k]);
		e->tmp[k] = NULL;
	}
}

int cmd_ensemble_train(cmd_ensemble *e, const hml__store *s, const hml__dataset *d,
                       const hml__train_options *o, hml__train_result *res0)
{
	hml__train_options mo = *o;
	int rc;

	if ((rc = hml__ensemble_split(&e->fit, &e->cal, d)) < 0)
		return rc;
	for (int k = 0; k < e->n; k++) {
		if (!(e->tmp[k] = hml__store_tmp_path(s, "models", ".pt")))
			return hml__error_oom();
		mo.seed = o->seed + (uint64_t)k;
		e->seed[k] = mo.seed;
		snprintf(e->role[k], sizeof(e->role[k]), k ? "member%d" : "model", k);
		snprintf(e->ext[k], sizeof(e->ext[k]), k ? ".e%d.pt" : ".pt", k);
		cmd_info("ensemble member %d of %d (seed %llu) on %lld rows (%lld held out)", k + 1,
		         e->n, (unsigned long long)mo.seed, (long long)e->fit.rows,
		         (long long)e->cal.rows);
		if ((rc = hml__train(&e->fit, &mo, e->tmp[k], &e->res[k])) < 0)
			return rc;
		if (e->res[k].interrupted) {
			*res0 = e->res[k];
			return 0;
		}
	}
	*res0 = e->res[0];
	return hml__ensemble_calibrate(&e->calib, (const char *const *)e->tmp, e->n, &e->fit,
	                               &e->cal);
}

int cmd_ensemble_files(const cmd_ensemble *e, hml__store_file *files, size_t size)
{
	size_t n = 0;

	for (int k = 1; k < e->n && n < size; k++, n++) {
		files[n].role = e->role[k];
		files[n].tmp_path = e->tmp[k];
		files[n].ext = e->ext[k];
		files[n].make = NULL;
		files[n].payload = NULL;
	}
	return (int)n;
}

int cmd_ensemble_card(const cmd_ensemble *e, json_t *rec)
{
	json_t *members = json_array(), *guard = json_object_get(rec, "guard"), *ens;

	if (!members)
		return hml__error_oom();
	for (int k = 0; k < e->n; k++) {
		json_array_append_new(members, json_pack("{s:i, s:s, s:I, s:o, s:o, s:i}",
			"member", k, "file", e->role[k], "seed", (json_int_t)e->seed[k],
			"val_rmse", hml__json_real(e->res[k].val_rmse),
			"test_rmse", hml__json_real(e->res[k].test_rmse),
			"epochs_run", e->res[k].epochs_run));
	}
	ens = json_pack("{s:i, s:o, s:I, s:I, s:s}", "size", e->n, "members", members,
	                "training_rows", (json_int_t)e->fit.rows,
	                "calibration_rows", (json_int_t)e->cal.rows,
	                "prediction", "member 0");
	if (!ens || json_object_set_new(rec, "ensemble", ens) < 0)
		return hml__error_oom();
	/* The calibration beside the other guards' statistics (lib/core/guard.h). */
	if (json_is_object(guard) &&
	    json_object_set_new(guard, "ensemble", hml__guard_ensemble_json(&e->calib)) < 0)
		return hml__error_oom();
	return 0;
}

void cmd_ensemble_print(const json_t *ens)
{
	const json_t *m;
	size_t i;

	if (!json_is_object(ens))
		return;
	printf("  ensemble of %lld members (member 0 deployed), disagreement calibrated on %lld "
	       "held-out rows\n", (long long)json_integer_value(json_object_get(ens, "size")),
	       (long long)json_integer_value(json_object_get(ens, "calibration_rows")));
	json_array_foreach(json_object_get(ens, "members"), i, m)
		printf("    member %zu: seed %lld, validation RMSE %.6g, test RMSE %.6g\n", i,
		       (long long)json_integer_value(json_object_get(m, "seed")),
		       hml__json_number(m, "val_rmse"), hml__json_number(m, "test_rmse"));
}
