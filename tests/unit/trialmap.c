/*
 * tests/unit/trialmap.c - search-space samples become arch specs and
 * training options: mlp widths per layer, conditional widths, cnn and
 * cnnvec fields, training hyper-parameters, what is left out, bad values
 * and parameters that are no option of the family; the rollout parameter's
 * checks (its values, a region in place).
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "search/opt/space.h"
#include "search/trialmap.h"

static char optimizer[32];

static int map(hml__train_options *o, char *arch, const char *family, const char *base,
               const char *sample_text)
{
	json_error_t je;
	json_t *sample = json_loads(sample_text, 0, &je);
	int rc;

	*o = (hml__train_options)HML__TRAIN_OPTIONS_INIT;
	if (!sample) {
		fprintf(stderr, "bad test JSON: %s\n", je.text);
		return -100;
	}
	rc = hml__trialmap_apply(o, arch, 256, family, base, sample);
	/* o->optimizer may point into the sample: keep a copy. */
	snprintf(optimizer, sizeof(optimizer), "%s", o->optimizer ? o->optimizer : "");
	o->optimizer = optimizer;
	json_decref(sample);
	return rc;
}

TEST(mlp)
{
	hml__train_options o;
	char arch[256];

	CHECK_OK(map(&o, arch, "mlp", "mlp:64x64:relu",
	             "{\"layers\": 3, \"width\": 32, \"activation\": \"tanh\", \"lr\": 0.005,"
	             " \"batch\": 128, \"weight_decay\": 0.0001, \"dropout\": 0.1}"));
	CHECK_STR(arch, "mlp:32x32x32:tanh:dropout=0.1");
	CHECK(o.arch == arch);
	CHECK_NEAR(o.lr, 0.005, 0);
	CHECK_EQ_INT(o.batch, 128);
	CHECK_NEAR(o.weight_decay, 0.0001, 0);
	CHECK_EQ_INT(o.epochs, 100);     /* not in the sample: the base option */

	/* width_K overrides width for layer K; widths of absent layers are ignored. */
	CHECK_OK(map(&o, arch, "mlp", NULL,
	             "{\"layers\": 2, \"width\": 16, \"width_2\": 48, \"epochs\": 7,"
	             " \"optimizer\": \"adamw\"}"));
	CHECK_STR(arch, "mlp:16x48:relu");
	CHECK_EQ_INT(o.epochs, 7);
	CHECK_STR(o.optimizer, "adamw");
	CHECK_OK(map(&o, arch, "mlp", NULL, "{\"layers\": 1, \"width\": 8, \"width_2\": 48}"));
	CHECK_STR(arch, "mlp:8:relu");

	/* More layers than the base: new layers copy the last width. */
	CHECK_OK(map(&o, arch, "mlp", "mlp:10x20:gelu", "{\"layers\": 3}"));
	CHECK_STR(arch, "mlp:10x20x20:gelu");
	/* An empty sample is the base; a base of another family is ignored. */
	CHECK_OK(map(&o, arch, "mlp", "cnn:4:relu", "{}"));
	CHECK_STR(arch, "mlp:64x64:relu");
}

TEST(cnn)
{
	hml__train_options o;
	char arch[256];

	CHECK_OK(map(&o, arch, "cnn", NULL, "{\"layers\": 2, \"width\": 8, \"kernel\": 5}"));
	CHECK_STR(arch, "cnn:8x8:relu:kernel=5");
	CHECK_OK(map(&o, arch, "cnnvec", NULL,
	             "{\"layers\": 1, \"width\": 4, \"pool\": 4, \"head\": 0, \"batch\": 32}"));
	CHECK_STR(arch, "cnnvec:4:relu:kernel=3:pool=4:head=0");
	CHECK_EQ_INT(o.batch, 32);
	/* residual: 1 adds the flag, 0 takes it off a residual base */
	CHECK_OK(map(&o, arch, "cnn", NULL, "{\"width\": 8, \"residual\": 1}"));
	CHECK_STR(arch, "cnn:8x8:relu:kernel=3:residual");
	CHECK_OK(map(&o, arch, "cnn", "cnn:4:tanh:kernel=5:residual", "{\"residual\": 0}"));
	CHECK_STR(arch, "cnn:4:tanh:kernel=5");
	CHECK_OK(map(&o, arch, "cnn", "cnn:4:tanh:kernel=5:residual", "{\"layers\": 2}"));
	CHECK_STR(arch, "cnn:4x4:tanh:kernel=5:residual");
	/* spatial: the same for cnnvec's flag */
	CHECK_OK(map(&o, arch, "cnnvec", NULL, "{\"width\": 10, \"kernel\": 1, \"spatial\": 1}"));
	CHECK_STR(arch, "cnnvec:10x10:relu:kernel=1:pool=2:head=64:spatial");
	CHECK_OK(map(&o, arch, "cnnvec", "cnnvec:4:relu:kernel=1:pool=4:head=0:spatial",
	             "{\"spatial\": 0}"));
	CHECK_STR(arch, "cnnvec:4:relu:kernel=1:pool=4:head=0");
	CHECK_OK(map(&o, arch, "cnnvec", "cnnvec:4:relu:kernel=1:pool=4:head=0:spatial",
	             "{\"layers\": 2}"));
	CHECK_STR(arch, "cnnvec:4x4:relu:kernel=1:pool=4:head=0:spatial");
}

