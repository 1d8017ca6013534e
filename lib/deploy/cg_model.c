/*
 * lib/deploy/cg_model.c - the model description: building, releasing and
 * checking an hml__cg_model (see cg_model.h).
 *
 * Apart from the C emitter (codegen.c), because it serves more than the
 * emitter: lib/deploy/export.cpp fills it from a TorchScript file and
 * checks it, `hml import` reads its layers, the tests build it by hand;
 * the emitter only reads a checked one.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "deploy/cg_model.h"

static const char *const act_names[] = {
	"identity", "relu", "tanh", "gelu", "silu", "sigmoid"
};
#define NACT ((int)(sizeof(act_names) / sizeof(act_names[0])))

const char *hml__cg_act_name(hml__cg_act a)
{
	return (int)a >= 0 && (int)a < NACT ? act_names[a] : NULL;
}

int hml__cg_act_parse(const char *name)
{
	for (int i = 0; name && i < NACT; i++)
		if (strcmp(name, act_names[i]) == 0)
			return i;
	return -1;
}

static float *zeros(int64_t n)
{
	return calloc((size_t)(n > 0 ? n : 1), sizeof(float));
}

/* The layers and normalisation arrays; layers below nconv are conv layers
 * of `kernel`, the others linear; layer nconv takes `flat` inputs when
 * flat > 0 (cnnvec's flattened map). */
static int init_layers(hml__cg_model *m, hml__cg_family family, int nlayers, int nconv,
                       const int64_t *sizes, int kernel, int64_t flat)
{
	memset(m, 0, sizeof(*m));
	if (nlayers < 1 || nlayers > 64 || (nconv > 0 && (kernel < 1 || kernel % 2 == 0)))
		return hml__error_set(HML_EINVALID, "bad model description (%d layers, kernel %d)",
		                      nlayers, kernel);
	for (int l = 0; l <= nlayers; l++)
		if (sizes[l] < 1 || sizes[l] > (1 << 20))
			return hml__error_set(HML_EINVALID, "bad layer size %lld", (long long)sizes[l]);
	if (flat > ((int64_t)1 << 30))
		return hml__error_set(HML_EINVALID, "bad layer size %lld", (long long)flat);
	m->family = family;
	if (!(m->layers = calloc((size_t)nlayers, sizeof(*m->layers))))
		return hml__error_oom();
	m->nlayers = nlayers;
	for (int l = 0; l < nlayers; l++) {
		hml__cg_layer *y = &m->layers[l];
		int64_t k2;

		y->in = l == nconv && flat > 0 ? flat : sizes[l];
		y->out = sizes[l + 1];
		y->kernel = l < nconv ? kernel : 0;
		k2 = y->kernel ? (int64_t)kernel * kernel : 1;
		y->act = HML__ACT_IDENTITY;
		y->weight = zeros(y->in * y->out * k2);
		y->bias = zeros(y->out);
		if (!y->weight || !y->bias)
			return hml__error_oom();
	}
	m->in_mean = zeros(sizes[0]);
	m->in_std = zeros(sizes[0]);
	m->out_mean = zeros(sizes[nlayers]);
	m->out_std = zeros(sizes[nlayers]);
	if (!m->in_mean || !m->in_std || !m->out_mean || !m->out_std)
		return hml__error_oom();
	return 0;
}

int hml__cg_model_init(hml__cg_model *m, hml__cg_family family, int nlayers,
                       const int64_t *sizes, int kernel)
{
	if (family != HML__CG_MLP && family != HML__CG_CNN) {
		memset(m, 0, sizeof(*m));
		return hml__error_set(HML_EINVALID, "bad model description (family %d)", (int)family);
	}
	return init_layers(m, family, nlayers, family == HML__CG_CNN ? nlayers : 0, sizes,
	                   family == HML__CG_CNN ? kernel : 0, 0);
}

int hml__cg_model_init_vec(hml__cg_model *m, int nlayers, int nconv, const int64_t *sizes,
                           int kernel, int pool, int64_t flat)
{
	int rc;

	if (nconv < 1 || nconv >= nlayers || pool < 1 || flat < 1) {
		memset(m, 0, sizeof(*m));
		return hml__error_set(HML_EINVALID,
			"bad model description (%d layers, %d conv, pool %d, %lld flat)", nlayers, nconv,
			pool, (long long)flat);
	}
	if ((rc = init_layers(m, HML__CG_CNNVEC, nlayers, nconv, sizes, kernel, flat)) < 0)
		return rc;
	m->nconv = nconv;
	m->pool = pool;
	return 0;
}

int hml__cg_model_set_categorical(hml__cg_model *m, const int64_t *feature,
                                  const int64_t *classes, int n)
{
	if (n < 1)
		return hml__error_set(HML_EINVALID, "bad model description (%d categorical features)", n);
	free(m->cat_feature);
	free(m->cat_classes);
	m->cat_feature = malloc((size_t)n * sizeof(int64_t));
	m->cat_classes = malloc((size_t)n * sizeof(int64_t));
	m->ncat = 0;
	if (!m->cat_feature || !m->cat_classes)
		return hml__error_oom();
	memcpy(m->cat_feature, feature, (size_t)n * sizeof(int64_t));
	memcpy(m->cat_classes, classes, (size_t)n * sizeof(int64_t));
	m->ncat = n;
	return 0;
}

