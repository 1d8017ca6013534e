/*
 * cmd/experiment.c - experiment records as the commands print them: JSON
 * fields read and written, a deployment's environment, the workflow env
 * warning. The queries that check record files and tie models back to
 * their workflow are lib/store/checked.h.
 */
#include <math.h>
#include <string.h>

#include "cmd.h"
#include "core/envname.h"
#include "core/util.h"
#include "run/childenv.h"
#include "run/workflow.h"

json_t *cmd_json_shape(const int64_t *shape, int ndim)
{
	json_t *a = json_array();

	for (int k = 0; a && k < ndim; k++)
		json_array_append_new(a, json_integer(shape[k]));
	return a;
}

json_t *cmd_deploy_env(const struct hml__workflow *w, const char *label, const char *path,
                       int interleave, const char *watch)
{
	const hml__workflow_region *r = hml__workflow_region_find(w, label);
	char name[HML__ENVNAME_MAX], **vars = NULL;
	json_t *env = json_object();

	if (!env) {
		hml__error_oom();
		return NULL;
	}
	if (hml__childenv_model(&vars, label, path, interleave, NULL, r ? r->conserve : NULL) < 0)
		goto fail;
	for (char **v = vars; *v; v++) {
		char *eq = strchr(*v, '=');

		*eq = '\0';
		json_object_set_new(env, *v, json_string(eq + 1));
	}
	hml__strv_free(vars);
	if (watch) {
		if (hml__envname_region(name, sizeof(name), HML__ENV_DEPLOYMENT, label) < 0)
			goto fail;
		json_object_set_new(env, name, json_string(watch));
	}
	return env;
fail:
	json_decref(env);
	return NULL;
}

void cmd_workflow_env_check(const hml__workflow *w)
{
	for (char **e = w->env; e && *e; e++)
		if (hml__childenv_controls(*e))
			cmd_warn("workflow '%s' sets %.*s in its env; hml sets it for each run, "
			         "so it is ignored", w->name, (int)strcspn(*e, "="), *e);
}