TEST(bad_values)
{
	hml__train_options o;
	char arch[256];

	CHECK_FAILS(map(&o, arch, "mlp", NULL, "{\"batch\": 0}"), HML_EINVALID,
	            "trial parameter 'batch'");
	CHECK_FAILS(map(&o, arch, "mlp", NULL, "{\"layers\": 2.5}"), HML_EINVALID,
	            "trial parameter 'layers'");
	CHECK_FAILS(map(&o, arch, "mlp", NULL, "{\"lr\": 0}"), HML_EINVALID, "trial parameter 'lr'");
	CHECK_FAILS(map(&o, arch, "mlp", NULL, "{\"activation\": \"swish\"}"), HML_EINVALID,
	            "unknown activation 'swish'");
	CHECK_FAILS(map(&o, arch, "mlp", NULL, "{\"optimizer\": 3}"), HML_EINVALID, "'optimizer'");
	CHECK_FAILS(map(&o, arch, "cnn", NULL, "{\"kernel\": 4}"), HML_EINVALID, "kernel");
	CHECK_FAILS(map(&o, arch, "cnn", NULL, "{\"residual\": 2}"), HML_EINVALID,
	            "trial parameter 'residual' must be 0 or 1, not 2");
	CHECK_FAILS(map(&o, arch, "cnnvec", NULL, "{\"spatial\": 3}"), HML_EINVALID,
	            "trial parameter 'spatial' must be 0 or 1, not 3");
	CHECK_FAILS(map(&o, arch, "cnnvec", NULL, "{\"spatial\": -1}"), HML_EINVALID,
	            "trial parameter 'spatial'");
}

static int check_space(const char *text, const char *family)
{
	json_t *j = json_loads(text, 0, NULL);
	hml__space *s = NULL;
	int rc = hml__space_parse(&s, j, "t.json");

	if (rc == 0)
		rc = hml__trialmap_check(s, family, "t.json");
	hml__space_free(s);
	json_decref(j);
	return rc;
}

TEST(check)
{
	CHECK_OK(check_space("{\"layers\": {\"type\": \"int\", \"low\": 1, \"high\": 3},"
	                     " \"width_3\": {\"type\": \"int\", \"low\": 4, \"high\": 8,"
	                     "   \"when\": {\"parent\": \"layers\", \"min\": 3}},"
	                     " \"kernel\": {\"type\": \"choice\", \"values\": [3, 5]}}", "cnn"));
	CHECK_FAILS(check_space("{\"momentum\": {\"type\": \"float\", \"low\": 0, \"high\": 1}}",
	                        "mlp"),
	            HML_EINVALID, "parameter 'momentum' is not an option of model family 'mlp'");
	CHECK_FAILS(check_space("{\"kernel\": {\"type\": \"choice\", \"values\": [3]}}", "mlp"),
	            HML_EINVALID, "parameter 'kernel'");
	CHECK_OK(check_space("{\"residual\": {\"type\": \"choice\", \"values\": [0, 1]}}", "cnn"));
	CHECK_FAILS(check_space("{\"residual\": {\"type\": \"choice\", \"values\": [0, 1]}}",
	                        "cnnvec"),
	            HML_EINVALID, "parameter 'residual' is not an option of model family 'cnnvec'");
	CHECK_OK(check_space("{\"spatial\": {\"type\": \"choice\", \"values\": [0, 1]}}", "cnnvec"));
	CHECK_FAILS(check_space("{\"spatial\": {\"type\": \"choice\", \"values\": [0, 1]}}", "cnn"),
	            HML_EINVALID, "parameter 'spatial' is not an option of model family 'cnn'");
	CHECK_FAILS(check_space("{\"width_0\": {\"type\": \"int\", \"low\": 1, \"high\": 2}}", "mlp"),
	            HML_EINVALID, "names layer 0");
	CHECK_FAILS(check_space("{\"lr\": {\"type\": \"float\", \"low\": 0.1, \"high\": 1}}", "rnn"),
	            HML_EINVALID, "unknown model family 'rnn'");
}

