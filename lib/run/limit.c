/*
 * lib/run/limit.c - the time limit of an application run (see limit.h).
 */
#include <math.h>
#include <stdlib.h>

#include "core/envname.h"
#include "core/error.h"
#include "core/util.h"
#include "run/limit.h"

int hml__run_limit(double *out, double given, double accurate_s)
{
	const char *env = getenv(HML__ENV_RUN_TIMEOUT);
	double v;

	*out = 0.0;
	if (!isnan(given)) {
		if (!(given >= 0.0) || !isfinite(given))
			return hml__error_set(HML_EINVALID, "invalid --run-timeout %g: a number of "
			                      "seconds >= 0 (0: no limit)", given);
		*out = given;
	} else if (env && *env) {
		if (hml__parse_double(env, &v) < 0 || !(v >= 0.0) || !isfinite(v))
			return hml__error_set(HML_EINVALID, "invalid %s '%s': a number of seconds "
			                      ">= 0 (0: no limit)", HML__ENV_RUN_TIMEOUT, env);
		*out = v;
	} else if (accurate_s > 0.0) {
		*out = HML__RUN_LIMIT_FACTOR * accurate_s + HML__RUN_LIMIT_SLACK_S;
	}
	return 0;
}
