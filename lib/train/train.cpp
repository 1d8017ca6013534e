/*
 * lib/train/train.cpp - training a surrogate through libtorch, behind the C
 * interface of train.h. The CLI's only libtorch translation unit.
 *
 * The deployed model is defined once, by the family's TorchScript template
 * (models/FAMILY.ts, expanded in plain C by lib/train/arch_template.c; arch.c parses
 * and checks the arch spec; this file only compiles the expansion with
 * libtorch). The saved model runs in the runtime's libtorch plugin like
 * any other. Training runs an eager
 * C++ forward on the very same parameter tensors, because the TorchScript
 * interpreter costs a few microseconds per operation, which is most of a
 * small model's training step (HML_TRAIN_FORWARD=script trains through the
 * template's core() instead, for comparison). An MLP's backward is written
 * out as well (MlpStep): autograd's numbers without autograd's overheads
 * (bench/train.sh measures the throughput against PyTorch's). After
 * training, the saved file is loaded back and its forward is compared with
 * the eager forward on the validation and test rows: any difference beyond
 * rounding is an error, so the two can never drift apart silently.
 *
 * The training steps run on the CPU or, in a CUDA build, on the GPU
 * (options.device): the parameters are drawn on the CPU either way, the
 * rows the epochs read are copied to the device once, and the model is
 * saved for the CPU (the runtime places it, HML_DEVICE).
 *
 * All parameters live in one flat buffer (and all gradients in another):
 * the module's parameters are views into it. The optimiser, gradient
 * clipping, zeroing and the copy of the best weights then each cost one
 * operation on one tensor per step instead of one per parameter.
 */
#include <torch/torch.h>
#include <torch/script.h>
#include <torch/cuda.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <ATen/Parallel.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "core/beneath.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/util.h"
#include "train/categorical.h"
#include "train/train.h"

namespace {

/* An architecture spec, parsed in C (lib/train/arch.h), with C++ views of it. */
struct Arch {
	hml__arch c;
	std::string family;
	std::vector<int64_t> widths;
	std::string act;
	double dropout = 0;
	int kernel = 0;           /* cnn, cnnvec */
	int pool = 1;             /* cnnvec: pooling after each conv layer */
	int64_t head = 0;         /* cnnvec: hidden units of the head */
	int spatial = 0;          /* cnnvec: the last conv layer's maps read by soft_argmax */
	std::string canonical;
};

/* The shapes a model maps between, from the data (lib/train/arch.h). */
struct Layout {
	hml__arch_layout c;
	bool cnn = false;                       /* conv layers (cnn, cnnvec) */
	bool vec = false;                       /* cnnvec: pooled, flattened, linear head */
	int64_t flat_features = 0;
	std::vector<int64_t> in_row, out_row;   /* the region's per-row shapes */
	std::vector<int64_t> core_in, core_out; /* inside core(): [F] or [C, H, W] */
	int64_t in_features = 0, out_features = 0;
};


int line_len(const char *s)
{
	return (int)std::strcspn(s, "\r\n");
}

/* c10::Error::what() appends a C++ back-trace; the message alone is enough. */
const char *what_of(const std::exception &e)
{
	if (auto c = dynamic_cast<const c10::Error *>(&e))
		return c->what_without_backtrace();
	return e.what();
}

int check_options(const hml__train_options *o, Arch &a)
{
	int rc;

	if ((rc = hml__train_check_arch(o, &a.c)) < 0)
		return rc;
	a.family = a.c.family;
	a.widths.assign(a.c.widths, a.c.widths + a.c.nwidths);
	a.act = a.c.act;
	a.dropout = a.c.dropout;
	a.kernel = a.c.kernel;
	a.pool = a.c.pool;
	a.head = a.c.head;
	a.spatial = a.c.spatial;
	a.canonical = a.c.canonical;
	return 0;
}

/* The categorical features of an MLP (lib/train/categorical.h): the
 * buffers of models/mlp.ts's forward, which encode() mirrors. */
struct Encoding {
	std::vector<hml__categorical> cats;
	torch::Tensor feature, offset, classes, cont;
	int64_t onehot = 0;
};

int make_encoding(const hml__train_options *o, Encoding &e)
{
	hml__categorical *c = nullptr;
	size_t n = 0;
	int rc;

	if ((rc = hml__categorical_parse(&c, &n, o->categorical)) < 0)
		return rc;
	e.cats.assign(c, c + n);
	std::free(c);
	return 0;
}

/* The buffers for rows of `features` features. */
void encoding_buffers(Encoding &e, int64_t features)
{
	std::vector<int64_t> feature, offset, cont;
	std::vector<float> classes;
	size_t k = 0;

	for (const hml__categorical &c : e.cats) {
		feature.push_back(c.feature);
		offset.push_back(e.onehot);
		classes.push_back((float)c.classes);
		e.onehot += c.classes;
	}
	for (int64_t f = 0; f < features; f++) {
		if (k < e.cats.size() && e.cats[k].feature == f)
			k++;
		else
			cont.push_back(f);
	}
	e.feature = torch::tensor(feature, torch::kLong);
	e.offset = torch::tensor(offset, torch::kLong);
	e.classes = torch::tensor(classes, torch::kFloat);
	e.cont = torch::tensor(cont, torch::kLong);
}

int make_layout(const hml__dataset *d, const Arch &a, Encoding &e, Layout &l)
{
	int rc;

	l = Layout();
	if ((rc = hml__arch_layout_of(&l.c, &a.c, d)) < 0 ||
	    (!e.cats.empty() &&
	     (rc = hml__arch_layout_categorical(&l.c, e.cats.data(), e.cats.size())) < 0))
		return rc;
	if (!e.cats.empty())
		encoding_buffers(e, l.c.in_features);
	l.cnn = a.c.cnn != 0;
	l.vec = a.c.vec != 0;
	l.flat_features = l.c.flat_features;
	l.in_row.assign(l.c.in_row, l.c.in_row + l.c.in_ndim);
	l.out_row.assign(l.c.out_row, l.c.out_row + l.c.out_ndim);
	l.core_in.assign(l.c.core_in, l.c.core_in + l.c.core_in_ndim);
	l.core_out.assign(l.c.core_out, l.c.core_out + l.c.core_out_ndim);
	l.in_features = l.c.in_features;
	l.out_features = l.c.out_features;
	return 0;
}

int expand_template(const Arch &a, const Layout &l, std::string &out)
{
	char *src = nullptr;
	int rc;

	if ((rc = hml__arch_expand(&src, &a.c, &l.c)) < 0)
		return rc;
	out = src;
	std::free(src);
	return 0;
}


/* --- the model ----------------------------------------------------------- */

/* hml__train_losses' order. LOSS_LOG is the MSE of the normalised log of
 * the outputs; the relative loss is a weighted MAE of the normalised ones. */
enum { LOSS_MSE, LOSS_MAE, LOSS_RELATIVE, LOSS_LOG };

int loss_index(const char *name)
{
	for (int i = 0; name && hml__train_losses[i]; i++)
		if (std::strcmp(hml__train_losses[i], name) == 0)
			return i;
	return LOSS_MSE;
}

/* mean(w * |o - y|) (w undefined: 1) added to loss_sum times the rows, its
 * gradient with respect to o into g. */
void abs_loss_step(const torch::Tensor &o, const torch::Tensor &y, const torch::Tensor &w,
                   torch::Tensor &g, torch::Tensor &loss_sum)
{
	torch::Tensor d = o - y;
	double rows = (double)o.size(0), n = (double)o.numel();

	at::sign_out(g, d);
	d.abs_();
	if (w.defined()) {
		d.mul_(w);
		g.mul_(w);
	}
	g.div_(n);
	loss_sum.add_(d.sum(), rows / n);
}

/* The training loss of predictions p against targets y (autograd). */
torch::Tensor loss_of(int loss, const torch::Tensor &p, const torch::Tensor &y,
                      const torch::Tensor &w)
{
	if (loss == LOSS_MAE)
		return (p - y).abs().mean();
	if (loss == LOSS_RELATIVE)
		return ((p - y).abs() * w).mean();
	return torch::mse_loss(p, y);
}

struct Model {
	Arch arch;
	Layout lay;
	Encoding enc;
	torch::jit::Module module;
	std::vector<std::string> names;      /* w0, b0, ..., w_out, b_out */
	std::vector<torch::Tensor> params;   /* leaves: views into flat */
	std::vector<torch::Tensor> grads;    /* their .grad: views into flat_grad */
	std::vector<int64_t> offsets;
	torch::Tensor flat, flat_grad;
	int64_t count = 0;                   /* trainable numbers */
	bool script = false;                 /* train through the template's core() */
	int loss = 0;                        /* LOSS_MSE, ... */
	c10::optional<torch::jit::Method> core;
	torch::Device dev = torch::kCPU;     /* where flat and the steps live */

