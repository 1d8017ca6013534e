/*
 * tests/unit/arch.c - architecture specs without libtorch (lib/train/arch.h and
 * the option checks of lib/train/train_check.c): the grammar and its messages,
 * canonical specs, the families' embedded descriptions, the shapes a model
 * maps between, and the template expansion. Links no libtorch.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "check.h"
#include "core/error.h"
#include "fixtures.h"
#include "train/arch.h"
#include "train/categorical.h"
#include "train/train.h"

TEST(bad_specs)
{
	static const struct { const char *arch, *needle; } cases[] = {
		{ "foo:64", "unknown model family 'foo' in arch 'foo:64' (families: cnn, cnnvec, mlp)" },
		{ "", "arch '' names no model family" },
		{ ":64", "arch ':64' names no model family" },
		{ "mlpx", "unknown model family 'mlpx'" },
		{ "mlp:64:foo", "unknown activation 'foo' in arch 'mlp:64:foo' (known: relu, tanh, gelu, silu, sigmoid)" },
		{ "mlp:64xfoo:relu", "bad widths '64xfoo' in arch 'mlp:64xfoo:relu'" },
		{ "mlp:0x64", "bad widths '0x64'" },
		{ "mlp:64x", "bad widths '64x'" },
		{ "mlp:64xx64", "bad widths '64xx64'" },
		{ "mlp:99999", "width 99999 in arch 'mlp:99999' is outside 1 to 16384" },
		{ "cnn:5000", "width 5000 in arch 'cnn:5000' is outside 1 to 4096" },
		{ "mlp:1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1",
		  "has 33 hidden layers; mlp takes 1 to 32" },
		{ "mlp::relu", "empty field in arch 'mlp::relu'" },
		{ "mlp:", "empty field in arch 'mlp:'" },
		{ "mlp:64:relu:tanh", "arch 'mlp:64:relu:tanh' gives the activation twice" },
		{ "mlp:64:8", "arch 'mlp:64:8' gives the widths twice" },
		{ "mlp:64:relu:dropout=1.5", "bad dropout '1.5' in arch 'mlp:64:relu:dropout=1.5'" },
		{ "mlp:64:relu:dropout=x", "bad dropout 'x'" },
		{ "mlp:dropout=0.1:dropout=0.2", "gives dropout twice" },
		{ "mlp:64:relu:kernel=3", "unknown option 'kernel' in arch 'mlp:64:relu:kernel=3' (mlp takes: dropout)" },
		{ "cnn:8:relu:kernel=4", "bad kernel '4' in arch 'cnn:8:relu:kernel=4' (expected an odd size from 1 to 15)" },
		{ "cnn:8:relu:kernel=17", "bad kernel '17'" },
		{ "cnn:kernel=3:kernel=5", "gives kernel twice" },
		{ "cnn:8:relu:stride=2", "unknown option 'stride' in arch 'cnn:8:relu:stride=2' (cnn takes: dropout, kernel)" },
		{ "cnn:8:residual:relu:residual", "arch 'cnn:8:residual:relu:residual' gives residual twice" },
		{ "mlp:8:residual", "arch 'mlp:8:residual': residual is an option of the cnn family only (mlp does not take it)" },
		{ "cnnvec:8:residual", "residual is an option of the cnn family only (cnnvec does not take it)" },
		{ "cnn:8:residual=1", "unknown option 'residual' in arch 'cnn:8:residual=1'" },
	};
	hml__arch a;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_FAILS(hml__arch_parse(&a, cases[i].arch), HML_EINVALID, cases[i].needle);
}

TEST(canonical_specs)
{
	static const struct { const char *arch, *canonical; } cases[] = {
		{ "mlp:64x64:relu", "mlp:64x64:relu" },
		{ "mlp:64,64:relu", "mlp:64x64:relu" },
		{ "mlp:128:tanh:dropout=0.1", "mlp:128:tanh:dropout=0.1" },
		{ "mlp:silu", "mlp:64x64:silu" },
		{ "mlp", "mlp:64x64:relu" },
		{ "mlp:dropout=0.25:sigmoid:8x4", "mlp:8x4:sigmoid:dropout=0.25" },
		{ "cnn", "cnn:16x16:relu:kernel=3" },
		{ "cnn:4x4:gelu:kernel=5:dropout=0", "cnn:4x4:gelu:kernel=5" },
		{ "cnn:residual:4", "cnn:4:relu:kernel=3:residual" },
		{ "cnn:8:tanh:residual:kernel=5:dropout=0.1", "cnn:8:tanh:kernel=5:dropout=0.1:residual" },
	};
	hml__arch a;
	char buf[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		hml__train_options o = HML__TRAIN_OPTIONS_INIT;

		CHECK_OK(hml__arch_parse(&a, cases[i].arch));
		CHECK_STR(a.canonical, cases[i].canonical);
		o.arch = cases[i].arch;
		CHECK_OK(hml__train_check(&o, buf, sizeof(buf)));
		CHECK_STR(buf, cases[i].canonical);
	}
	CHECK_OK(hml__arch_parse(&a, NULL));
	CHECK_STR(a.canonical, "mlp:64x64:relu");
	CHECK_OK(hml__arch_parse(&a, "cnn:8x4x2:tanh:kernel=5:dropout=0.1"));
	CHECK_STR(a.family, "cnn");
	CHECK(a.cnn);
	CHECK_EQ_INT(a.nwidths, 3);
	CHECK_EQ_INT(a.widths[2], 2);
	CHECK_STR(a.act, "tanh");
	CHECK_EQ_INT(a.act_index, 1);
	CHECK_EQ_INT(a.kernel, 5);
	CHECK_NEAR(a.dropout, 0.1, 0);
	CHECK_EQ_INT(a.residual, 0);
	CHECK_OK(hml__arch_parse(&a, "cnn:8:residual"));
	CHECK_EQ_INT(a.residual, 1);
	/* a canonical spec reads back as itself */
	CHECK_OK(hml__arch_parse(&a, "cnn:8:tanh:kernel=5:dropout=0.1:residual"));
	CHECK_STR(a.canonical, "cnn:8:tanh:kernel=5:dropout=0.1:residual");
}

