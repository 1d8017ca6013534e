/*
 * lib/train/train_check.c - the part of train.h that needs no libtorch: checking
 * training options and the arch spec before any data is read (in the CLI
 * and in its training plugin alike).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "train/arch.h"
#include "train/train.h"

/* The options' checks, in the order of train.h's fields' documentation. */
static int check_options(const hml__train_options *o)
{
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
	if (o->patience < 0)
		return hml__error_set(HML_EINVALID, "patience must be 0 (off) or more, not %d", o->patience);
	if (!(o->clip >= 0) || !isfinite(o->clip))
		return hml__error_set(HML_EINVALID, "gradient clipping norm must be 0 (off) or more, not %g",
		                      o->clip);
	if (o->threads < 0 || o->threads > hml__threads_max())
		return hml__error_set(HML_EINVALID,
			"threads must be from 0 (libtorch's default) to %d (%d per online core), not %d",
			hml__threads_max(), HML__THREADS_PER_CORE, o->threads);
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
	return 0;
}

int hml__train_check_arch(const hml__train_options *o, hml__arch *a)
{
	int rc;

	if (!o)
		return hml__error_set(HML_EINVALID, "train: no options given");
	if ((rc = hml__arch_parse(a, o->arch)) < 0)
		return rc;
	return check_options(o);
}

int hml__train_check(const hml__train_options *o, char *canonical, size_t size)
{
	hml__arch a;
	int rc;

	if ((rc = hml__train_check_arch(o, &a)) == 0 && canonical && size)
		snprintf(canonical, size, "%s", a.canonical);
	return rc;
}

