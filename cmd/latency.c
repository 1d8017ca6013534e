/*
 * cmd/latency.c - the latency part of model cards as the commands use it:
 * measured when a model is registered (hml train, hml import), printed by
 * them and by hml show. The contract and the measurement are in
 * lib/deploy/latency.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd.h"
#include "deploy/latency.h"
#include "sys/fsutil.h"
#include "train/dataset.h"

json_t *cmd_latency_card(const char *pt_path, const hml__dataset *d, int64_t batch,
                         int threads)
{
	hml__latency l;
	hml__latency_options o = hml__latency_options_for(d, batch, threads);
	char *dir = hml__exe_dir(), *probe = dir ? hml__path_join(dir, "hml-probe") : NULL;
	json_t *j;
	int rc;

	/* Installed and built next to hml; without it the card has no start-up. */
	o.probe = probe && access(probe, X_OK) == 0 ? probe : NULL;
	cmd_info("measuring the latency per target at batch %lld", (long long)o.batch);
	rc = hml__latency_measure(&l, pt_path, &o);
	free(probe);
	free(dir);
	if (rc < 0) {
		cmd_warn("the model's latency was not measured: %s", hml_error_last()->message);
		return NULL;
	}
	if (l.unavailable[HML__TARGET_C][0])
		cmd_info("no C latency: %s", l.unavailable[HML__TARGET_C]);
	if (!(j = hml__latency_to_json(&l)))
		cmd_warn("the model's latency was not recorded: %s", hml_error_last()->message);
	return j;
}

void cmd_latency_print(const json_t *model_record, const char *indent)
{
	hml__latency l;
	int rc = hml__latency_of_record(&l, model_record);

	if (rc == HML_ENOTFOUND) {
		printf("%slatency per target: not measured\n", indent);
		return;
	}
	if (rc < 0) {
		printf("%slatency per target: %s\n", indent, hml_error_last()->message);
		return;
	}
	printf("%slatency per sample at batch %lld:", indent, (long long)l.batch);
	for (int t = 0; t < HML__NTARGETS; t++) {
		if (isfinite(l.seconds[t]))
			printf(" %s %.4g us%s", hml__target_name(t), l.seconds[t] * 1e6,
			       t + 1 < HML__NTARGETS ? "," : "");
		else
			printf(" %s -%s", hml__target_name(t), t + 1 < HML__NTARGETS ? "," : "");
	}
	printf(" (%s)\n", l.machine);
	if (isfinite(l.startup[HML__TARGET_TORCHSCRIPT]) || isfinite(l.startup[HML__TARGET_C])) {
		const char *sep = "";

		printf("%sstart-up added to an application:", indent);
		for (int t = 0; t < HML__NTARGETS; t++)
			if (isfinite(l.startup[t])) {
				printf("%s %s %.3g s", sep, hml__target_name(t), l.startup[t]);
				sep = ",";
			}
		printf("\n");
	}
	for (int t = 0; t < HML__NTARGETS; t++)
		if (l.unavailable[t][0])
			printf("%s  no %s form: %s\n", indent, hml__target_name(t), l.unavailable[t]);
}