TEST(option_checks_need_no_torch)
{
	hml__train_options o = HML__TRAIN_OPTIONS_INIT;

	o.arch = "mlp:8";
	o.lr = 0;
	CHECK_FAILS(hml__train_check(&o, NULL, 0), HML_EINVALID, "learning rate must be positive, not 0");
	o.lr = 1e-3;
	o.arch = "mlp:8:foo";
	CHECK_FAILS(hml__train_check(&o, NULL, 0), HML_EINVALID, "unknown activation 'foo'");
	CHECK_FAILS(hml__train_check(NULL, NULL, 0), HML_EINVALID, "no options");
	o.arch = "cnn:8:residual";
	o.loss = "log";
	CHECK_FAILS(hml__train_check(&o, NULL, 0), HML_EINVALID,
	            "loss 'log' cannot train arch 'cnn:8:relu:kernel=3:residual': a residual network "
	            "predicts y - x, which need not be positive");
	o.loss = "relative";
	CHECK_OK(hml__train_check(&o, NULL, 0));
}

/* The loss and metric names, and what a workflow's qoi.metric chooses. */
TEST(loss_and_metric_names)
{
	hml__train_options o = HML__TRAIN_OPTIONS_INIT;
	hml__train_result r;

	for (size_t i = 0; hml__train_losses[i]; i++)
		CHECK_OK(hml__train_loss_check(hml__train_losses[i]));
	CHECK_FAILS(hml__train_loss_check("rmse"), HML_EINVALID,
	            "unknown loss 'rmse' (known: mse, mae, relative, log)");
	CHECK_FAILS(hml__train_loss_check(NULL), HML_EINVALID, "unknown loss ''");
	CHECK_OK(hml__train_metric_check("mape"));
	CHECK_FAILS(hml__train_metric_check("max_abs"), HML_EINVALID,
	            "unknown metric 'max_abs' (known: rmse, mape)");
	CHECK_STR(hml__train_metric_for_qoi("mape"), "mape");
	CHECK_STR(hml__train_loss_for_qoi("mape"), "relative");
	CHECK_STR(hml__train_metric_for_qoi("rmse"), "rmse");
	CHECK_STR(hml__train_loss_for_qoi("max_abs"), "mse");
	CHECK_STR(hml__train_metric_for_qoi(NULL), "rmse");
	CHECK_STR(hml__train_loss_for_qoi(NULL), "mse");

	o.loss = "L1";
	CHECK_FAILS(hml__train_check(&o, NULL, 0), HML_EINVALID, "unknown loss 'L1'");
	o.loss = "relative", o.metric = "mae";
	CHECK_FAILS(hml__train_check(&o, NULL, 0), HML_EINVALID, "unknown metric 'mae'");
	o.metric = "mape", o.mape_floor = -1;
	CHECK_FAILS(hml__train_check(&o, NULL, 0), HML_EINVALID, "MAPE floor must be 0 or more");
	o.mape_floor = 1;
	CHECK_OK(hml__train_check(&o, NULL, 0));

	memset(&r, 0, sizeof(r));
	r.val_rmse = 1, r.test_rmse = 2, r.val_mape = 30, r.test_mape = 40;
	CHECK(hml__train_result_error(&r, NULL, 0) == 1 && hml__train_result_error(&r, "rmse", 1) == 2);
	CHECK(hml__train_result_error(&r, "mape", 0) == 30 && hml__train_result_error(&r, "mape", 1) == 40);
	CHECK(isnan(hml__train_result_error(&r, "max_abs", 0)));
}

