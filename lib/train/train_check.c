/*
 * lib/train/train_check.c - the part of train.h that needs no libtorch: checking
 * training options and the arch spec before any data is read (in the CLI
 * and in its training plugin alike).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/envname.h"
#include "core/error.h"
#include "core/util.h"
#include "train/arch.h"
#include "train/categorical.h"
#include "train/train.h"

const char *const hml__train_losses[] = { "mse", "mae", "relative", "log", NULL };
const char *const hml__train_metrics[] = { "rmse", "mape", NULL };

int hml__train_latency_threads(const hml__train_options *o)
{
	return o->latency_threads > 0 ? o->latency_threads : o->threads;
}

static int one_of(const char *const *names, const char *name)
{
	for (; *names; names++)
		if (strcmp(*names, name) == 0)
			return 1;
	return 0;
}

/* "unknown loss 'x' (known: mse, mae, relative, log)" */
static int unknown(const char *what, const char *const *names, const char *name)
{
	char known[128] = "";

	for (; *names; names++)
		snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
		         *known ? ", " : "", *names);
	return hml__error_set(HML_EINVALID, "unknown %s '%s' (known: %s)", what, name, known);
}

int hml__train_loss_check(const char *name)
{
	return name && one_of(hml__train_losses, name) ? 0
	     : unknown("loss", hml__train_losses, name ? name : "");
}

int hml__train_metric_check(const char *name)
{
	return name && one_of(hml__train_metrics, name) ? 0
	     : unknown("metric", hml__train_metrics, name ? name : "");
}

const char *hml__train_metric_for_qoi(const char *qoi_metric)
{
	return qoi_metric && strcmp(qoi_metric, "mape") == 0 ? "mape" : "rmse";
}

const char *hml__train_loss_for_qoi(const char *qoi_metric)
{
	return qoi_metric && strcmp(qoi_metric, "mape") == 0 ? "relative" : "mse";
}

double hml__train_result_error(const hml__train_result *r, const char *metric, int test)
{
	if (!metric || strcmp(metric, "rmse") == 0)
		return test ? r->test_rmse : r->val_rmse;
	if (strcmp(metric, "mape") == 0)
		return test ? r->test_mape : r->val_mape;
	return NAN;
}