void hml__cg_model_release(hml__cg_model *m)
{
	if (!m)
		return;
	for (int l = 0; m->layers && l < m->nlayers; l++) {
		free(m->layers[l].weight);
		free(m->layers[l].bias);
	}
	free(m->layers);
	free(m->in_mean);
	free(m->in_std);
	free(m->out_mean);
	free(m->out_std);
	free(m->cat_feature);
	free(m->cat_classes);
	memset(m, 0, sizeof(*m));
}

static int64_t prod(const int64_t *v, int n)
{
	int64_t p = 1;

	for (int i = 0; i < n; i++)
		p *= v[i];
	return p;
}

static int finite_all(const float *v, int64_t n, int nonzero)
{
	for (int64_t i = 0; i < n; i++)
		if (!isfinite(v[i]) || (nonzero && v[i] == 0.0f))
			return 0;
	return 1;
}

static int64_t weight_count(const hml__cg_layer *y)
{
	return y->in * y->out * (y->kernel ? (int64_t)y->kernel * y->kernel : 1);
}

/* The CNN's per-row shape as [C, H, W]; 0 when it is not one. */
static int cnn_dims(const int64_t *shape, int ndim, int64_t *c, int64_t *h, int64_t *w)
{
	if (ndim == 2) {
		*c = 1, *h = shape[0], *w = shape[1];
		return 1;
	}
	if (ndim == 3) {
		*c = shape[0], *h = shape[1], *w = shape[2];
		return 1;
	}
	return 0;
}

/* The map of a cnnvec's last conv layer (after the pooling of the layers
 * before it, and its own unless spatial). */
static void vec_map(const hml__cg_model *m, int64_t *c, int64_t *h, int64_t *w)
{
	cnn_dims(m->in_shape, m->in_ndim, c, h, w);
	for (int l = 0; l < m->nconv - (m->spatial != 0); l++) {
		*h /= m->pool;
		*w /= m->pool;
	}
	*c = m->layers[m->nconv - 1].out;
}

static int check_vec_shapes(const hml__cg_model *m)
{
	int64_t c = 0, h = 0, w = 0, ci = 0, hi = 0, wi = 0;

	if (!cnn_dims(m->in_shape, m->in_ndim, &ci, &hi, &wi))
		return hml__error_set(HML_ESHAPE, "cnnvec '%s' rows must be [C, H, W] or [H, W]", m->arch);
	vec_map(m, &c, &h, &w);
	if (m->spatial && m->layers[m->nconv - 1].act != HML__ACT_IDENTITY)
		return hml__error_set(HML_EINVALID, "spatial cnnvec '%s': its last conv layer gives "
		                      "heatmaps and must have no activation", m->arch);
	if (ci != m->layers[0].in || h < 1 || w < 1 ||
	    (m->spatial ? 2 * c : c * h * w) != m->layers[m->nconv].in ||
	    prod(m->out_shape, m->out_ndim) != m->layers[m->nlayers - 1].out)
		return hml__error_set(HML_ESHAPE,
			"cnnvec '%s' declares %lld x %lld x %lld in (pooled to %lld x %lld) and %lld out, "
			"its layers take %lld channels, flatten %lld and give %lld", m->arch,
			(long long)ci, (long long)hi, (long long)wi, (long long)h, (long long)w,
			(long long)prod(m->out_shape, m->out_ndim), (long long)m->layers[0].in,
			(long long)m->layers[m->nconv].in, (long long)m->layers[m->nlayers - 1].out);
	return 0;
}

/* The categorical features of an MLP with rows of `nin` features: each
 * once, increasing, inside the row; *width: the encoded row's. */
static int check_categorical(const hml__cg_model *m, int64_t nin, int64_t *width)
{
	*width = nin;
	for (int c = 0; c < m->ncat; c++) {
		if (m->cat_feature[c] < 0 || m->cat_feature[c] >= nin || m->cat_classes[c] < 2 ||
		    (c > 0 && m->cat_feature[c] <= m->cat_feature[c - 1]))
			return hml__error_set(HML_ESHAPE, "model '%s': bad categorical feature %lld "
			                      "(%lld classes) of %lld", m->arch,
			                      (long long)m->cat_feature[c], (long long)m->cat_classes[c],
			                      (long long)nin);
		*width += m->cat_classes[c] - 1;
	}
	return 0;
}