TEST(family_descriptions_are_embedded)
{
	json_t *doc;
	json_error_t err;

	CHECK_STR(hml__arch_families(), "cnn, cnnvec, mlp");
	CHECK(hml__arch_family_json("rnn") == NULL);
	CHECK(hml__arch_family_json(NULL) == NULL);
	for (int i = 0; i < 3; i++) {
		const char *name = i == 2 ? "cnnvec" : i ? "cnn" : "mlp";
		const char *text = hml__arch_family_json(name);

		CHECK(text != NULL);
		doc = text ? json_loads(text, 0, &err) : NULL;
		CHECK(doc != NULL);
		CHECK_STR(json_string_value(json_object_get(doc, "family")), name);
		CHECK(json_is_object(json_object_get(doc, "search_space")));
		CHECK(json_is_array(json_object_get(json_object_get(doc, "defaults"), "widths")));
		json_decref(doc);
	}
}

static void set_rows(hml__dataset *d, int in_ndim, const int64_t *in, int out_ndim, const int64_t *out)
{
	memset(d, 0, sizeof(*d));
	dataset_shape(d, in_ndim, in, out_ndim, out);
}

TEST(layouts)
{
	static const int64_t row[] = { 2, 3 }, one[] = { 1 }, five[] = { 5 }, hw[] = { 8, 8 }, chw[] = { 2, 8, 8 },
	                     small[] = { 1, 4, 4 }, none[] = { 0 };
	hml__dataset d;
	hml__arch_layout l;
	hml__arch mlp, cnn;

	CHECK_OK(hml__arch_parse(&mlp, "mlp:8"));
	CHECK_OK(hml__arch_parse(&cnn, "cnn:4"));
	set_rows(&d, 2, row, 1, one);
	CHECK_OK(hml__arch_layout_of(&l, &mlp, &d));
	CHECK_EQ_INT(l.core_in_ndim, 1);
	CHECK_EQ_INT(l.core_in[0], 6);
	CHECK_EQ_INT(l.out_features, 1);
	set_rows(&d, 1, five, 1, one);
	CHECK_FAILS(hml__arch_layout_of(&l, &cnn, &d), HML_EINVALID,
	            "arch 'cnn:4:relu:kernel=3' needs whole-field rows [C,H,W] or [H,W]; region rows are [5]");
	set_rows(&d, 2, hw, 3, chw);
	CHECK_OK(hml__arch_layout_of(&l, &cnn, &d));
	CHECK_EQ_INT(l.core_in_ndim, 3);
	CHECK(l.core_in[0] == 1 && l.core_in[1] == 8 && l.core_in[2] == 8);
	CHECK(l.core_out[0] == 2 && l.core_out[1] == 8 && l.core_out[2] == 8);
	set_rows(&d, 3, chw, 1, one);
	CHECK_FAILS(hml__arch_layout_of(&l, &cnn, &d), HML_EINVALID, "needs whole-field outputs");
	set_rows(&d, 3, chw, 3, small);
	CHECK_FAILS(hml__arch_layout_of(&l, &cnn, &d), HML_EINVALID,
	            "keeps the field's size, but the region maps [2, 8, 8] to [1, 4, 4] (cnnvec maps fields to vectors)");
	set_rows(&d, 1, none, 1, one);
	CHECK_FAILS(hml__arch_layout_of(&l, &mlp, &d), HML_EINVALID, "data rows [0] -> [1] have no features");
}