/* The arch spec point i of hml__trialmap_first() decodes to. */
static void first_arch(char *arch, const hml__space *s, const double *u, const char *family,
                       const char *base)
{
	hml__train_options o = HML__TRAIN_OPTIONS_INIT;
	json_t *sample = NULL;

	arch[0] = '\0';
	CHECK_OK(hml__space_decode(&sample, s, u));
	CHECK_OK(hml__trialmap_apply(&o, arch, 256, family, base, sample));
	json_decref(sample);
}

/* The workflow's architecture first, then the smallest models. */
TEST(first_points)
{
	const char *text = "{\"layers\": {\"type\": \"int\", \"low\": 1, \"high\": 4},"
		" \"width\": {\"type\": \"int\", \"low\": 8, \"high\": 512, \"log\": true},"
		" \"activation\": {\"type\": \"choice\", \"values\": [\"relu\", \"tanh\"]},"
		" \"lr\": {\"type\": \"float\", \"low\": 0.0005, \"high\": 0.01, \"log\": true}}";
	json_t *j = json_loads(text, 0, NULL);
	hml__train_options base = HML__TRAIN_OPTIONS_INIT;
	hml__space *s = NULL;
	double u[HML__TRIALMAP_FIRST_MAX * 5];   /* 5 dims: activation is one-hot */
	char arch[256];
	size_t n;

	CHECK_OK(hml__space_parse(&s, j, "t.json"));
	CHECK_EQ_INT(hml__space_dim(s), 5);
	base.lr = 0.003;
	n = hml__trialmap_first(u, s, "mlp", "mlp:128x128:tanh", &base);
	CHECK_EQ_INT(n, 2);
	first_arch(arch, s, u, "mlp", "mlp:128x128:tanh");
	CHECK_STR(arch, "mlp:128x128:tanh");
	first_arch(arch, s, u + 5, "mlp", "mlp:128x128:tanh");
	CHECK_STR(arch, "mlp:8:relu");
	/* a base the space cannot express (128 x 5 layers): its learning rate
	 * and batch do not matter, the smallest point stays */
	n = hml__trialmap_first(u, s, "mlp", "mlp:128x128x128x128x128:relu", &base);
	CHECK_EQ_INT(n, 1);
	first_arch(arch, s, u, "mlp", NULL);
	CHECK_STR(arch, "mlp:8:relu");
	/* a learning rate outside the space: the centre's instead */
	base.lr = 0.5;
	n = hml__trialmap_first(u, s, "mlp", "mlp:64:tanh", &base);
	CHECK_EQ_INT(n, 2);
	first_arch(arch, s, u, "mlp", NULL);
	CHECK_STR(arch, "mlp:64:tanh");
	hml__space_free(s);
	json_decref(j);

	/* a rollout dimension: the workflow's own rollout first (1, the
	 * one-call training, unless its model.train says otherwise) */
	j = json_loads("{\"width\": {\"type\": \"int\", \"low\": 4, \"high\": 16},"
	               " \"rollout\": {\"type\": \"choice\", \"values\": [1, 2, 4]}}", 0, NULL);
	CHECK_OK(hml__space_parse(&s, j, "t.json"));
	base = (hml__train_options)HML__TRAIN_OPTIONS_INIT;
	for (int r = 1; r <= 4; r *= 2) {
		json_t *first = NULL;

		base.rollout = r;
		n = hml__trialmap_first(u, s, "cnn", "cnn:8:tanh", &base);
		CHECK(n >= 1);
		CHECK_OK(hml__space_decode(&first, s, u));
		CHECK_EQ_INT(json_integer_value(json_object_get(first, "rollout")), r);
		CHECK_EQ_INT(json_integer_value(json_object_get(first, "width")), 8);
		json_decref(first);
	}
	hml__space_free(s);
	json_decref(j);
}

/* hml__trialmap_check_rollout on the space `text` (parsed first, as a
 * search does) for a region of row shapes in_text and out_text. */
static int check_rollout(const char *text, const char *in_text, const char *out_text)
{
	json_t *j = json_loads(text, 0, NULL), *in = json_loads(in_text, 0, NULL);
	json_t *out = json_loads(out_text, 0, NULL);
	hml__space *s = NULL;
	int rc = hml__space_parse(&s, j, "t.json");

	if (rc == 0)
		rc = hml__trialmap_check(s, "cnn", "t.json");
	if (rc == 0)
		rc = hml__trialmap_check_rollout(j, "field", in, out, "t.json");
	hml__space_free(s);
	json_decref(j);
	json_decref(in);
	json_decref(out);
	return rc;
}

/* "rollout": a parameter of every family, an integer from 1 to
 * HML__ROLLOUT_MAX, more than 1 only for a region in place; a trial's
 * value becomes its --rollout. */