	torch::Tensor forward(const torch::Tensor &x, bool train);
	void set_training(bool on);
};

torch::Tensor activate(const torch::Tensor &x, const std::string &act)
{
	if (act == "relu")
		return at::relu(x);
	if (act == "tanh")
		return at::tanh(x);
	if (act == "gelu")
		return at::gelu(x);
	if (act == "silu")
		return at::silu(x);
	return at::sigmoid(x);
}

/* models/cnnvec.ts's pool(): p x p means, stride p, the rest dropped. */
torch::Tensor avg_pool(const torch::Tensor &h, int64_t p)
{
	int64_t hh = h.size(2) / p, ww = h.size(3) / p;
	torch::Tensor c = h.slice(2, 0, hh * p).slice(3, 0, ww * p);
	const int64_t dims[] = { 3, 5 };

	return c.reshape({ c.size(0), c.size(1), hh, p, ww, p }).mean(at::IntArrayRef(dims));
}

/* models/cnnvec.ts's spatial(): each channel's softmax over its map
 * weighs the positions' column and row, (2j + 1) / W - 1 and (2i + 1) / H - 1. */
torch::Tensor soft_argmax(const torch::Tensor &h)
{
	int64_t n = h.size(0), c = h.size(1), hh = h.size(2), ww = h.size(3);
	torch::Tensor p = at::softmax(h.reshape({ n, c, hh * ww }), 2).reshape({ n, c, hh, ww });
	auto opt = h.options();
	torch::Tensor gx = (torch::arange(ww, opt) * 2.0 + 1.0) / (double)ww - 1.0;
	torch::Tensor gy = (torch::arange(hh, opt) * 2.0 + 1.0) / (double)hh - 1.0;
	torch::Tensor ex = (p.sum(2) * gx).sum(2), ey = (p.sum(3) * gy).sum(2);

	return at::stack({ ex, ey }, 2);
}

/* core() of the template, on normalised data; mirrors models/FAMILY.ts. */
torch::Tensor Model::forward(const torch::Tensor &x, bool train)
{
	size_t n = arch.widths.size(), p = 2 * n;
	size_t pooled = n - (size_t)arch.spatial;   /* spatial: the last layer gives heatmaps */
	torch::Tensor h = x;

	if (script)
		return core->operator()({ x }).toTensor();
	for (size_t l = 0; l < pooled; l++) {
		if (lay.cnn)
			h = at::conv2d(h, params[2 * l], params[2 * l + 1], { 1, 1 },
			               { arch.kernel / 2, arch.kernel / 2 });
		else
			h = at::linear(h, params[2 * l], params[2 * l + 1]);
		h = activate(h, arch.act);
		if (lay.vec && arch.pool > 1)
			h = avg_pool(h, arch.pool);
		if (arch.dropout > 0)
			h = at::dropout(h, arch.dropout, train);
	}
	if (lay.vec) {
		if (arch.spatial)
			h = soft_argmax(at::conv2d(h, params[2 * pooled], params[2 * pooled + 1], { 1, 1 },
			                           { arch.kernel / 2, arch.kernel / 2 }));
		h = h.reshape({ h.size(0), lay.flat_features });
		if (arch.head > 0) {
			h = activate(at::linear(h, params[p], params[p + 1]), arch.act);
			p += 2;
		}
		return at::linear(h, params[p], params[p + 1]);
	}
	if (lay.cnn)
		return at::conv2d(h, params[2 * n], params[2 * n + 1], { 1, 1 },
		                  { arch.kernel / 2, arch.kernel / 2 });
	return at::linear(h, params[2 * n], params[2 * n + 1]);
}

void Model::set_training(bool on)
{
	if (script)
		module.train(on);
}

/*
 * Parameters in PyTorch's default initialisation (nn.Linear / nn.Conv2d:
 * kaiming_uniform_(a = sqrt(5)) for weights, U(-1/sqrt(fan_in),
 * 1/sqrt(fan_in)) for biases), layer by layer, weight before bias, as an
 * nn.Sequential of the same layers draws them after torch.manual_seed().
 */
void make_params(Model &m)
{
	std::vector<std::vector<int64_t>> shapes;
	std::vector<int64_t> sizes;
	int64_t total = 0;
	size_t n = m.arch.widths.size();

	sizes.push_back(m.lay.core_in[0]);
	for (int64_t w : m.arch.widths)
		sizes.push_back(w);
	sizes.push_back(m.lay.cnn ? m.lay.core_out[0] : m.lay.out_features);
	for (size_t l = 0; l <= n; l++) {
		std::string suffix = l < n ? std::to_string(l) : "_out";

		if (m.lay.vec && l == n) {
			/* cnnvec: the head reads the flattened, pooled map. */
			int64_t in = m.lay.flat_features;

			if (m.arch.head > 0) {
				shapes.push_back({ m.arch.head, in });
				shapes.push_back({ m.arch.head });
				m.names.push_back("w_head");
				m.names.push_back("b_head");
				in = m.arch.head;
			}
			shapes.push_back({ m.lay.out_features, in });
		} else if (m.lay.cnn)
			shapes.push_back({ sizes[l + 1], sizes[l], m.arch.kernel, m.arch.kernel });
		else
			shapes.push_back({ sizes[l + 1], sizes[l] });
		shapes.push_back({ shapes.back()[0] });
		m.names.push_back("w" + suffix);
		m.names.push_back("b" + suffix);
	}
	/* 64-byte aligned slots; the gaps stay zero, with zero gradients. */
	for (const auto &s : shapes) {
		int64_t numel = 1;

		for (int64_t v : s)
			numel *= v;
		m.offsets.push_back(total);
		total += (numel + 15) / 16 * 16;
		m.count += numel;
	}
	/* Drawn on the CPU whatever the device, so a seed gives one model. */
	m.flat = torch::zeros({ total });
	torch::NoGradGuard no_grad;
	for (size_t p = 0; p < shapes.size(); p++) {
		int64_t numel = 1;

		for (int64_t v : shapes[p])
			numel *= v;
		torch::Tensor view = m.flat.narrow(0, m.offsets[p], numel).view(shapes[p]);
		if (p % 2 == 0) {
			torch::nn::init::kaiming_uniform_(view, std::sqrt(5.0));
		} else {
			const auto &w = shapes[p - 1];
			int64_t fan_in = 1;

			for (size_t k = 1; k < w.size(); k++)
				fan_in *= w[k];
			double bound = fan_in > 0 ? 1.0 / std::sqrt((double)fan_in) : 0;
			view.uniform_(-bound, bound);
		}
	}
	m.flat = m.flat.to(m.dev);
	m.flat_grad = torch::zeros({ total }, m.flat.options());
	for (size_t p = 0; p < shapes.size(); p++) {
		int64_t numel = 1;

		for (int64_t v : shapes[p])
			numel *= v;
		torch::Tensor view = m.flat.narrow(0, m.offsets[p], numel).view(shapes[p]);
		torch::Tensor leaf = view.detach().requires_grad_(true);
		leaf.mutable_grad() = m.flat_grad.narrow(0, m.offsets[p], numel).view(shapes[p]);
		m.params.push_back(leaf);
		m.grads.push_back(leaf.grad());
	}
}

c10::IValue int_list(const std::vector<int64_t> &v)
{
	return c10::IValue(c10::List<int64_t>(v));
}

int build_module(Model &m, const torch::Tensor &in_mean, const torch::Tensor &in_std,
                 const torch::Tensor &out_mean, const torch::Tensor &out_std)
{
	std::string src;
	int rc;

	if ((rc = expand_template(m.arch, m.lay, src)) < 0)
		return rc;
	m.module = torch::jit::Module(c10::QualifiedName(m.lay.vec ? "__torch__.hml.CNNVec"
	                                                 : m.lay.cnn ? "__torch__.hml.CNN" : "__torch__.hml.MLP"));
	m.module.register_attribute("training", c10::BoolType::get(), true);
	for (size_t p = 0; p < m.params.size(); p++)
		m.module.register_parameter(m.names[p], m.params[p], false);
	m.module.register_buffer("in_mean", in_mean);
	m.module.register_buffer("in_std", in_std);
	m.module.register_buffer("out_mean", out_mean);
	m.module.register_buffer("out_std", out_std);
	if (!m.enc.cats.empty()) {
		m.module.register_buffer("cat_feature", m.enc.feature);
		m.module.register_buffer("cat_offset", m.enc.offset);
		m.module.register_buffer("cat_classes", m.enc.classes);
		m.module.register_buffer("cont_feature", m.enc.cont);
	}
	m.module.register_attribute("hml_input_shape", c10::ListType::ofInts(), int_list(m.lay.in_row));
	m.module.register_attribute("hml_output_shape", c10::ListType::ofInts(), int_list(m.lay.out_row));
	m.module.register_attribute("hml_arch", c10::StringType::get(), m.arch.canonical);
	if (m.lay.c.log_output)
		m.module.register_attribute("hml_output_exp", c10::BoolType::get(), true);
	try {
		m.module.define(src);
	} catch (const std::exception &e) {
		const char *w = what_of(e);
		return hml__error_set(HML_EMODEL, "models/%s.ts does not compile: %.*s",
		                      m.arch.family.c_str(), line_len(w), w);
	}
	m.core = m.module.get_method("core");
	return 0;
}

/*
 * An MLP's training step with the backward written out. For the small
 * networks surrogates are, autograd's share of a step (its graph, a fresh
 * tensor for every activation and gradient, and the accumulation of each
 * gradient into .grad) outweighs the arithmetic. Here the activations live
 * in buffers kept from step to step and the gradients land straight in
 * flat_grad, so a step allocates nothing but the loss. The arithmetic is
 * autograd's, kernel for kernel (the derivatives of linear = addmm(b, h,
 * w.t()), of mse_loss and of each activation in derivatives.yaml; dropout
 * draws its noise as at::dropout does), so the numbers are the same bits;
 * HML_TRAIN_FORWARD=script still trains through autograd.
 */
class MlpStep {
public:
	MlpStep(const Model &m, int64_t batch);
	/* Forward, loss and backward on x [rows, in] and y [rows, out] (w: the
	 * relative loss's weights, else undefined): sets every gradient in
	 * m.flat_grad and adds loss * rows to loss_sum. */
	void run(const torch::Tensor &x, const torch::Tensor &y, const torch::Tensor &w,
	         torch::Tensor &loss_sum);

private:
	const Model &m;
	size_t n;                            /* hidden layers */
	int act;                             /* index into hml__arch_activations */
	bool keep_pre;                       /* gelu, silu: backward needs the input */
	std::vector<torch::Tensor> grads;    /* m.grads: handles to write through */
	std::vector<torch::Tensor> pre, post, noise, dropped;
	torch::Tensor out, gout, grad[2], one;
};

MlpStep::MlpStep(const Model &model, int64_t batch)
	: m(model), n(model.arch.widths.size()), grads(model.grads)
{
	int64_t widest = 1;
	const torch::TensorOptions on = m.flat.options();

	act = m.arch.c.act_index;
	keep_pre = m.arch.act == "gelu" || m.arch.act == "silu";
	for (int64_t w : m.arch.widths) {
		pre.push_back(torch::empty({ batch, w }, on));
		post.push_back(keep_pre ? torch::empty({ batch, w }, on) : pre.back());
		if (m.arch.dropout > 0) {
			noise.push_back(torch::empty({ batch, w }, on));
			dropped.push_back(torch::empty({ batch, w }, on));
		}
		widest = std::max(widest, w);
	}
	out = torch::empty({ batch, m.lay.out_features }, on);
	gout = torch::empty({ batch, m.lay.out_features }, on);
	grad[0] = torch::empty({ batch * widest }, on);
	grad[1] = torch::empty({ batch * widest }, on);
	one = torch::ones({}, on);
}

void MlpStep::run(const torch::Tensor &x, const torch::Tensor &y, const torch::Tensor &w,
                  torch::Tensor &loss_sum)
{
	c10::InferenceMode no_autograd;
	const int64_t rows = x.size(0);
	const double p = m.arch.dropout;
	const int64_t batch_dim[] = { 0 };
	std::vector<torch::Tensor> in(n + 1);   /* each layer's input */
	torch::Tensor g;

	in[0] = x;
	for (size_t l = 0; l < n; l++) {
		torch::Tensor a = pre[l].narrow(0, 0, rows), h = post[l].narrow(0, 0, rows);

		at::addmm_out(a, m.params[2 * l + 1], in[l], m.params[2 * l].t());
		switch (act) {
		case 0: at::relu_(a); break;
		case 1: at::tanh_(a); break;
		case 2: at::gelu_out(h, a); break;
		case 3: at::silu_out(h, a); break;
		default: at::sigmoid_(a); break;
		}
		in[l + 1] = h;
		if (p > 0) {
			torch::Tensor z = noise[l].narrow(0, 0, rows), d = dropped[l].narrow(0, 0, rows);

			z.bernoulli_(1 - p);
			z.div_(1 - p);
			in[l + 1] = at::mul_out(d, h, z);
		}
	}
	torch::Tensor o = out.narrow(0, 0, rows);
	at::addmm_out(o, m.params[2 * n + 1], in[n], m.params[2 * n].t());
	g = gout.narrow(0, 0, rows);
	if (m.loss == LOSS_MAE || m.loss == LOSS_RELATIVE) {
		abs_loss_step(o, y, w, g, loss_sum);
	} else {
		loss_sum.add_(at::mse_loss(o, y), (double)rows);
		at::mse_loss_backward_out(g, one, o, y, at::Reduction::Mean);
	}
	for (size_t l = n + 1; l-- > 0;) {
		at::mm_out(grads[2 * l], g.t(), in[l]);
		at::sum_out(grads[2 * l + 1], g, at::IntArrayRef(batch_dim));
		if (l == 0)
			break;
		int64_t w = m.arch.widths[l - 1];
		torch::Tensor gh = grad[l % 2].narrow(0, 0, rows * w).view({ rows, w });

		at::mm_out(gh, g, m.params[2 * l]);
		if (p > 0)
			gh.mul_(noise[l - 1].narrow(0, 0, rows));
		switch (act) {
		case 0: at::threshold_backward_out(gh, gh, post[l - 1].narrow(0, 0, rows), 0); break;
		case 1: at::tanh_backward_out(gh, gh, post[l - 1].narrow(0, 0, rows)); break;
		case 2: at::gelu_backward_out(gh, gh, pre[l - 1].narrow(0, 0, rows)); break;
		case 3: at::silu_backward_out(gh, gh, pre[l - 1].narrow(0, 0, rows)); break;
		default: at::sigmoid_backward_out(gh, gh, post[l - 1].narrow(0, 0, rows)); break;
		}
		g = gh;
	}
}

/* --- data ---------------------------------------------------------------- */

/* Unbiased integer in [0, n) from a 64-bit generator (the same on every
 * platform, unlike std::uniform_int_distribution). */
uint64_t below(std::mt19937_64 &g, uint64_t n)
{
	uint64_t limit = UINT64_MAX - UINT64_MAX % n, v;

	do
		v = g();
	while (v >= limit);
	return v % n;
}

void shuffle(std::vector<int64_t> &v, std::mt19937_64 &g)
{
	for (size_t i = v.size(); i > 1; i--)
		std::swap(v[i - 1], v[below(g, i)]);
}

torch::Tensor index_tensor(const std::vector<int64_t> &v)
{
	return torch::from_blob(const_cast<int64_t *>(v.data()), { (int64_t)v.size() },
	                        torch::kLong).clone();
}

/* Rows reshaped to [n, *shape]: what core() sees ([n, F] or [n, C, H, W])
 * or what the application passes ([n, *in_row]). */
torch::Tensor batch_view(const torch::Tensor &t, const std::vector<int64_t> &shape)
{
	std::vector<int64_t> s = { t.size(0) };

	s.insert(s.end(), shape.begin(), shape.end());
	return t.reshape(s);
}

/* Mean and std per feature (MLP) or per channel (CNN), in double, shaped
 * to broadcast in forward(). Constant features get std `constant_std`: 1
 * for inputs (they normalise to 0), 0 for outputs (forward() then returns
 * the constant exactly, whatever the network says). */
void statistics(const torch::Tensor &rows, const std::vector<int64_t> &core, bool cnn,
                double constant_std, torch::Tensor &mean, torch::Tensor &stdv)
{
	torch::NoGradGuard no_grad;
	torch::Tensor d = rows.to(torch::kDouble);

	if (cnn) {
		const int64_t dims[] = { 0, 2 };

		d = d.reshape({ d.size(0), core[0], -1 });
		mean = d.mean(at::IntArrayRef(dims));
		stdv = d.std(at::IntArrayRef(dims), false);
	} else {
		const int64_t dims[] = { 0 };

		mean = d.mean(at::IntArrayRef(dims));
		stdv = d.std(at::IntArrayRef(dims), false);
	}
	stdv = torch::where(stdv < 1e-8, torch::full_like(stdv, constant_std), stdv);
	mean = mean.to(torch::kFloat);
	stdv = stdv.to(torch::kFloat);
	if (cnn) {
		mean = mean.reshape({ core[0], 1, 1 });
		stdv = stdv.reshape({ core[0], 1, 1 });
	}
}

/* Rows of activations per forward chunk in evaluation: about 64 MiB. */
int64_t eval_chunk(const Model &m)
{
	int64_t widest = 1, spatial = 1, per_row;

	for (int64_t w : m.arch.widths)
		widest = std::max(widest, w);
	widest = std::max({ widest, m.lay.in_features, m.lay.core_in[0], m.lay.out_features });
	if (m.lay.cnn)
		spatial = m.lay.core_in[1] * m.lay.core_in[2];
	per_row = widest * spatial;
	return std::max<int64_t>(1, (int64_t(16) << 20) / per_row);
}

/* core() over x in chunks, in evaluation mode; normalised outputs. */
torch::Tensor predict(Model &m, const torch::Tensor &x)
{
	torch::NoGradGuard no_grad;
	int64_t n = x.size(0), chunk = eval_chunk(m);
	std::vector<torch::Tensor> parts;

	m.set_training(false);
	for (int64_t s = 0; s < n; s += chunk)
		parts.push_back(m.forward(x.narrow(0, s, std::min(chunk, n - s)), false));
	m.set_training(true);
	return parts.size() == 1 ? parts[0] : torch::cat(parts);
}

/* The saved module's forward on raw rows, in the same chunks. */
torch::Tensor predict_saved(torch::jit::Module &mod, const torch::Tensor &x, int64_t chunk)
{
	torch::NoGradGuard no_grad;
	int64_t n = x.size(0);
	std::vector<torch::Tensor> parts;

	for (int64_t s = 0; s < n; s += chunk)
		parts.push_back(mod.forward({ x.narrow(0, s, std::min(chunk, n - s)) }).toTensor());
	return parts.size() == 1 ? parts[0] : torch::cat(parts);
}

int write_all(const char *path, int fd, const std::string &bytes)
{
	const char *p = bytes.data();
	size_t left = bytes.size();

	if (lseek(fd, 0, SEEK_SET) < 0 || ftruncate(fd, 0) < 0)
		return hml__error_set(HML_EIO, "cannot write model '%s': %s", path, std::strerror(errno));
	while (left > 0) {
		ssize_t w = write(fd, p, left);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return hml__error_set(HML_EIO, "cannot write model '%s': %s", path, std::strerror(errno));
		p += w;
		left -= (size_t)w;
	}
	if (fsync(fd) < 0 && errno != EINVAL)
		return hml__error_set(HML_EIO, "cannot write model '%s': %s", path, std::strerror(errno));
	return 0;
}

/* Restores the process-wide graph-executor setting on every path. */
struct ExecutorOptimize {
	bool saved;
	explicit ExecutorOptimize(bool on) : saved(torch::jit::getGraphExecutorOptimize())
	{
		torch::jit::setGraphExecutorOptimize(on);
	}
	~ExecutorOptimize() { torch::jit::setGraphExecutorOptimize(saved); }
};

void set_lr(torch::optim::Optimizer &opt, bool adamw, double lr)
{
	for (auto &g : opt.param_groups()) {
		if (adamw)
			static_cast<torch::optim::AdamWOptions &>(g.options()).lr(lr);
		else
			static_cast<torch::optim::AdamOptions &>(g.options()).lr(lr);
	}
}

/* The rows of one training run: a seeded permutation, test rows first,
 * then validation, then training; normalised with the training rows'
 * statistics. The raw validation and test inputs are kept as the
 * application gives them, for the saved model (check_saved). */
struct Split {
	int64_t n_train = 0, n_val = 0, n_test = 0;
	int64_t n_train_all = 0;                /* n_train before a row_fraction */
	torch::Tensor xn, yn;                   /* training rows, normalised */
	torch::Tensor xva, xte;                 /* validation, test inputs, normalised */
	torch::Tensor xva_raw, xte_raw;         /* the same, as the application's rows */
	torch::Tensor yva, yte;                 /* their outputs, in the application's units */
	torch::Tensor y_const;                  /* each output's mean over the training rows */
	torch::Tensor in_mean, in_std, out_mean, out_std;
	torch::Tensor w;                        /* relative loss: each training output's weight */
	bool log = false;                       /* LOSS_LOG: yn normalises log of the outputs */
	bool residual = false;                  /* a residual arch: yn normalises y - x, and
	                                           out_mean/out_std are its statistics */
	torch::Tensor va_base, te_base;         /* residual: the validation and test inputs in
	                                           the outputs' layout, added back to the network's */
	std::vector<int64_t> train_rows;        /* the data set's rows of the training split */
	/* rollout R > 1 (train.h): one sample per window of R consecutive calls */
	int rollout = 1;
	int64_t n_windows = 0;
	torch::Tensor rw_x0;                    /* first inputs, normalised [W, *core_in] */
	torch::Tensor rw_base0;                 /* residual: the same, raw, [W, *core_out] */
	torch::Tensor rw_y;                     /* the R outputs, raw [W, R, *core_out] */
	torch::Tensor rw_w;                     /* relative loss: their weights, likewise */
	torch::Tensor out_scale;                /* out_std with 1 for its zeros (as yn) */
	/* the rows' order by blocks of R calls (hml__rollout_split), and the
	 * validation windows the best epoch is chosen by */
	std::vector<int64_t> order;
	int64_t n_val_windows = 0;
	torch::Tensor rv_x0, rv_base0, rv_y;    /* as rw_x0, rw_base0, rw_y */
};

/* The training part of s's n_train rows, and the sizes into res. */
void train_part(Split &s, const hml__train_options *o, hml__train_result *res)
{
	s.n_train_all = s.n_train;
	/* A lower fidelity: the first rows of the (shuffled) training part. */
	if (o->row_fraction > 0 && o->row_fraction < 1)
		s.n_train = std::max<int64_t>(1, std::llround((double)s.n_train * o->row_fraction));
	res->n_train = s.n_train;
	res->n_val = s.n_val;
	res->n_test = s.n_test;
}

int split_sizes(int64_t rows, const hml__train_options *o, Split &s, hml__train_result *res)
{
	s.n_test = (int64_t)std::llround((double)rows * o->test_fraction);
	s.n_val = (int64_t)std::llround((double)rows * o->val_fraction);
	s.n_train = rows - s.n_val - s.n_test;
	if (s.n_test < 1 || s.n_val < 1 || s.n_train < 1)
		return hml__error_set(HML_EINVALID,
			"%lld rows are too few for a train/validation/test split (fractions %g and %g)",
			(long long)rows, o->val_fraction, o->test_fraction);
	train_part(s, o, res);
	return 0;
}

/* Rollout R > 1: the rows split by blocks of R consecutive calls
 * (lib/train/rollout.h), so that validation holds windows; the sizes of
 * split_sizes rounded to whole blocks. */
int block_split(const hml__dataset *d, const hml__train_options *o, Split &s,
                hml__train_result *res)
{
	int rc;

	if (o->rollout <= 1)
		return 0;
	s.order.resize(d->rows);
	if ((rc = hml__rollout_split(s.order.data(), &s.n_val, &s.n_test, d->run, d->call, d->rows,
	                             o->rollout, o->seed)) < 0)
		return rc;
	s.n_train = d->rows - s.n_val - s.n_test;
	train_part(s, o, res);
	return 0;
}

/* lib/deploy/metrics.h's HML__MAPE_FLOOR (lib/deploy is above lib/train). */
const double MAPE_RULE = 1e-3;

/* The MAPE in per cent of pred against t, lib/deploy/metrics.c's rule. */
double mape_of(const torch::Tensor &pred, const torch::Tensor &t, double floor)
{
	torch::NoGradGuard no_grad;
	torch::Tensor a = t.to(torch::kDouble).abs(), keep;

	keep = floor > 0 ? a >= floor : (a > 0) & (a > MAPE_RULE * a.max());
	if (keep.sum().item<int64_t>() == 0)
		return NAN;
	torch::Tensor rel = ((pred.to(torch::kDouble) - t.to(torch::kDouble)).abs() / a).masked_select(keep);
	return 100.0 * rel.mean().item<double>();
}

/* The relative loss as a weighted MAE of the normalised outputs:
 * |y - t| / max(|t|, floor) = w |yn - tn| with w = std / max(|t|, floor);
 * floor 0: 1e-3 of the largest |t| (lib/deploy/metrics.h's rule). */
torch::Tensor relative_weights(const torch::Tensor &ytr, const torch::Tensor &out_std,
                               double floor)
{
	torch::NoGradGuard no_grad;

	if (!(floor > 0))
		floor = 1e-3 * ytr.abs().max().item<double>();
	if (!(floor > 0))
		floor = 1;
	return (out_std / ytr.abs().clamp_min(floor)).to(torch::kFloat).contiguous();
}

/* The log loss: the training outputs ytr replaced by their logarithm;
 * every output (Y: all rows) must be positive. */
int log_targets(const torch::Tensor &Y, torch::Tensor &ytr)
{
	double least = Y.min().item<double>();

	if (!(least > 0))
		return hml__error_set(HML_EINVALID, "loss 'log' needs positive outputs; the smallest is %g",
		                      least);
	ytr = ytr.log();
	return 0;
}

/* The MAPE judges nothing when no validation output reaches its floor. */
int check_metric(const Split &s, const hml__train_options *o)
{
	if (o->metric && std::strcmp(o->metric, "mape") == 0 &&
	    std::isnan(mape_of(s.yva, s.yva, o->mape_floor)))
		return hml__error_set(HML_EINVALID, "no validation output reaches the MAPE floor %g: the "
		                      "metric mape has nothing to judge", o->mape_floor);
	return 0;
}

/* Rows [n, *core_in] as core() reads them, from raw rows (an MLP's: [n,
 * in_features]), with the very operations of the template's forward. */
torch::Tensor encode(const Split &s, const Encoding &e, const torch::Tensor &r)
{
	torch::Tensor z = (r - s.in_mean) / s.in_std;

	if (e.cats.empty())
		return z;
	torch::Tensor v = torch::round(r.index_select(1, e.feature));
	torch::Tensor seen = (v >= 0) & (v < e.classes);
	torch::Tensor k = torch::where(seen, v, torch::zeros_like(v)).to(torch::kLong) + e.offset;
	torch::Tensor hot = torch::zeros({ r.size(0), e.onehot }, r.options())
	                    .scatter_(1, k, seen.to(r.scalar_type()));
	return torch::cat({ z.index_select(1, e.cont), hot }, 1);
}

/* The model training continues from (hml__train_options.init_from). */
struct Parent {
	torch::jit::Module mod;
	bool on = false;
	std::string path;
};

int parent_load(const char *path, Parent &p)
{
	if (!path)
		return 0;
	try {
		p.mod = torch::jit::load(path);
	} catch (const std::exception &e) {
		const char *w = what_of(e);
		return hml__error_set(HML_EMODEL, "cannot continue model '%s': %.*s", path,
		                      line_len(w), w);
	}
	p.on = true;
	p.path = path;
	return 0;
}

/* The parent's tensor `name`, of the shape `like` has, into *out. */
int parent_tensor(const Parent &p, const std::string &name, const torch::Tensor &like,
                  torch::Tensor &out)
{
	std::ostringstream got, want;
	const std::vector<int64_t> shape = like.sizes().vec();   /* `out` may be `like` */

	if (!p.mod.hasattr(name) || !p.mod.attr(name).isTensor())
		return hml__error_set(HML_EMODEL, "model '%s' cannot be continued: it has no '%s' "
		                      "(not a model hml trained with this arch)", p.path.c_str(),
		                      name.c_str());
	torch::Tensor t = p.mod.attr(name).toTensor().detach().to(torch::kFloat).contiguous();
	if (t.sizes().vec() == shape) {
		out = t;
		return 0;
	}
	got << t.sizes();
	want << c10::IntArrayRef(shape);
	return hml__error_set(HML_EMODEL, "model '%s' cannot be continued: its '%s' is %s, this "
	                      "arch and data's %s", p.path.c_str(), name.c_str(), got.str().c_str(),
	                      want.str().c_str());
}

/* The parent's normalisation in place of the training split's. */
int parent_norm(const Parent &p, Split &s)
{
	int rc;

	if (!p.on)
		return 0;
	if ((rc = parent_tensor(p, "in_mean", s.in_mean, s.in_mean)) < 0 ||
	    (rc = parent_tensor(p, "in_std", s.in_std, s.in_std)) < 0 ||
	    (rc = parent_tensor(p, "out_mean", s.out_mean, s.out_mean)) < 0)
		return rc;
	return parent_tensor(p, "out_std", s.out_std, s.out_std);
}

/* The parent's parameters as the starting point. */
int parent_params(const Parent &p, Model &m)
{
	torch::NoGradGuard no_grad;
	torch::Tensor t;
	int rc;

	for (size_t k = 0; p.on && k < m.params.size(); k++) {
		if ((rc = parent_tensor(p, m.names[k], m.params[k], t)) < 0)
			return rc;
		m.params[k].copy_(t);
	}
	return 0;
}

/* Fills s (its sizes set by split_sizes) from all rows X, Y; the
 * normalisation of the parent when there is one. */
int split_data(const torch::Tensor &X, const torch::Tensor &Y, const hml__train_options *o,
               const Layout &lay, const Encoding &enc, const Parent &parent, Split &s)
{
	int rc;

	int64_t rows = X.size(0);
	std::vector<int64_t> order(s.order);

	if (order.empty()) {
		order.resize(rows);
		for (int64_t i = 0; i < rows; i++)
			order[i] = i;
		std::mt19937_64 split_rng(o->seed);
		shuffle(order, split_rng);
	}
	std::vector<int64_t> test_idx(order.begin(), order.begin() + s.n_test);
	std::vector<int64_t> val_idx(order.begin() + s.n_test, order.begin() + s.n_test + s.n_val);
	std::vector<int64_t> train_idx(order.begin() + s.n_test + s.n_val,
	                               order.begin() + s.n_test + s.n_val + s.n_train);
	s.train_rows = train_idx;
	{
		int64_t bad_x = (~torch::isfinite(X)).sum().item<int64_t>();
		int64_t bad_y = (~torch::isfinite(Y)).sum().item<int64_t>();
		if (bad_x + bad_y > 0)
			return hml__error_set(HML_EINVALID,
				"the data hold %lld NaN/Inf values (%lld in inputs, %lld in outputs); drop those rows first",
				(long long)(bad_x + bad_y), (long long)bad_x, (long long)bad_y);
	}
	/* an MLP's raw rows are [n, in_features]; core_in may be wider (encode()) */
	const std::vector<int64_t> &raw_in = lay.cnn ? lay.core_in : std::vector<int64_t>{ lay.in_features };
	torch::Tensor xtr = batch_view(X.index_select(0, index_tensor(train_idx)), raw_in);
	torch::Tensor ytr = batch_view(Y.index_select(0, index_tensor(train_idx)), lay.core_out);
	s.xva_raw = X.index_select(0, index_tensor(val_idx));
	s.yva = batch_view(Y.index_select(0, index_tensor(val_idx)), lay.core_out);
	s.xte_raw = X.index_select(0, index_tensor(test_idx));
	s.yte = batch_view(Y.index_select(0, index_tensor(test_idx)), lay.core_out);

	s.y_const = ytr.to(torch::kDouble).mean(0);
	if (s.log && (rc = log_targets(Y, ytr)) < 0)
		return rc;
	/* The relative loss weighs the error of y whatever the network predicts. */
	torch::Tensor yjudged = ytr;
	if (s.residual) {
		ytr = ytr - xtr;
		s.va_base = batch_view(s.xva_raw, lay.core_out);
		s.te_base = batch_view(s.xte_raw, lay.core_out);
	}
	statistics(xtr, lay.core_in, lay.core_in.size() == 3, 1.0, s.in_mean, s.in_std);
	statistics(ytr, lay.core_out, lay.core_out.size() == 3, 0.0, s.out_mean, s.out_std);
	for (const hml__categorical &c : enc.cats) {   /* not normalised */
		s.in_mean[c.feature] = 0;
		s.in_std[c.feature] = 1;
	}
	if ((rc = parent_norm(parent, s)) < 0)
		return rc;
	/* Normalised once, with the very operations of the template's forward;
	 * constant outputs train towards 0 (their scale in forward() is 0). */
	s.xn = encode(s, enc, xtr);
	s.yn = (ytr - s.out_mean) /
	       torch::where(s.out_std == 0, torch::ones_like(s.out_std), s.out_std);
	if (loss_index(o->loss) == LOSS_RELATIVE)
		s.w = relative_weights(yjudged, s.out_std, o->mape_floor);
	if ((rc = check_metric(s, o)) < 0)
		return rc;
	s.xva = encode(s, enc, batch_view(s.xva_raw, raw_in));
	s.xte = encode(s, enc, batch_view(s.xte_raw, raw_in));
	return 0;
}

/* The windows of R consecutive validation rows (block_split made them),
 * the samples of the R-step validation error (val_rollout_error_of). */
int val_windows(const hml__dataset *d, const torch::Tensor &X, const torch::Tensor &Y,
                const Layout &lay, Split &s)
{
	std::vector<unsigned char> usable(d->rows, 0);
	std::vector<int64_t> rows;
	int64_t *starts = nullptr, n = 0;
	const int R = s.rollout;
	int rc;

	for (int64_t i = s.n_test; i < s.n_test + s.n_val; i++)
		usable[s.order[i]] = 1;
	if ((rc = hml__rollout_windows(&starts, &n, d->run, d->call, usable.data(), d->rows, R)) < 0)
		return rc;
	std::vector<int64_t> first(starts, starts + n);
	std::free(starts);
	if (n == 0)   /* hml__rollout_split deals whole windows */
		return hml__error_set(HML_EINVALID, "--rollout %d: no validation window", R);
	s.n_val_windows = n;
	for (int k = 0; k < R; k++)
		for (int64_t i : first)
			rows.push_back(i + k);
	std::vector<int64_t> wy = { R, n };   /* [R, W, ...] -> [W, R, ...] */
	wy.insert(wy.end(), lay.core_out.begin(), lay.core_out.end());
	torch::Tensor x0 = batch_view(X.index_select(0, index_tensor(first)), lay.core_in);
	s.rv_x0 = (x0 - s.in_mean) / s.in_std;
	if (s.residual)
		s.rv_base0 = batch_view(X.index_select(0, index_tensor(first)), lay.core_out);
	s.rv_y = Y.index_select(0, index_tensor(rows)).reshape(wy).transpose(0, 1).contiguous();
	return 0;
}

/* Rollout R > 1 (train.h): the windows of R consecutive calls of one run
 * whose rows are all training rows (lib/train/rollout.h), as the samples
 * the epochs draw: each window's first input (normalised, and raw for a
 * residual arch) and its R outputs (raw) and relative-loss weights. */
int rollout_setup(const hml__dataset *d, const torch::Tensor &X, const torch::Tensor &Y,
                  const hml__train_options *o, const Layout &lay, Split &s)
{
	std::vector<unsigned char> usable(d->rows, 0);
	std::vector<int64_t> pos(d->rows, -1), first, rows;
	int64_t *starts = nullptr, n = 0;
	const int R = o->rollout;
	int rc;

	s.rollout = R;
	if (R <= 1)
		return 0;
	if (lay.core_in != lay.core_out)
		return hml__error_set(HML_EINVALID, "--rollout %d needs a model whose output has its "
		                      "input's shape", R);
	for (size_t i = 0; i < s.train_rows.size(); i++) {
		usable[s.train_rows[i]] = 1;
		pos[s.train_rows[i]] = (int64_t)i;
	}
	if ((rc = hml__rollout_windows(&starts, &n, d->run, d->call, usable.data(), d->rows, R)) < 0)
		return rc;
	first.assign(starts, starts + n);
	std::free(starts);
	if (n == 0)
		return hml__error_set(HML_EINVALID, "--rollout %d: no %d consecutive calls of one run "
		                      "are all training rows (%lld of %lld rows); use a smaller rollout "
		                      "or collect more calls", R, R, (long long)s.n_train,
		                      (long long)d->rows);
	s.n_windows = n;
	for (int k = 0; k < R; k++)
		for (int64_t i : first)
			rows.push_back(i + k);
	torch::Tensor r0 = index_tensor(first), all = index_tensor(rows);
	std::vector<int64_t> wy = { R, n };   /* [R, W, ...] -> [W, R, ...] */
	wy.insert(wy.end(), lay.core_out.begin(), lay.core_out.end());
	std::vector<int64_t> p;
	for (int64_t r : rows)
		p.push_back(pos[r]);
	s.out_scale = torch::where(s.out_std == 0, torch::ones_like(s.out_std), s.out_std);
	s.rw_x0 = s.xn.index_select(0, index_tensor(std::vector<int64_t>(p.begin(), p.begin() + n)));
	s.rw_y = Y.index_select(0, all).reshape(wy).transpose(0, 1).contiguous();
	if (s.residual)
		s.rw_base0 = batch_view(X.index_select(0, r0), lay.core_out);
	if (s.w.defined())
		s.rw_w = s.w.index_select(0, index_tensor(p)).reshape(wy).transpose(0, 1).contiguous();
	return val_windows(d, X, Y, lay, s);
}

/* o->device resolved into m.dev; res->device says which. */
int pick_device(const hml__train_options *o, Model &m, hml__train_result *res)
{
	const char *want = o->device ? o->device : "cpu";
	bool cuda = false;

#ifdef HML_WITH_CUDA
	if (std::strcmp(want, "cpu") != 0)
		cuda = torch::cuda::is_available();
	if (!cuda && std::strcmp(want, "cuda") == 0)
		return hml__error_set(HML_EINVALID, "training device cuda: no CUDA device is visible to libtorch");
#else
	if (std::strcmp(want, "cuda") == 0)
		return hml__error_set(HML_EINVALID, "training device cuda: this hml was built without CUDA "
		                      "(configure with -DHML_WITH_CUDA=ON against a libtorch with CUDA)");
#endif
	if (cuda && m.script)
		return hml__error_set(HML_EINVALID, "HML_TRAIN_FORWARD=script trains on the CPU only "
		                      "(training device %s)", want);
	if (cuda) {
		/* float32 steps, as on the CPU (cuDNN's convolutions use TF32 by
		 * default): the epoch kept is chosen by float32's errors. */
		at::globalContext().setAllowTF32CuDNN(false);
		at::globalContext().setAllowTF32CuBLAS(false);
	}
	m.dev = cuda ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
	std::snprintf(res->device, sizeof(res->device), "%s", cuda ? "cuda" : "cpu");
	return 0;
}

/* The tensors the epochs and the eager forward read, on device dev (a copy
 * of s's handles, on the CPU: the same tensors). The raw rows stay on the
 * CPU for the saved model's check. */
Split on_device(const Split &s, torch::Device dev)
{
	Split d = s;

	if (dev.is_cpu())
		return d;
	for (torch::Tensor *t : { &d.xn, &d.yn, &d.xva, &d.xte, &d.yva, &d.yte, &d.in_mean,
	                          &d.in_std, &d.out_mean, &d.out_std, &d.w, &d.va_base, &d.te_base,
	                          &d.rw_x0, &d.rw_base0, &d.rw_y, &d.rw_w, &d.out_scale,
	                          &d.rv_x0, &d.rv_base0, &d.rv_y })
		if (t->defined())
			*t = t->to(dev);
	return d;
}

/* The optimiser sees one parameter: the flat buffer holding them all. */
std::unique_ptr<torch::optim::Optimizer> make_optimizer(Model &m, const hml__train_options *o,
                                                        bool adamw)
{
	const double wd = o->weight_decay >= 0 ? o->weight_decay : adamw ? 1e-2 : 0.0;

	m.flat.mutable_grad() = m.flat_grad;
	if (adamw)
		return std::unique_ptr<torch::optim::Optimizer>(new torch::optim::AdamW(
			std::vector<torch::Tensor>{ m.flat }, torch::optim::AdamWOptions(o->lr).weight_decay(wd)));
	return std::unique_ptr<torch::optim::Optimizer>(new torch::optim::Adam(
		std::vector<torch::Tensor>{ m.flat }, torch::optim::AdamOptions(o->lr).weight_decay(wd)));
}

/* One pass over the shuffled training rows xs, ys in batches; their summed
 * loss added to loss_sum. */
void run_epoch(Model &m, MlpStep *manual, torch::optim::Optimizer &opt, const torch::Tensor &xs,
               const torch::Tensor &ys, const torch::Tensor &ws, const hml__train_options *o,
               torch::Tensor &loss_sum)
{
	int64_t n = xs.size(0);

	for (int64_t s = 0; s < n; s += o->batch) {
		int64_t len = std::min(o->batch, n - s);
		torch::Tensor w = ws.defined() ? ws.narrow(0, s, len) : torch::Tensor();

		if (manual) {
			manual->run(xs.narrow(0, s, len), ys.narrow(0, s, len), w, loss_sum);
		} else {
			m.flat_grad.zero_();
			torch::Tensor loss = loss_of(m.loss, m.forward(xs.narrow(0, s, len), true),
			                             ys.narrow(0, s, len), w);
			loss.backward();
			loss_sum.add_(loss.detach(), (double)len);
		}
		if (o->clip > 0)
			torch::nn::utils::clip_grad_norm_({ m.flat }, o->clip);
		opt.step();
	}
}

/* One pass of rollout training over the windows in the order `perm`: the
 * model applied s.rollout times from each window's first input, its output
 * in the application's units fed back as the next input; the loss is the
 * sum of the steps' losses, each that of the one-step training (the error
 * over out_std), back-propagated through the chain. loss_sum gets the
 * mean step loss times the windows. */
void run_rollout_epoch(Model &m, torch::optim::Optimizer &opt, const Split &s,
                       const torch::Tensor &perm, const hml__train_options *o,
                       torch::Tensor &loss_sum)
{
	int64_t n = perm.size(0);

	for (int64_t b = 0; b < n; b += o->batch) {
		int64_t len = std::min(o->batch, n - b);
		torch::Tensor idx = perm.narrow(0, b, len);
		torch::Tensor in = s.rw_x0.index_select(0, idx), y = s.rw_y.index_select(0, idx);
		torch::Tensor w = s.rw_w.defined() ? s.rw_w.index_select(0, idx) : torch::Tensor();
		torch::Tensor base = s.residual ? s.rw_base0.index_select(0, idx) : torch::Tensor();
		torch::Tensor loss;

		m.flat_grad.zero_();
		for (int k = 0; k < s.rollout; k++) {
			torch::Tensor out = m.forward(in, true), target = y.select(1, k);
			torch::Tensor pred = out * s.out_std + s.out_mean;

			if (s.residual) {
				target = target - base;
				pred = pred + base;
			}
			target = (target - s.out_mean) / s.out_scale;
			torch::Tensor step = loss_of(m.loss, out, target,
			                             w.defined() ? w.select(1, k) : torch::Tensor());
			loss = k == 0 ? step : loss + step;
			base = pred;
			in = (pred - s.in_mean) / s.in_std;
		}
		loss.backward();
		loss_sum.add_(loss.detach(), (double)len / s.rollout);
		if (o->clip > 0)
			torch::nn::utils::clip_grad_norm_({ m.flat }, o->clip);
		opt.step();
	}
}

/* The network's normalised outputs in the application's units, as the
 * template's forward gives them; base: a residual arch's inputs (in the
 * outputs' layout), undefined otherwise. */
torch::Tensor denormalise(const Split &s, const torch::Tensor &pred, const torch::Tensor &base)
{
	torch::Tensor y = pred * s.out_std + s.out_mean;

	if (base.defined())
		y = y + base;
	return s.log ? y.exp() : y;
}

double error_of(const torch::Tensor &pred, const torch::Tensor &t, const hml__train_options *o)
{
	if (o->metric && std::strcmp(o->metric, "mape") == 0)
		return mape_of(pred, t, o->mape_floor);
	return std::sqrt((pred - t).square().mean().item<double>());
}

/* Validation error of the current weights in the options' metric, in the
 * data's units. */
double val_error_of(Model &m, const Split &s, const hml__train_options *o)
{
	return error_of(denormalise(s, predict(m, s.xva), s.va_base), s.yva, o);
}

/* The model applied s.rollout times from each validation window's first
 * input, as run_rollout_epoch does; its R outputs [W, R, *core_out] in the
 * application's units. */
torch::Tensor val_rollout(Model &m, const Split &s)
{
	torch::NoGradGuard no_grad;
	torch::Tensor in = s.rv_x0, base = s.residual ? s.rv_base0 : torch::Tensor();
	std::vector<torch::Tensor> steps;

	for (int k = 0; k < s.rollout; k++) {
		torch::Tensor pred = denormalise(s, predict(m, in), base);

		steps.push_back(pred);
		base = s.residual ? pred : base;
		in = (pred - s.in_mean) / s.in_std;
	}
	return torch::stack(steps, 1);
}

/* The R-step validation error in the options' metric, over every step of
 * every window: what the best epoch and early stopping go by when R > 1. */
double val_rollout_error_of(Model &m, const Split &s, const hml__train_options *o)
{
	return error_of(val_rollout(m, s), s.rv_y, o);
}

/* The passes over the training rows one epoch makes: enough for at least
 * HML__TRAIN_MIN_EPOCH_STEPS optimiser steps (train.h) over the whole
 * training split, so that a search's lower fidelity (row_fraction) makes
 * that share of the full fidelity's steps, as it did. */
int epoch_passes(int64_t n_train, int64_t batch)
{
	int64_t steps = (n_train + batch - 1) / batch;

	return (int)std::max<int64_t>(1, (HML__TRAIN_MIN_EPOCH_STEPS + steps - 1) / steps);
}

/* The epochs: learning-rate schedule, the best epoch's weights kept (and
 * left in m.flat at the end), early stop, time limit, progress callback. */
int fit(Model &m, const Split &s, const hml__train_options *o, bool adamw, hml__train_result *res)
{
	const char *sched = o->schedule ? o->schedule : "plateau";
	const bool cosine = std::strcmp(sched, "cosine") == 0;
	std::unique_ptr<torch::optim::Optimizer> opt = make_optimizer(m, o, adamw);
	torch::Tensor best = m.flat.clone();
	double best_val = INFINITY, lr = o->lr, t0 = hml__now(), step_time = 0;
	const int plateau_wait = o->patience > 0 ? std::max(1, o->patience / 2) : 5;
	const bool unrolled = s.rollout > 1;
	const int64_t samples = unrolled ? s.n_windows : s.n_train;   /* one epoch pass's */
	int since_best = 0, since_lr = 0, epoch;
	int passes = epoch_passes(unrolled ? s.n_windows : s.n_train_all, o->batch);
	std::mt19937_64 batch_rng(o->seed ^ HML__RNG_GOLDEN);
	std::vector<int64_t> perm(samples);
	torch::Tensor xs = torch::empty_like(s.xn), ys = torch::empty_like(s.yn); /* shuffled rows */
	torch::Tensor ws = s.w.defined() ? torch::empty_like(s.w) : torch::Tensor();
	torch::Tensor loss_sum = torch::zeros({}, m.flat.options());
	std::unique_ptr<MlpStep> manual;

	if (!m.script && !m.lay.cnn && !unrolled)
		manual.reset(new MlpStep(m, std::min(o->batch, s.n_train)));
	for (int64_t i = 0; i < samples; i++)
		perm[i] = i;
	m.set_training(true);
	for (epoch = 1; epoch <= o->epochs; epoch++) {
		double ts = hml__now(), train_loss, val_err;

		if (cosine) {
			lr = o->lr * 0.5 * (1.0 + std::cos(M_PI * (epoch - 1) / o->epochs));
			set_lr(*opt, adamw, lr);
		}
		loss_sum.zero_();
		for (int pass = 0; pass < passes; pass++) {
			shuffle(perm, batch_rng);
			torch::Tensor p = torch::from_blob(perm.data(), { samples }, torch::kLong).to(m.dev);
			if (unrolled) {
				run_rollout_epoch(m, *opt, s, p, o, loss_sum);
				continue;
			}
			at::index_select_out(xs, s.xn, 0, p);
			at::index_select_out(ys, s.yn, 0, p);
			if (ws.defined())
				at::index_select_out(ws, s.w, 0, p);
			run_epoch(m, manual.get(), *opt, xs, ys, ws, o, loss_sum);
		}
		step_time += hml__now() - ts;
		train_loss = loss_sum.item<double>() / ((double)samples * passes);
		val_err = unrolled ? val_rollout_error_of(m, s, o) : val_error_of(m, s, o);
		res->epochs_run = epoch;
		if (val_err < best_val) {
			best_val = val_err;
			res->best_epoch = epoch;
			best.copy_(m.flat);
			since_best = 0;
			since_lr = 0;
		} else {
			since_best++;
			since_lr++;
		}
		if (std::strcmp(sched, "plateau") == 0 && since_lr >= plateau_wait && lr > 1e-6) {
			lr = std::max(lr * 0.5, 1e-6);
			set_lr(*opt, adamw, lr);
			since_lr = 0;
		}
		if (o->progress && o->progress(o->payload, epoch, o->epochs, train_loss, val_err) != 0) {
			res->interrupted = 1;
			break;
		}
		/* Under cosine, only once the rate is below a tenth of its start
		 * (the cycle's last fifth): before, a flat validation error is the
		 * high rate's noise, not convergence (binomial, 400 epochs: patience
		 * 10 stopped at epoch 28, test RMSE 0.045; the whole cycle, 0.012). */
		if (o->patience > 0 && since_best >= o->patience && (!cosine || lr < 0.1 * o->lr)) {
			res->stopped_early = 1;
			break;
		}
		if (o->max_seconds > 0 && hml__now() - t0 >= o->max_seconds) {
			res->out_of_time = epoch < o->epochs;
			break;
		}
	}
	res->train_seconds = hml__now() - t0;
	res->train_step_seconds = step_time;
	res->samples_per_second = step_time > 0 ?
		(double)samples * passes * res->epochs_run / step_time : 0;
	res->final_lr = lr;
	if (res->best_epoch == 0)
		return hml__error_set(HML_EINVALID,
			"training diverged: the validation error was not finite in any of %d epochs (try a smaller learning rate)",
			res->epochs_run);
	m.flat.copy_(best);
	if (unrolled) {
		torch::Tensor steps = val_rollout(m, s);

		res->val_rollout_windows = s.n_val_windows;
		res->val_rollout_rmse = std::sqrt((steps - s.rv_y).square().mean().item<double>());
		res->val_rollout_mape = mape_of(steps, s.rv_y, o->mape_floor);
	}
	return 0;
}

/* After training on a GPU, the parameters brought to the CPU (leaves of
 * one flat buffer there, as make_params lays them out), so that the eager
 * forward the saved file is checked against, and the card's errors, are
 * the CPU's arithmetic, which compiled models and the card's figures
 * describe. A GPU's forward can differ by more than that check allows
 * (with cuDNN's default TF32 convolutions, miniWeather's CNN at 200 x 100
 * cells differed by 0.029 on an H200). */
void params_to_cpu(Model &m)
{
	if (m.dev.is_cpu())
		return;
	torch::NoGradGuard no_grad;
	m.flat = m.flat.to(torch::kCPU);
	for (size_t p = 0; p < m.params.size(); p++)
		m.params[p] = m.flat.narrow(0, m.offsets[p], m.params[p].numel())
		                  .view(m.params[p].sizes()).detach().requires_grad_(true);
	m.dev = torch::Device(torch::kCPU);
}

/* The module with the best weights (as contiguous tensors of their own)
 * serialised into blob and written to fd; eager_val and eager_test: the
 * eager forward's outputs on the validation and test rows. */
int save_model(Model &m, const Split &s, const char *out_path, int fd, std::string &blob,
               torch::Tensor &eager_val, torch::Tensor &eager_test)
{
	eager_val = denormalise(s, predict(m, s.xva), s.va_base).to(torch::kCPU);
	eager_test = denormalise(s, predict(m, s.xte), s.te_base).to(torch::kCPU);
	for (size_t p = 0; p < m.params.size(); p++)
		m.module.register_parameter(m.names[p],
			m.params[p].detach().to(torch::kCPU).clone().requires_grad_(true), false);
	m.module.eval();
	std::ostringstream bytes;
	m.module.save(bytes);
	blob = bytes.str();
	return write_all(out_path, fd, blob);
}

/* The saved file (blob) loaded as the runtime will run it, into saved: its
 * forward must agree with the eager one; its errors go into res. */
int check_saved(const std::string &blob, const Model &m, const Split &s,
                const torch::Tensor &eager_val, const torch::Tensor &eager_test,
                const hml__train_options *o, torch::jit::Module &saved, hml__train_result *res)
{
	std::istringstream in(blob);
	saved = torch::jit::load(in, torch::kCPU);
	saved.eval();
	int64_t chunk = eval_chunk(m);
	torch::Tensor val = batch_view(predict_saved(saved, batch_view(s.xva_raw, m.lay.in_row), chunk),
	                              m.lay.core_out);
	torch::Tensor test = batch_view(predict_saved(saved, batch_view(s.xte_raw, m.lay.in_row), chunk),
	                               m.lay.core_out);
	torch::NoGradGuard no_grad;
	double scale = std::max({ 1.0, s.yva.abs().max().item<double>(), s.yte.abs().max().item<double>() });
	double diff = std::max((val - eager_val).abs().max().item<double>(),
	                       (test - eager_test).abs().max().item<double>());
	torch::Tensor err = test - s.yte;

	res->forward_max_diff = diff;
	if (!(diff <= 1e-5 * scale))
		return hml__error_set(HML_EMODEL,
			"the saved model's forward differs from the training forward by %g", diff);
	res->val_rmse = std::sqrt((val - s.yva).square().mean().item<double>());
	res->test_rmse = std::sqrt(err.square().mean().item<double>());
	res->test_mae = err.abs().mean().item<double>();
	res->test_max_abs = err.abs().max().item<double>();
	if (s.y_const.defined() && s.y_const.sizes() == s.yte.sizes().slice(1))
		res->test_rmse_const = std::sqrt((s.yte.to(torch::kDouble) - s.y_const).square().mean().item<double>());
	res->val_mape = mape_of(val, s.yva, o->mape_floor);
	res->test_mape = mape_of(test, s.yte, o->mape_floor);
	return 0;
}

void measure_latency(torch::jit::Module &saved, const torch::Tensor &X,
                     const std::vector<int64_t> &in_row, int64_t rows, int64_t ib,
                     hml__train_result *res);

/* Latency: the mean of at least 20 calls at the application's batch after
 * 3 warm-up calls, inputs cycled from the data. A failure here (a batch
 * too large for memory) costs the figure, not the model. */
void record_latency(torch::jit::Module &saved, const torch::Tensor &X, const Model &m,
                    const hml__train_options *o, hml__train_result *res)
{
	int64_t ib = o->infer_batch > 0 ? o->infer_batch : o->batch;
	const int training = at::get_num_threads();

	res->latency_batch = ib;
	/* With the application's threads (libtorch's count is process-wide). */
	if (o->latency_threads > 0)
		at::set_num_threads(hml__train_latency_threads(o));
	try {
		measure_latency(saved, X, m.lay.in_row, X.size(0), ib, res);
	} catch (const std::bad_alloc &) {
		res->latency_s_per_sample = NAN;
		std::snprintf(res->latency_error, sizeof(res->latency_error),
		              "out of memory at batch %lld", (long long)ib);
	} catch (const std::exception &e) {
		const char *w = what_of(e);

		res->latency_s_per_sample = NAN;
		std::snprintf(res->latency_error, sizeof(res->latency_error), "at batch %lld: %.*s",
		              (long long)ib, std::min(line_len(w), 200), w);
	}
	if (o->latency_threads > 0)
		at::set_num_threads(training);
}

int train(const hml__dataset *d, const hml__train_options *o, const char *out_path,
          hml__train_result *res, int fd)
{
	Model m;
	Split s;
	int rc;
	const bool adamw = o->optimizer && std::strcmp(o->optimizer, "adamw") == 0;
	const char *fwd_env = std::getenv("HML_TRAIN_FORWARD");

	if ((rc = check_options(o, m.arch)) < 0 || (rc = hml__rollout_check(d, o->rollout)) < 0)
		return rc;
	std::snprintf(res->arch, sizeof(res->arch), "%s", m.arch.canonical.c_str());
	if ((rc = make_encoding(o, m.enc)) < 0 || (rc = make_layout(d, m.arch, m.enc, m.lay)) < 0)
		return rc;
	if (fwd_env && std::strcmp(fwd_env, "script") == 0)
		m.script = true;
	else if (fwd_env && *fwd_env && std::strcmp(fwd_env, "eager") != 0)
		return hml__error_set(HML_EINVALID, "HML_TRAIN_FORWARD is '%s'; expected eager or script", fwd_env);
	if ((rc = pick_device(o, m, res)) < 0)
		return rc;
	if (d->rows < 1 || !d->x || !d->y)
		return hml__error_set(HML_EINVALID, "the data set has no rows");
	m.loss = loss_index(o->loss);
	s.log = m.loss == LOSS_LOG;
	s.residual = m.arch.c.residual != 0;
	m.lay.c.log_output = s.log;
	s.rollout = o->rollout;
	if ((rc = split_sizes(d->rows, o, s, res)) < 0 || (rc = block_split(d, o, s, res)) < 0)
		return rc;
	if (o->threads > 0)
		at::set_num_threads(o->threads);

	torch::Tensor X = torch::from_blob(const_cast<float *>(d->x), { d->rows, d->in_features }, torch::kFloat);
	torch::Tensor Y = torch::from_blob(const_cast<float *>(d->y), { d->rows, d->out_features }, torch::kFloat);
	Parent parent;
	if ((rc = parent_load(o->init_from, parent)) < 0 ||
	    (rc = split_data(X, Y, o, m.lay, m.enc, parent, s)) < 0 ||
	    (rc = rollout_setup(d, X, Y, o, m.lay, s)) < 0)
		return rc;
	torch::manual_seed(o->seed);
	make_params(m);
	if ((rc = parent_params(parent, m)) < 0)
		return rc;
	if ((rc = build_module(m, s.in_mean, s.in_std, s.out_mean, s.out_std)) < 0)
		return rc;
	res->params = m.count;
	Split sd = on_device(s, m.dev);
	if ((rc = fit(m, sd, o, adamw, res)) < 0)
		return rc;

	std::string blob;
	torch::Tensor eager_val, eager_test;
	params_to_cpu(m);
	if ((rc = save_model(m, s, out_path, fd, blob, eager_val, eager_test)) < 0)
		return rc;
	ExecutorOptimize no_opt(false);   /* measure the file as the runtime will run it */
	torch::jit::Module saved;
	if ((rc = check_saved(blob, m, s, eager_val, eager_test, o, saved, res)) < 0)
		return rc;
	record_latency(saved, X, m, o, res);
	return 0;
}

/* The mean forward time per row of `saved` at batch ib (see above). */
void measure_latency(torch::jit::Module &saved, const torch::Tensor &X,
                     const std::vector<int64_t> &in_row, int64_t rows, int64_t ib,
                     hml__train_result *res)
{
	{
		torch::NoGradGuard no_grad;
		std::vector<int64_t> rows_idx(ib);
		int calls = 0;
		double start, elapsed;

		for (int64_t i = 0; i < ib; i++)
			rows_idx[i] = i % rows;
		torch::Tensor x = batch_view(X.index_select(0, index_tensor(rows_idx)), in_row);
		std::vector<c10::IValue> args = { x };
		for (int w = 0; w < 3; w++)
			saved.forward(args);
		start = hml__now();
		do {
			saved.forward(args);
			calls++;
			elapsed = hml__now() - start;
		} while (calls < 20 || (elapsed < 0.2 && calls < 10000));
		res->latency_s_per_sample = elapsed / calls / (double)ib;
	}
}

} // namespace