/* A residual cnn adds its input to its output: the rows keep their shape
 * ([H, W] and [1, H, W] are one field). */
TEST(residual_layouts)
{
	static const int64_t hw[] = { 8, 8 }, chw[] = { 2, 8, 8 }, one_hw[] = { 1, 8, 8 };
	hml__dataset d;
	hml__arch_layout l;
	hml__arch res;

	CHECK_OK(hml__arch_parse(&res, "cnn:4:residual"));
	set_rows(&d, 3, chw, 3, chw);
	CHECK_OK(hml__arch_layout_of(&l, &res, &d));
	CHECK(l.core_in[0] == 2 && l.core_out[0] == 2);
	set_rows(&d, 2, hw, 3, one_hw);
	CHECK_OK(hml__arch_layout_of(&l, &res, &d));
	set_rows(&d, 2, hw, 3, chw);
	CHECK_FAILS(hml__arch_layout_of(&l, &res, &d), HML_EINVALID,
	            "arch 'cnn:4:relu:kernel=3:residual' adds its input to its output, but the region "
	            "maps rows [8, 8] to [2, 8, 8] (residual needs equal input and output shapes)");
}

static char *expand(const char *spec, const int64_t *in, int in_ndim, const int64_t *out, int out_ndim)
{
	hml__arch a;
	hml__arch_layout l;
	hml__dataset d;
	char *src = NULL;

	set_rows(&d, in_ndim, in, out_ndim, out);
	CHECK_OK(hml__arch_parse(&a, spec));
	CHECK_OK(hml__arch_layout_of(&l, &a, &d));
	CHECK_OK(hml__arch_expand(&src, &a, &l));
	return src;
}

TEST(template_expansion)
{
	static const int64_t five[] = { 5 }, one[] = { 1 }, hw[] = { 6, 7 };
	char *s;

	s = expand("mlp:16x8:tanh:dropout=0.5", five, 1, one, 1);
	CHECK(s != NULL);
	if (s) {
		CHECK_CONTAINS(s, "h = torch.tanh(torch.linear(h, self.w0, self.b0))\n"
		                  "    h = torch.dropout(h, 0.5, self.training)\n"
		                  "    h = torch.tanh(torch.linear(h, self.w1, self.b1))\n");
		CHECK(strstr(s, "self.w2") == NULL);
		CHECK_CONTAINS(s, "x.reshape([n, 5])");
		CHECK(strstr(s, "{") == NULL && strstr(s, "@") == NULL);
		CHECK(strstr(s, "\n#") == NULL && s[0] != '#');   /* comment lines dropped */
	}
	free(s);
	s = expand("mlp:4", five, 1, one, 1);
	CHECK(s != NULL && strstr(s, "dropout") == NULL);
	free(s);
	s = expand("cnn:3:silu:kernel=5", hw, 2, hw, 2);
	CHECK(s != NULL && strstr(s, "{") == NULL);
	CHECK(s != NULL && strstr(s, "y = y + x") == NULL);
	free(s);
	s = expand("cnn:3:silu:kernel=5:residual", hw, 2, hw, 2);
	CHECK(s != NULL);
	if (s)
		CHECK_CONTAINS(s, "    y = self.core(z) * self.out_std + self.out_mean\n"
		                  "    y = y + x.reshape([n, 1, 6, 7])\n");
	free(s);
}