TEST(rollout)
{
	static const char *const field = "[4, 24, 44]";
	hml__train_options o;
	char arch[256];
	json_t *argv;
	const char *prev = NULL;
	size_t i;
	json_t *a;
	int found = 0;

	CHECK_OK(check_rollout("{\"rollout\": {\"type\": \"choice\", \"values\": [1, 2, 4]}}",
	                       field, field));
	CHECK_OK(check_rollout("{\"rollout\": {\"type\": \"int\", \"low\": 1, \"high\": 64}}",
	                       field, field));
	CHECK_OK(check_rollout("{\"rollout\": {\"type\": \"choice\", \"values\": [1.0, 2]}}",
	                       field, field));
	CHECK_OK(check_rollout("{\"width\": {\"type\": \"int\", \"low\": 1, \"high\": 4}}",
	                       "[5]", "[1]"));   /* no rollout: nothing to check */
	/* rollout 1 only trains as ever: any region */
	CHECK_OK(check_rollout("{\"rollout\": {\"type\": \"choice\", \"values\": [1]}}",
	                       "[5]", "[1]"));
	CHECK_FAILS(check_rollout("{\"rollout\": {\"type\": \"choice\", \"values\": [1, 0]}}",
	                          field, field),
	            HML_EINVALID, "search space 't.json': parameter 'rollout': 0 is not an integer "
	            "from 1 to 64");
	CHECK_FAILS(check_rollout("{\"rollout\": {\"type\": \"choice\", \"values\": [-1, 2]}}",
	                          field, field),
	            HML_EINVALID, "parameter 'rollout': -1 is not an integer from 1 to 64");
	CHECK_FAILS(check_rollout("{\"rollout\": {\"type\": \"int\", \"low\": 2, \"high\": 65}}",
	                          field, field),
	            HML_EINVALID, "parameter 'rollout': 65 is not an integer from 1 to 64");
	CHECK_FAILS(check_rollout("{\"rollout\": {\"type\": \"choice\", \"values\": [1, 2.5]}}",
	                          field, field),
	            HML_EINVALID, "parameter 'rollout': 2.5 is not an integer from 1 to 64");
	CHECK_FAILS(check_rollout("{\"rollout\": {\"type\": \"float\", \"low\": 1, \"high\": 4}}",
	                          field, field),
	            HML_EINVALID, "parameter 'rollout' must be of type int or choice, not 'float'");
	CHECK_FAILS(check_rollout("{\"rollout\": {\"type\": \"choice\", \"values\": [1, 2]}}",
	                          "[5]", "[1]"),
	            HML_EINVALID, "search space 't.json': parameter 'rollout' needs a region whose "
	            "output has its input's shape; region 'field' takes [5] and gives [1]");
	CHECK_FAILS(check_rollout("{\"rollout\": {\"type\": \"int\", \"low\": 1, \"high\": 2}}",
	                          "[4, 8]", "[4, 9]"),
	            HML_EINVALID, "takes [4,8] and gives [4,9]");
	/* a trial's value: its --rollout; out of range or not an integer, refused */
	CHECK_OK(map(&o, arch, "cnn", NULL, "{\"width\": 4, \"rollout\": 4}"));
	CHECK_EQ_INT(o.rollout, 4);
	CHECK(argv = hml__trialmap_train_argv(&o, "field"));
	json_array_foreach(argv, i, a) {
		found += prev && strcmp(prev, "--rollout") == 0 && strcmp(json_string_value(a), "4") == 0;
		prev = json_string_value(a);
	}
	CHECK_EQ_INT(found, 1);
	json_decref(argv);
	CHECK_OK(map(&o, arch, "cnn", NULL, "{\"width\": 4}"));
	CHECK_EQ_INT(o.rollout, 1);   /* left out: the base's */
	CHECK_FAILS(map(&o, arch, "cnn", NULL, "{\"rollout\": 0}"), HML_EINVALID,
	            "trial parameter 'rollout' must be an integer of at least 1");
	CHECK_FAILS(map(&o, arch, "cnn", NULL, "{\"rollout\": -1}"), HML_EINVALID,
	            "trial parameter 'rollout'");
	CHECK_FAILS(map(&o, arch, "cnn", NULL, "{\"rollout\": 2.5}"), HML_EINVALID,
	            "trial parameter 'rollout'");
	CHECK_FAILS(map(&o, arch, "cnn", NULL, "{\"rollout\": 65}"), HML_EINVALID,
	            "trial parameter 'rollout': 65 is more than 64");
}

int main(void)
{
	RUN(first_points);
	RUN(mlp);
	RUN(cnn);
	RUN(bad_values);
	RUN(check);
	RUN(rollout);
	return check_report();
}