extern "C" {

int hml__train(const hml__dataset *d, const hml__train_options *o, const char *out_path,
               hml__train_result *res)
{
	hml__train_options defaults = HML__TRAIN_OPTIONS_INIT;
	int fd = -1, rc;

	if (!res || !d || !out_path)
		return hml__error_set(HML_EINVALID, "train: no %s given", !d ? "data set" : !out_path ? "output path" : "result");
	std::memset(res, 0, sizeof(*res));
	if (!o)
		o = &defaults;
	/* Fail on an unwritable path before hours of training, not after. */
	if ((fd = hml__beneath_open(o->out_root, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0666)) < 0)
		return fd != HML_EIO ? fd : hml__error_set(HML_EIO, "cannot write model '%s': %s",
		                                           out_path, std::strerror(errno));
	try {
		rc = train(d, o, out_path, res, fd);
	} catch (const std::bad_alloc &) {
		rc = hml__error_oom();
	} catch (const std::exception &e) {
		const char *w = what_of(e);
		rc = hml__error_set(HML_EMODEL, "training failed: %.*s", line_len(w), w);
	} catch (...) {
		rc = hml__error_set(HML_EMODEL, "training failed: unknown C++ exception");
	}
	if (close(fd) < 0 && rc == 0)
		rc = hml__error_set(HML_EIO, "cannot write model '%s': %s", out_path, std::strerror(errno));
	if (rc < 0)
		unlink(out_path);   /* what was opened above: a regular file, no link */
	return rc;
}

} // extern "C"