TEST(bad_templates)
{
	static const struct { const char *ts, *needle; } cases[] = {
		{ "x = {act\n", "models/mlp.ts: unclosed '{' on line 1" },
		{ "ok\nx = {nope}\n", "unknown variable '{nope}' on line 2" },
		{ "@end\n", "@end without a block on line 1" },
		{ "@repeat layers\n@end\n", "unknown directive '@repeat layers' on line 1" },
		{ "@while x\n", "unknown directive '@while x' on line 1" },
		{ "@repeat hidden\nx\n", "a block has no @end" },
		{ "@if dropout\nx\n", "a block has no @end" },
		{ "y = {i}\n", "unknown variable '{i}'" },
	};
	static const int64_t five[] = { 5 }, one[] = { 1 };
	hml__arch a;
	hml__arch_layout l;
	hml__dataset d;
	char *src;

	set_rows(&d, 1, five, 1, one);
	CHECK_OK(hml__arch_parse(&a, "mlp:4"));
	CHECK_OK(hml__arch_layout_of(&l, &a, &d));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		a.template_src = cases[i].ts;
		src = (char *)"untouched";
		CHECK_FAILS(hml__arch_expand(&src, &a, &l), HML_EMODEL, cases[i].needle);
		CHECK(src == NULL);
	}
}

TEST(shortest_doubles)
{
	char buf[64];

	hml__arch_format_double(buf, sizeof(buf), 0.1);
	CHECK_STR(buf, "0.1");
	hml__arch_format_double(buf, sizeof(buf), 1.0 / 3.0);
	CHECK_STR(buf, "0.3333333333333333");
	hml__arch_format_double(buf, sizeof(buf), 2);
	CHECK_STR(buf, "2");
}

/* cnnvec: conv layers, pooling, a vector head. The grammar, its canonical
 * form and its messages; the shapes (pooled map flattened; any output
 * shape); the expanded template. */
TEST(cnnvec_specs)
{
	static const struct { const char *arch, *needle; } bad[] = {
		{ "cnnvec:8:relu:pool=0", "bad pool '0' in arch 'cnnvec:8:relu:pool=0' (expected an integer from 1 to 16)" },
		{ "cnnvec:8:relu:pool=x", "bad pool 'x'" },
		{ "cnnvec:pool=2:pool=2", "arch 'cnnvec:pool=2:pool=2' gives pool twice" },
		{ "cnnvec:8:relu:head=-1", "bad head '-1' in arch 'cnnvec:8:relu:head=-1' (expected 0, no hidden head layer, to 4096 units)" },
		{ "cnnvec:head=8:head=8", "gives head twice" },
		{ "cnnvec:8:relu:stride=2", "unknown option 'stride' in arch 'cnnvec:8:relu:stride=2' (cnnvec takes: dropout, kernel, pool, head)" },
		{ "cnnvec:1x1x1x1x1x1x1x1x1", "has 9 hidden layers; cnnvec takes 1 to 8" },
		{ "cnn:8:relu:pool=2", "unknown option 'pool' in arch 'cnn:8:relu:pool=2' (cnn takes: dropout, kernel)" },
		{ "mlp:8:head=4", "unknown option 'head'" },
		{ "cnnvec:8:spatial:relu:spatial", "arch 'cnnvec:8:spatial:relu:spatial' gives spatial twice" },
		{ "cnn:8:spatial", "arch 'cnn:8:spatial': spatial is an option of the cnnvec family only (cnn does not take it)" },
		{ "mlp:8:spatial", "spatial is an option of the cnnvec family only (mlp does not take it)" },
		{ "cnnvec:8:spatial=1", "unknown option 'spatial' in arch 'cnnvec:8:spatial=1'" },
	};
	static const struct { const char *arch, *canonical; } good[] = {
		{ "cnnvec", "cnnvec:8x8:relu:kernel=3:pool=2:head=64" },
		{ "cnnvec:16:tanh:head=0:pool=1:kernel=5", "cnnvec:16:tanh:kernel=5:pool=1:head=0" },
		{ "cnnvec:4x8:pool=4:dropout=0.1", "cnnvec:4x8:relu:kernel=3:pool=4:head=64:dropout=0.1" },
		{ "cnnvec:spatial:10:kernel=1", "cnnvec:10:relu:kernel=1:pool=2:head=64:spatial" },
	};
	hml__arch a;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_FAILS(hml__arch_parse(&a, bad[i].arch), HML_EINVALID, bad[i].needle);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		CHECK_OK(hml__arch_parse(&a, good[i].arch));
		CHECK_STR(a.canonical, good[i].canonical);
		/* The canonical form reads back as itself. */
		CHECK_OK(hml__arch_parse(&a, good[i].canonical));
		CHECK_STR(a.canonical, good[i].canonical);
	}
	CHECK_OK(hml__arch_parse(&a, "cnnvec:4x8:gelu:kernel=5:pool=3:head=32"));
	CHECK(a.cnn && a.vec);
	CHECK_EQ_INT(a.pool, 3);
	CHECK_EQ_INT(a.head, 32);
	CHECK_EQ_INT(a.kernel, 5);
	CHECK_EQ_INT(a.spatial, 0);
	CHECK_OK(hml__arch_parse(&a, "cnnvec:4x8:head=0:spatial"));
	CHECK_EQ_INT(a.spatial, 1);
	CHECK_OK(hml__arch_parse(&a, "cnn:4"));
	CHECK(a.cnn && !a.vec && !a.spatial);
}