static int check_shapes(const hml__cg_model *m)
{
	const hml__cg_layer *first = &m->layers[0], *last = &m->layers[m->nlayers - 1];
	int64_t ci, hi, wi, co, ho, wo;

	if (m->in_ndim < 1 || m->in_ndim > 8 || m->out_ndim < 1 || m->out_ndim > 8)
		return hml__error_set(HML_ESHAPE, "model '%s' has %d input and %d output dimensions",
		                      m->arch, m->in_ndim, m->out_ndim);
	if (m->ncat > 0 && m->family != HML__CG_MLP)
		return hml__error_set(HML_EINVALID, "model '%s': categorical features need an MLP",
		                      m->arch);
	if (m->residual && m->family != HML__CG_CNN)
		return hml__error_set(HML_EINVALID, "model '%s': only a CNN can be residual", m->arch);
	if (m->spatial && m->family != HML__CG_CNNVEC)
		return hml__error_set(HML_EINVALID, "model '%s': only a cnnvec can be spatial", m->arch);
	if (m->family == HML__CG_MLP) {
		int64_t width;
		int rc = check_categorical(m, prod(m->in_shape, m->in_ndim), &width);

		if (rc < 0)
			return rc;
		if (width != first->in || prod(m->out_shape, m->out_ndim) != last->out)
			return hml__error_set(HML_ESHAPE,
				"model '%s' declares %lld input and %lld output features, "
				"its layers take %lld and give %lld", m->arch,
				(long long)width, (long long)prod(m->out_shape, m->out_ndim),
				(long long)first->in, (long long)last->out);
		return 0;
	}
	if (m->family == HML__CG_CNNVEC)
		return check_vec_shapes(m);
	if (!cnn_dims(m->in_shape, m->in_ndim, &ci, &hi, &wi) ||
	    !cnn_dims(m->out_shape, m->out_ndim, &co, &ho, &wo))
		return hml__error_set(HML_ESHAPE, "CNN '%s' rows must be [C, H, W] or [H, W]", m->arch);
	if (ci != first->in || co != last->out || hi != ho || wi != wo || hi < 1 || wi < 1)
		return hml__error_set(HML_ESHAPE,
			"CNN '%s' declares %lld x %lld x %lld in and %lld x %lld x %lld out, "
			"its layers take %lld and give %lld channels", m->arch,
			(long long)ci, (long long)hi, (long long)wi, (long long)co, (long long)ho,
			(long long)wo, (long long)first->in, (long long)last->out);
	if (m->residual && ci != co)
		return hml__error_set(HML_ESHAPE, "residual CNN '%s' maps %lld channels to %lld: it can "
		                      "add its input to its output only when they are equal", m->arch,
		                      (long long)ci, (long long)co);
	return 0;
}

int hml__cg_model_check(const hml__cg_model *m)
{
	int64_t nin, nout;

	int nconv = m && m->family == HML__CG_CNN ? m->nlayers : m ? m->nconv : 0;

	if (!m || !m->layers || m->nlayers < 1 ||
	    (m->family != HML__CG_MLP && m->family != HML__CG_CNN && m->family != HML__CG_CNNVEC) ||
	    (m->family == HML__CG_CNNVEC) != (m->nconv > 0) || nconv > m->nlayers ||
	    (m->family == HML__CG_CNNVEC && (m->nconv >= m->nlayers || m->pool < 1)))
		return hml__error_set(HML_EINVALID, "empty model description");
	for (int l = 0; l < m->nlayers; l++) {
		const hml__cg_layer *y = &m->layers[l];

		/* cnnvec's first linear layer takes the flattened map (check_shapes). */
		if (l > 0 && y->in != m->layers[l - 1].out && !(l == nconv && m->family == HML__CG_CNNVEC))
			return hml__error_set(HML_ESHAPE,
				"layer %d of '%s' takes %lld inputs, layer %d gives %lld",
				l, m->arch, (long long)y->in, l - 1, (long long)m->layers[l - 1].out);
		if ((l < nconv) != (y->kernel > 0) ||
		    (y->kernel && y->kernel % 2 == 0))
			return hml__error_set(HML_EINVALID, "layer %d of '%s' has kernel %d",
			                      l, m->arch, y->kernel);
		if (!hml__cg_act_name(y->act))
			return hml__error_set(HML_EINVALID, "layer %d of '%s' has a bad activation",
			                      l, m->arch);
		if (!finite_all(y->weight, weight_count(y), 0) || !finite_all(y->bias, y->out, 0))
			return hml__error_set(HML_EINVALID,
				"layer %d of '%s' has a weight that is not finite", l, m->arch);
	}
	nin = m->layers[0].in;
	nout = m->layers[m->nlayers - 1].out;
	if (!finite_all(m->in_mean, nin, 0) || !finite_all(m->in_std, nin, 1) ||
	    !finite_all(m->out_mean, nout, 0) || !finite_all(m->out_std, nout, 0))
		return hml__error_set(HML_EINVALID,
			"the normalisation of '%s' has a zero or non-finite value", m->arch);
	return check_shapes(m);
}

int64_t hml__cg_model_in_size(const hml__cg_model *m)
{
	return prod(m->in_shape, m->in_ndim);
}

int64_t hml__cg_model_out_size(const hml__cg_model *m)
{
	return prod(m->out_shape, m->out_ndim);
}

int hml__cg_model_in_field(const hml__cg_model *m, int64_t *c, int64_t *h, int64_t *w)
{
	return cnn_dims(m->in_shape, m->in_ndim, c, h, w);
}

int64_t hml__cg_model_weights(const hml__cg_model *m, int l)
{
	return weight_count(&m->layers[l]);
}