/* The options' checks, in the order of train.h's fields' documentation. */
static int check_options(const hml__train_options *o)
{
	int rc;

	if (o->epochs <= 0)
		return hml__error_set(HML_EINVALID, "epochs must be positive, not %d", o->epochs);
	if (o->batch <= 0)
		return hml__error_set(HML_EINVALID, "batch must be positive, not %lld", (long long)o->batch);
	if (!(o->lr > 0) || !isfinite(o->lr))
		return hml__error_set(HML_EINVALID, "learning rate must be positive, not %g", o->lr);
	if (!isfinite(o->weight_decay) || (o->weight_decay < 0 && o->weight_decay != -1.0))
		return hml__error_set(HML_EINVALID, "weight decay must be 0 or more, not %g", o->weight_decay);
	if (o->optimizer && strcmp(o->optimizer, "adam") && strcmp(o->optimizer, "adamw"))
		return hml__error_set(HML_EINVALID, "unknown optimizer '%s' (known: adam, adamw)", o->optimizer);
	if (o->schedule && strcmp(o->schedule, "plateau") && strcmp(o->schedule, "cosine") &&
	    strcmp(o->schedule, "none"))
		return hml__error_set(HML_EINVALID, "unknown schedule '%s' (known: plateau, cosine, none)",
		                      o->schedule);
	if (o->device && (!*o->device || !hml__device_known(o->device)))
		return hml__error_set(HML_EINVALID, "unknown training device '%s' (known: cpu, cuda, auto)",
		                      o->device);
	if (o->patience < 0)
		return hml__error_set(HML_EINVALID, "patience must be 0 (off) or more, not %d", o->patience);
	if (!(o->clip >= 0) || !isfinite(o->clip))
		return hml__error_set(HML_EINVALID, "gradient clipping norm must be 0 (off) or more, not %g",
		                      o->clip);
	if (o->threads < 0 || o->threads > hml__threads_max())
		return hml__error_set(HML_EINVALID,
			"threads must be from 0 (libtorch's default) to %d (%d per online core), not %d",
			hml__threads_max(), HML__THREADS_PER_CORE, o->threads);
	if (o->latency_threads < 0 || o->latency_threads > hml__threads_max())
		return hml__error_set(HML_EINVALID,
			"latency threads must be from 0 (as training) to %d, not %d",
			hml__threads_max(), o->latency_threads);
	if (!(o->row_fraction >= 0 && o->row_fraction <= 1))
		return hml__error_set(HML_EINVALID, "row fraction must be above 0 and at most 1, not %g",
		                      o->row_fraction);
	if (!(o->val_fraction > 0 && o->val_fraction < 1))
		return hml__error_set(HML_EINVALID, "validation fraction must be between 0 and 1, not %g",
		                      o->val_fraction);
	if (!(o->test_fraction > 0 && o->test_fraction < 1))
		return hml__error_set(HML_EINVALID, "test fraction must be between 0 and 1, not %g",
		                      o->test_fraction);
	if (o->val_fraction + o->test_fraction >= 1)
		return hml__error_set(HML_EINVALID,
			"validation and test fractions (%g + %g) leave no rows for training",
			o->val_fraction, o->test_fraction);
	if (o->infer_batch < 0)
		return hml__error_set(HML_EINVALID, "inference batch must be positive, not %lld",
		                      (long long)o->infer_batch);
	if (!(o->max_seconds >= 0) || isnan(o->max_seconds))
		return hml__error_set(HML_EINVALID, "time limit must be 0 (none) or more, not %g",
		                      o->max_seconds);
	if ((o->loss && (rc = hml__train_loss_check(o->loss)) < 0) ||
	    (o->metric && (rc = hml__train_metric_check(o->metric)) < 0))
		return rc;
	if (!(o->mape_floor >= 0) || !isfinite(o->mape_floor))
		return hml__error_set(HML_EINVALID, "MAPE floor must be 0 or more, not %g", o->mape_floor);
	if (o->rollout < 1 || o->rollout > HML__ROLLOUT_MAX)
		return hml__error_set(HML_EINVALID, "rollout must be 1 to %d, not %d",
		                      HML__ROLLOUT_MAX, o->rollout);
	/* a chain feeds the model its own outputs in the application's units */
	if (o->rollout > 1 && o->loss && strcmp(o->loss, "log") == 0)
		return hml__error_set(HML_EINVALID, "loss 'log' cannot train with rollout %d "
		                      "(mse, mae and relative can)", o->rollout);
	return 0;
}

/* The declaration's grammar, and an MLP to one-hot its features. */
static int check_categorical(const hml__train_options *o, const hml__arch *a)
{
	hml__categorical *c;
	size_t n;
	int rc;

	if ((rc = hml__categorical_parse(&c, &n, o->categorical)) < 0)
		return rc;
	free(c);
	if (n > 0 && a->cnn)
		return hml__error_set(HML_EINVALID, "categorical features are for the mlp family; "
		                      "arch '%s' is %s", a->canonical, a->family);
	if (n > 0 && o->rollout > 1)
		return hml__error_set(HML_EINVALID, "categorical features cannot train with rollout "
		                      "%d: a model's outputs are not categories", o->rollout);
	return 0;
}

int hml__train_check_arch(const hml__train_options *o, hml__arch *a)
{
	int rc;

	if (!o)
		return hml__error_set(HML_EINVALID, "train: no options given");
	if ((rc = hml__arch_parse(a, o->arch)) < 0 || (rc = check_options(o)) < 0)
		return rc;
	/* the log of y - x, which may be of either sign, means nothing */
	if (a->residual && o->loss && strcmp(o->loss, "log") == 0)
		return hml__error_set(HML_EINVALID, "loss 'log' cannot train arch '%s': a residual "
		                      "network predicts y - x, which need not be positive", a->canonical);
	return check_categorical(o, a);
}

int hml__train_check(const hml__train_options *o, char *canonical, size_t size)
{
	hml__arch a;
	int rc;

	if ((rc = hml__train_check_arch(o, &a)) == 0 && canonical && size)
		snprintf(canonical, size, "%s", a.canonical);
	return rc;
}