TEST(cnnvec_layouts)
{
	static const int64_t frames[] = { 8, 32, 30 }, pos[] = { 8, 2 }, hw[] = { 9, 9 }, five[] = { 5 },
	                     one[] = { 1 };
	hml__dataset d;
	hml__arch_layout l;
	hml__arch a;

	/* 32 x 30 -> 16 x 15 -> 8 x 7 (rounded down), 16 channels. */
	CHECK_OK(hml__arch_parse(&a, "cnnvec:8x16:relu:pool=2"));
	set_rows(&d, 3, frames, 2, pos);
	CHECK_OK(hml__arch_layout_of(&l, &a, &d));
	CHECK(l.core_in_ndim == 3 && l.core_in[0] == 8 && l.core_in[1] == 32 && l.core_in[2] == 30);
	CHECK(l.core_out_ndim == 1 && l.core_out[0] == 16);
	CHECK_EQ_INT(l.flat_features, 16 * 8 * 7);
	/* [H, W] is one channel; pool=1 keeps the size. */
	CHECK_OK(hml__arch_parse(&a, "cnnvec:4:relu:pool=1:head=0"));
	set_rows(&d, 2, hw, 1, one);
	CHECK_OK(hml__arch_layout_of(&l, &a, &d));
	CHECK(l.core_in[0] == 1 && l.core_in[1] == 9 && l.flat_features == 4 * 81);
	/* 9 -> 2 -> 0: pooled away. */
	CHECK_OK(hml__arch_parse(&a, "cnnvec:4x4:relu:pool=4"));
	CHECK_FAILS(hml__arch_layout_of(&l, &a, &d), HML_EINVALID,
	            "arch 'cnnvec:4x4:relu:kernel=3:pool=4:head=64' pools rows [9, 9] below one pixel after layer 2");
	set_rows(&d, 1, five, 1, one);
	CHECK_FAILS(hml__arch_layout_of(&l, &a, &d), HML_EINVALID, "needs whole-field rows [C,H,W] or [H,W]; region rows are [5]");
	/* spatial: the last layer is not pooled, and gives 2 features a channel:
	 * 32 x 30 -> 16 x 15 (layer 1) -> heatmaps of 16 x 15 (layer 2). */
	CHECK_OK(hml__arch_parse(&a, "cnnvec:8x5:relu:pool=2:spatial"));
	set_rows(&d, 3, frames, 2, pos);
	CHECK_OK(hml__arch_layout_of(&l, &a, &d));
	CHECK_EQ_INT(l.flat_features, 10);
	CHECK(l.map_height == 16 && l.map_width == 15);
	/* a single layer is the heatmaps of the rows themselves: 9 x 9 with pool 4 */
	CHECK_OK(hml__arch_parse(&a, "cnnvec:3:relu:pool=4:spatial"));
	set_rows(&d, 2, hw, 1, one);
	CHECK_OK(hml__arch_layout_of(&l, &a, &d));
	CHECK(l.flat_features == 6 && l.map_height == 9 && l.map_width == 9);
	/* 9 -> 2 -> 0 only if the second were pooled: it is not */
	CHECK_OK(hml__arch_parse(&a, "cnnvec:4x4:relu:pool=4:spatial"));
	CHECK_OK(hml__arch_layout_of(&l, &a, &d));
	CHECK(l.map_height == 2 && l.map_width == 2);
}

TEST(cnnvec_template)
{
	static const int64_t frames[] = { 3, 8, 8 }, pos[] = { 3, 2 };
	char *s = expand("cnnvec:4x6:tanh:kernel=5:pool=2:head=16", frames, 3, pos, 2), *t;

	CHECK(s != NULL);
	if (s) {
		CHECK_CONTAINS(s, "h = torch.tanh(torch.conv2d(h, self.w0, self.b0, [1, 1], [2, 2]))\n"
		                  "    h = self.pool(h)\n"
		                  "    h = torch.tanh(torch.conv2d(h, self.w1, self.b1, [1, 1], [2, 2]))\n"
		                  "    h = self.pool(h)\n");
		CHECK_CONTAINS(s, "h = h.reshape([h.size(0), 24])");   /* 6 channels x 2 x 2 */
		CHECK_CONTAINS(s, "h = torch.tanh(torch.linear(h, self.w_head, self.b_head))");
		CHECK_CONTAINS(s, "return torch.linear(h, self.w_out, self.b_out)");
		CHECK_CONTAINS(s, "x.reshape([n, 3, 8, 8])");
		CHECK_CONTAINS(s, "hh = h.size(2) // 2");
		CHECK(strstr(s, "{") == NULL && strstr(s, "@") == NULL);
	}
	free(s);
	/* Neither pooling nor a hidden head layer. */
	t = expand("cnnvec:4:relu:pool=1:head=0", frames, 3, pos, 2);
	CHECK(t != NULL);
	if (t) {
		CHECK(strstr(t, "h = self.pool(h)") == NULL);
		CHECK(strstr(t, "w_head") == NULL);
		CHECK_CONTAINS(t, "h = h.reshape([h.size(0), 256])");
	}
	free(t);
	/* spatial: the pooled layers repeated, the last written out unpooled
	 * and without activation, read by spatial() on its 4 x 4 map */
	t = expand("cnnvec:4x6:tanh:kernel=3:pool=2:head=0:spatial", frames, 3, pos, 2);
	CHECK(t != NULL);
	if (t) {
		CHECK_CONTAINS(t, "h = torch.tanh(torch.conv2d(h, self.w0, self.b0, [1, 1], [1, 1]))\n"
		                  "    h = self.pool(h)\n"
		                  "    h = self.spatial(torch.conv2d(h, self.w1, self.b1, [1, 1], [1, 1]))\n"
		                  "    h = h.reshape([h.size(0), 12])\n");
		CHECK_CONTAINS(t, "p = torch.softmax(h.reshape([n, c, 4 * 4]), 2)");
		CHECK_CONTAINS(t, "return torch.stack([ex, ey], 2)");
		CHECK(strstr(t, "self.w2") == NULL && strstr(t, "{") == NULL && strstr(t, "@") == NULL);
	}
	free(t);
	t = expand("cnnvec:4:relu:pool=1:head=0", frames, 3, pos, 2);
	CHECK(t != NULL && strstr(t, "spatial") == NULL);
	free(t);
}

/* The declaration (lib/train/categorical.h): both spellings, every error,
 * the canonical form, the data check, the layout and the template. */
TEST(categorical_declarations)
{
	static const struct { const char *spec, *needle; } bad[] = {
		{ "1", "bad categorical declaration '1': entry '1' is not FEATURE:CLASSES (e.g. 1:12)" },
		{ "1:", "entry '1:' is not FEATURE:CLASSES" },
		{ "x:4", "entry 'x:4' is not FEATURE:CLASSES" },
		{ "1:4,", "bad categorical declaration '1:4,': entry '' is not FEATURE:CLASSES" },
		{ "1:4,,2:3", "entry '' is not FEATURE:CLASSES" },
		{ "1:4:5", "entry '1:4:5' is not FEATURE:CLASSES" },
		{ "1:1", "bad categorical declaration '1:1': classes 1 of feature 1 is outside 2 to 4096" },
		{ "1:4097", "classes 4097 of feature 1 is outside 2 to 4096" },
		{ "-2:4", "bad categorical declaration '-2:4': feature -2 is negative" },
		{ "3:4,1:2,3:5", "bad categorical declaration '3:4,1:2,3:5': feature 3 is declared twice" },
	};
	static const int64_t five[] = { 5 }, one[] = { 1 };
	hml__train_options o = HML__TRAIN_OPTIONS_INIT;
	hml__categorical *c = NULL;
	hml__arch a;
	hml__arch_layout l;
	hml__dataset d;
	char buf[64], *src = NULL, *text;
	json_t *j;
	size_t n = 9;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_FAILS(hml__categorical_parse(&c, &n, bad[i].spec), HML_EINVALID, bad[i].needle);
		CHECK(c == NULL && n == 0);
	}
	CHECK_OK(hml__categorical_parse(&c, &n, "none"));
	CHECK(c == NULL && n == 0);
	CHECK_OK(hml__categorical_parse(&c, &n, NULL));
	CHECK(c == NULL && n == 0);
	CHECK_OK(hml__categorical_parse(&c, &n, "4:12,0:2"));
	CHECK(n == 2 && c[0].feature == 0 && c[0].classes == 2 && c[1].feature == 4);
	hml__categorical_format(buf, sizeof(buf), c, n);
	CHECK_STR(buf, "0:2,4:12");
	text = json_dumps((j = hml__categorical_json(c, n)), JSON_COMPACT | JSON_SORT_KEYS);
	CHECK_STR(text, "[{\"classes\":2,\"feature\":0},{\"classes\":12,\"feature\":4}]");
	free(text);
	json_decref(j);
	CHECK_EQ_INT(hml__categorical_width(c, n, 5), 3 + 2 + 12);
	CHECK_OK(hml__categorical_check(c, n, 5));
	CHECK_FAILS(hml__categorical_check(c, n, 4), HML_EINVALID,
	            "categorical feature 4 is not an input feature: the rows have 4 (0 to 3)");
	/* the layout: the first layer reads the encoded width; the template one-hots */
	set_rows(&d, 1, five, 1, one);
	CHECK_OK(hml__arch_parse(&a, "mlp:8"));
	CHECK_OK(hml__arch_layout_of(&l, &a, &d));
	CHECK_OK(hml__arch_layout_categorical(&l, c, n));
	CHECK(l.core_in[0] == 17 && l.onehot_features == 14 && l.in_features == 5);
	CHECK_OK(hml__arch_expand(&src, &a, &l));
	CHECK_CONTAINS(src, "hot = torch.zeros([n, 14], dtype=r.dtype).scatter_(1, k, seen.to(r.dtype))");
	free(src);
	CHECK_OK(hml__arch_layout_of(&l, &a, &d));
	CHECK_OK(hml__arch_expand(&src, &a, &l));
	CHECK(strstr(src, "scatter_") == NULL);
	free(src);
	set_rows(&d, 1, one, 1, one);
	CHECK_OK(hml__arch_layout_of(&l, &a, &d));
	CHECK_FAILS(hml__arch_layout_categorical(&l, c, n), HML_EINVALID,
	            "categorical feature 4 is not an input feature: the rows have 1 (0 to 0)");
	free(c);
	/* the options: the grammar, and the mlp family alone */
	o.categorical = "2:3";
	CHECK_OK(hml__train_check(&o, NULL, 0));
	o.categorical = "2:x";
	CHECK_FAILS(hml__train_check(&o, NULL, 0), HML_EINVALID, "bad categorical declaration '2:x'");
	o.categorical = "2:3";
	o.arch = "cnn:4";
	CHECK_FAILS(hml__train_check(&o, NULL, 0), HML_EINVALID,
	            "categorical features are for the mlp family; arch 'cnn:4:relu:kernel=3' is cnn");
	o.arch = "cnnvec:4";
	CHECK_FAILS(hml__train_check(&o, NULL, 0), HML_EINVALID, "is cnnvec");
	o.categorical = "none";
	CHECK_OK(hml__train_check(&o, NULL, 0));
}

int main(void)
{
	RUN(bad_specs);
	RUN(canonical_specs);
	RUN(option_checks_need_no_torch);
	RUN(loss_and_metric_names);
	RUN(family_descriptions_are_embedded);
	RUN(layouts);
	RUN(residual_layouts);
	RUN(template_expansion);
	RUN(bad_templates);
	RUN(shortest_doubles);
	RUN(cnnvec_specs);
	RUN(cnnvec_layouts);
	RUN(cnnvec_template);
	RUN(categorical_declarations);
	return check_report();
}
