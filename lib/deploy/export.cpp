/*
 * lib/deploy/export.cpp - an hml-trained TorchScript model read into the
 * description of lib/deploy/codegen.h (see export.h). Every libtorch exception is
 * caught here; none crosses into C.
 */
#include <torch/script.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "core/error.h"
#include "deploy/export.h"

namespace {

struct Unsupported {
	std::string why;
};

const char *what_of(const std::exception &e)
{
	if (auto c = dynamic_cast<const c10::Error *>(&e))
		return c->what_without_backtrace();
	return e.what();
}

std::vector<std::string> split(const std::string &s, char sep)
{
	std::vector<std::string> out;
	std::stringstream in(s);

	for (std::string f; std::getline(in, f, sep);)
		out.push_back(f);
	return out;
}

std::vector<int64_t> int_attr(const torch::jit::Module &mod, const char *name)
{
	if (!mod.hasattr(name))
		throw Unsupported{ std::string("it has no ") + name + " attribute" };
	c10::IValue v = mod.attr(name);
	if (!v.isIntList())
		throw Unsupported{ std::string("its ") + name + " is not a list of integers" };
	return v.toIntVector();
}

torch::Tensor get(const std::map<std::string, torch::Tensor> &m, const std::string &name)
{
	auto it = m.find(name);

	if (it == m.end())
		throw Unsupported{ "it has no '" + name + "' tensor" };
	return it->second.detach().to(torch::kFloat).contiguous();
}

void copy_to(float *dst, const torch::Tensor &t, int64_t n, const std::string &name)
{
	if (t.numel() != n)
		throw Unsupported{ "'" + name + "' has " + std::to_string(t.numel()) +
		                   " values, expected " + std::to_string(n) };
	std::memcpy(dst, t.data_ptr<float>(), (size_t)n * sizeof(float));
}

/* Normalisation buffers, row shapes and arch into `out`. */
void read_common(const torch::jit::Module &mod, std::map<std::string, torch::Tensor> &bufs,
                 int64_t nin, int64_t nout, const std::string &arch, hml__cg_model *out)
{
	copy_to(out->in_mean, get(bufs, "in_mean"), nin, "in_mean");
	copy_to(out->in_std, get(bufs, "in_std"), nin, "in_std");
	copy_to(out->out_mean, get(bufs, "out_mean"), nout, "out_mean");
	copy_to(out->out_std, get(bufs, "out_std"), nout, "out_std");
	std::vector<int64_t> in = int_attr(mod, "hml_input_shape"), o = int_attr(mod, "hml_output_shape");
	if (in.empty() || in.size() > 8 || o.empty() || o.size() > 8)
		throw Unsupported{ "its hml_input_shape or hml_output_shape has a bad rank" };
	out->in_ndim = (int)in.size();
	out->out_ndim = (int)o.size();
	std::copy(in.begin(), in.end(), out->in_shape);
	std::copy(o.begin(), o.end(), out->out_shape);
	std::snprintf(out->arch, sizeof(out->arch), "%s", arch.c_str());
}

/* models/cnnvec.ts: conv layers w0.., pooled; w_head (optional), w_out. */
void read_vec_module(const torch::jit::Module &mod, const std::vector<std::string> &f,
                     const std::string &arch, hml__cg_model *out)
{
	std::map<std::string, torch::Tensor> params, bufs;
	std::vector<std::string> names;
	std::vector<int64_t> sizes;
	int kernel = 0, nconv = 0, pool = 0, act = hml__cg_act_parse(f[2].c_str());
	int64_t flat;

	if (act < 0)
		throw Unsupported{ "activation '" + f[2] + "' has no C form" };
	int spatial = std::find(f.begin(), f.end(), "spatial") != f.end();

	for (const auto &x : f)
		if (x.compare(0, 5, "pool=") == 0)
			pool = std::atoi(x.c_str() + 5);
	if (pool < 1)
		throw Unsupported{ "its architecture '" + arch + "' has no pool size" };
	for (const auto &p : mod.named_parameters(false))
		params[p.name] = p.value;
	for (const auto &b : mod.named_buffers(false))
		bufs[b.name] = b.value;
	while (params.count("w" + std::to_string(nconv)))
		names.push_back(std::to_string(nconv++));
	if (params.count("w_head"))
		names.push_back("_head");
	names.push_back("_out");
	if (nconv < 1 || params.size() != 2 * names.size())
		throw Unsupported{ "its parameters are not w0, b0, ..., [w_head, b_head,] w_out, b_out" };
	for (size_t l = 0; l < names.size(); l++) {
		torch::Tensor w = get(params, "w" + names[l]);
		bool conv = (int)l < nconv;

		if (w.dim() != (conv ? 4 : 2) || (conv && (w.size(2) != w.size(3) || w.size(2) % 2 == 0 ||
		                                           (kernel && w.size(2) != kernel))))
			throw Unsupported{ "weight 'w" + names[l] + "' does not have the family's layout" };
		if (conv)
			kernel = (int)w.size(2);
		if (l == 0)
			sizes.push_back(w.size(1));
		else if ((int)l != nconv && w.size(1) != sizes.back())
			throw Unsupported{ "weight 'w" + names[l] + "' does not follow the layer before it" };
		sizes.push_back(w.size(0));
	}
	flat = get(params, "w" + names[nconv]).size(1);
	if (hml__cg_model_init_vec(out, (int)names.size(), nconv, sizes.data(), kernel, pool, flat) < 0)
		throw Unsupported{ hml_error_last()->message };
	for (size_t l = 0; l < names.size(); l++) {
		hml__cg_layer *y = &out->layers[l];
		int64_t kk = (int)l < nconv ? (int64_t)kernel * kernel : 1;

		copy_to(y->weight, get(params, "w" + names[l]), y->in * y->out * kk, "w" + names[l]);
		copy_to(y->bias, get(params, "b" + names[l]), y->out, "b" + names[l]);
		y->act = l + 1 < names.size() && !(spatial && (int)l == nconv - 1) ? (hml__cg_act)act
		                                                                   : HML__ACT_IDENTITY;
	}
	read_common(mod, bufs, sizes.front(), sizes.back(), arch, out);
	out->spatial = spatial;
}

/* An MLP's categorical features (lib/train/categorical.h): the declaration
 * into `out`, and bufs' in_mean / in_std replaced by the encoded row's. */
void read_categorical(std::map<std::string, torch::Tensor> &bufs, hml__cg_model *out)
{
	if (!bufs.count("cat_feature") || !bufs.count("cat_classes") || !bufs.count("cont_feature"))
		throw Unsupported{ "its categorical features lack cat_feature, cat_classes or cont_feature" };
	torch::Tensor f = bufs["cat_feature"].to(torch::kLong).contiguous();
	torch::Tensor k = bufs["cat_classes"].round().to(torch::kLong).contiguous();
	torch::Tensor cont = bufs["cont_feature"].to(torch::kLong);
	int64_t onehot = k.sum().item<int64_t>();

	if (f.dim() != 1 || k.sizes() != f.sizes() || f.numel() < 1 || f.numel() > (1 << 20))
		throw Unsupported{ "its cat_feature and cat_classes do not match" };
	if (hml__cg_model_set_categorical(out, f.data_ptr<int64_t>(), k.data_ptr<int64_t>(),
	                                  (int)f.numel()) < 0)
		throw Unsupported{ hml_error_last()->message };
	bufs["in_mean"] = torch::cat({ get(bufs, "in_mean").index_select(0, cont),
	                               torch::zeros({ onehot }) });
	bufs["in_std"] = torch::cat({ get(bufs, "in_std").index_select(0, cont),
	                              torch::ones({ onehot }) });
}

/* The last component of a module's type name: "Linear", "ReLU", ... */
std::string type_of(const torch::jit::Module &m)
{
	std::string q = m.type()->name() ? m.type()->name()->qualifiedName() : "";
	size_t dot = q.rfind('.');

	return dot == std::string::npos ? q : q.substr(dot + 1);
}

/* The activation a torch.nn activation module computes, or -1. */
int act_of_module(const torch::jit::Module &m)
{
	std::string t = type_of(m);

	if (t == "ReLU")
		return HML__ACT_RELU;
	if (t == "Tanh")
		return HML__ACT_TANH;
	if (t == "SiLU")
		return HML__ACT_SILU;
	if (t == "Sigmoid")
		return HML__ACT_SIGMOID;
	if (t == "GELU") {
		if (m.hasattr("approximate") && m.attr("approximate").isString() &&
		    m.attr("approximate").toStringRef() != "none")
			throw Unsupported{ "its GELU uses the tanh approximation, which has no C form in hml" };
		return HML__ACT_GELU;
	}
	return -1;
}

/* A plain torch.nn.Sequential of Linear layers and activations, as
 * torch.jit.script exports it from Python: an MLP without normalisation.
 * Dropout and Identity modules compute nothing at inference. */
void read_sequential(const torch::jit::Module &mod, hml__cg_model *out)
{
	std::vector<torch::Tensor> w, b;
	std::vector<int> acts;
	std::vector<int64_t> sizes;
	std::string arch = "sequential:", widths, names;

	for (const auto &c : mod.named_children()) {
		std::string t = type_of(c.value);
		int a;

		if (t == "Dropout" || t == "Identity")
			continue;
		if (t == "Linear") {
			std::map<std::string, torch::Tensor> p;

			for (const auto &x : c.value.named_parameters(false))
				p[x.name] = x.value;
			torch::Tensor wt = get(p, "weight");
			if (wt.dim() != 2 || (!w.empty() && wt.size(1) != w.back().size(0)))
				throw Unsupported{ "its Linear layer '" + c.name +
				                   "' does not follow the layer before it" };
			if (!w.empty() && acts.size() < w.size())
				acts.push_back(HML__ACT_IDENTITY);
			w.push_back(wt);
			b.push_back(p.count("bias") ? get(p, "bias") : torch::zeros({ wt.size(0) }));
			continue;
		}
		if ((a = act_of_module(c.value)) < 0)
			throw Unsupported{ "its module '" + c.name + "' is a " + t + "; hml compiles "
			                   "Linear layers and ReLU, Tanh, GELU, SiLU, Sigmoid" };
		if (w.empty() || acts.size() == w.size())
			throw Unsupported{ "its activation '" + c.name + "' does not follow a Linear layer" };
		acts.push_back(a);
	}
	if (w.empty())
		throw Unsupported{ "it has no Linear layer" };
	if (acts.size() == w.size())
		throw Unsupported{ "it ends in an activation; hml compiles a Sequential that ends "
		                   "in a Linear layer" };
	sizes.push_back(w[0].size(1));
	for (size_t l = 0; l < w.size(); l++) {
		sizes.push_back(w[l].size(0));
		if (l + 1 < w.size())
			widths += (widths.empty() ? "" : "x") + std::to_string(w[l].size(0));
	}
	if (hml__cg_model_init(out, HML__CG_MLP, (int)w.size(), sizes.data(), 0) < 0)
		throw Unsupported{ hml_error_last()->message };
	for (size_t l = 0; l < w.size(); l++) {
		hml__cg_layer *y = &out->layers[l];

		copy_to(y->weight, w[l], y->in * y->out, "weight");
		copy_to(y->bias, b[l], y->out, "bias");
		y->act = l < acts.size() ? (hml__cg_act)acts[l] : HML__ACT_IDENTITY;
		if (l < acts.size() && names.find(hml__cg_act_name(y->act)) == std::string::npos)
			names += (names.empty() ? "" : "+") + std::string(hml__cg_act_name(y->act));
	}
	for (int64_t i = 0; i < sizes.front(); i++)
		out->in_mean[i] = 0, out->in_std[i] = 1;
	for (int64_t i = 0; i < sizes.back(); i++)
		out->out_mean[i] = 0, out->out_std[i] = 1;
	out->in_ndim = out->out_ndim = 1;
	out->in_shape[0] = sizes.front();
	out->out_shape[0] = sizes.back();
	arch += (widths.empty() ? "0" : widths) + ":" + (names.empty() ? "identity" : names);
	std::snprintf(out->arch, sizeof(out->arch), "%s", arch.c_str());
}

/* The module's tensors into `out`; throws Unsupported. */
void read_module(const torch::jit::Module &mod, hml__cg_model *out)
{
	std::map<std::string, torch::Tensor> params, bufs;
	std::vector<int64_t> sizes;
	int kernel = 0, nhidden = 0;

	if (!mod.hasattr("hml_arch") || !mod.attr("hml_arch").isString()) {
		if (type_of(mod) == "Sequential")
			return read_sequential(mod, out);
		throw Unsupported{ "it is neither an hml model (no hml_arch attribute) nor a "
		                   "torch.nn.Sequential of Linear layers and activations" };
	}
	if (mod.hasattr("hml_output_exp"))
		throw Unsupported{ "it returns exp of its network (trained with loss log), which the "
		                   "C code generator does not compile" };
	std::string arch = mod.attr("hml_arch").toStringRef();
	std::vector<std::string> f = split(arch, ':');
	if (f.size() >= 3 && f[0] == "cnnvec")
		return read_vec_module(mod, f, arch, out);
	if (f.size() < 3 || (f[0] != "mlp" && f[0] != "cnn"))
		throw Unsupported{ "its architecture '" + arch + "' is not of the mlp, cnn or cnnvec family" };
	int act = hml__cg_act_parse(f[2].c_str());
	if (act < 0)
		throw Unsupported{ "activation '" + f[2] + "' has no C form" };
	bool cnn = f[0] == "cnn";
	for (const auto &p : mod.named_parameters(false))
		params[p.name] = p.value;
	for (const auto &b : mod.named_buffers(false))
		bufs[b.name] = b.value;
	while (params.count("w" + std::to_string(nhidden)))
		nhidden++;
	if (params.size() != (size_t)(2 * nhidden + 2))
		throw Unsupported{ "its parameters are not w0, b0, ..., w_out, b_out" };
	for (int l = 0; l <= nhidden; l++) {
		std::string s = l < nhidden ? std::to_string(l) : "_out";
		torch::Tensor w = get(params, "w" + s);

		if (w.dim() != (cnn ? 4 : 2) || (cnn && (w.size(2) != w.size(3) || w.size(2) % 2 == 0)) ||
		    (cnn && kernel && w.size(2) != kernel))
			throw Unsupported{ "weight 'w" + s + "' does not have the family's layout" };
		if (cnn)
			kernel = (int)w.size(2);
		if (l == 0)
			sizes.push_back(w.size(1));
		else if (w.size(1) != sizes.back())
			throw Unsupported{ "weight 'w" + s + "' does not follow the layer before it" };
		sizes.push_back(w.size(0));
	}
	if (hml__cg_model_init(out, cnn ? HML__CG_CNN : HML__CG_MLP, nhidden + 1, sizes.data(),
	                       kernel) < 0)
		throw Unsupported{ hml_error_last()->message };
	if (bufs.count("cat_feature"))
		read_categorical(bufs, out);
	for (int l = 0; l <= nhidden; l++) {
		std::string s = l < nhidden ? std::to_string(l) : "_out";
		hml__cg_layer *y = &out->layers[l];
		int64_t kk = cnn ? (int64_t)kernel * kernel : 1;

		copy_to(y->weight, get(params, "w" + s), y->in * y->out * kk, "w" + s);
		copy_to(y->bias, get(params, "b" + s), y->out, "b" + s);
		y->act = l < nhidden ? (hml__cg_act)act : HML__ACT_IDENTITY;
	}
	read_common(mod, bufs, sizes.front(), sizes.back(), arch, out);
	/* models/cnn.ts adds the input back (lib/train/arch.h's grammar) */
	out->residual = cnn && std::find(f.begin(), f.end(), "residual") != f.end();
}

torch::Tensor t_of(float *p, std::vector<int64_t> shape)
{
	return torch::from_blob(p, shape, torch::kFloat);
}

torch::Tensor activate(const torch::Tensor &x, hml__cg_act a)
{
	switch (a) {
	case HML__ACT_RELU: return torch::relu(x);
	case HML__ACT_TANH: return torch::tanh(x);
	case HML__ACT_GELU: return torch::gelu(x);
	case HML__ACT_SILU: return torch::silu(x);
	case HML__ACT_SIGMOID: return torch::sigmoid(x);
	default: return x;
	}
}

/* A cnnvec description evaluated by libtorch (models/cnnvec.ts). */
torch::Tensor describe_vec_forward(const hml__cg_model *m, const torch::Tensor &x)
{
	int64_t n = x.size(0), cin = m->layers[0].in, p = m->pool;
	torch::Tensor h = x.reshape({ n, cin, x.size(-2), x.size(-1) });

	h = (h - t_of(m->in_mean, { cin, 1, 1 })) / t_of(m->in_std, { cin, 1, 1 });
	for (int l = 0; l < m->nlayers; l++) {
		const hml__cg_layer *y = &m->layers[l];

		if (l == m->nconv)
			h = h.reshape({ n, -1 });
		if (l < m->nconv)
			h = torch::conv2d(h, t_of(y->weight, { y->out, y->in, y->kernel, y->kernel }),
			                  t_of(y->bias, { y->out }), 1, y->kernel / 2);
		else
			h = torch::linear(h, t_of(y->weight, { y->out, y->in }), t_of(y->bias, { y->out }));
		h = activate(h, y->act);
		if (m->spatial && l == m->nconv - 1) {
			int64_t hh = h.size(2), ww = h.size(3);
			torch::Tensor pr = torch::softmax(h.reshape({ n, y->out, hh * ww }), 2)
			                   .reshape({ n, y->out, hh, ww });
			torch::Tensor gx = (torch::arange(ww, torch::kFloat) * 2.0 + 1.0) / (double)ww - 1.0;
			torch::Tensor gy = (torch::arange(hh, torch::kFloat) * 2.0 + 1.0) / (double)hh - 1.0;

			h = torch::stack({ (pr.sum(2) * gx).sum(2), (pr.sum(3) * gy).sum(2) }, 2);
		} else if (l < m->nconv && p > 1) {
			int64_t hh = h.size(2) / p, ww = h.size(3) / p;
			const int64_t dims[] = { 3, 5 };

			h = h.slice(2, 0, hh * p).slice(3, 0, ww * p)
			     .reshape({ n, y->out, hh, p, ww, p }).mean(at::IntArrayRef(dims));
		}
	}
	int64_t cout = m->layers[m->nlayers - 1].out;
	h = h * t_of(m->out_std, { cout }) + t_of(m->out_mean, { cout });
	std::vector<int64_t> shape = { n };
	shape.insert(shape.end(), m->out_shape, m->out_shape + m->out_ndim);
	return h.reshape(shape);
}

/* An MLP's rows r [n, features] as its first layer reads them before the
 * normalisation (cg_model.h): the continuous features, then a one-hot
 * block per categorical feature. */
torch::Tensor describe_encode(const hml__cg_model *m, const torch::Tensor &r)
{
	std::vector<torch::Tensor> parts;
	std::vector<int64_t> cont;
	int c = 0;

	if (m->ncat == 0)
		return r;
	for (int64_t f = 0; f < r.size(1); f++) {
		if (c < m->ncat && m->cat_feature[c] == f)
			c++;
		else
			cont.push_back(f);
	}
	parts.push_back(r.index_select(1, torch::tensor(cont, torch::kLong)));
	for (c = 0; c < m->ncat; c++) {
		torch::Tensor v = r.select(1, m->cat_feature[c]).round();
		torch::Tensor hot = torch::zeros({ r.size(0), m->cat_classes[c] });

		for (int64_t i = 0; i < r.size(0); i++) {
			float vi = v[i].item<float>();

			if (vi >= 0 && vi < (float)m->cat_classes[c])
				hot[i][(int64_t)vi] = 1.0f;
		}
		parts.push_back(hot);
	}
	return torch::cat(parts, 1);
}

/* Rows on the data's scale for verify(): each continuous feature its mean
 * + std * N(0, 1), each categorical one an integer or half from -1 to K
 * (out-of-range classes and ties of the rounding included). */
torch::Tensor verify_rows(const hml__cg_model *m, const std::vector<int64_t> &shape)
{
	int64_t cin = m->layers[0].in, nin = hml__cg_model_in_size(m);
	torch::Tensor x = torch::randn(shape);

	if (m->ncat == 0) {
		torch::Tensor xs = x.reshape({ shape[0], cin, -1 }) * t_of(m->in_std, { cin, 1 }) +
		                   t_of(m->in_mean, { cin, 1 });
		return xs.reshape(shape).contiguous();
	}
	torch::Tensor r = x.reshape({ shape[0], nin }).clone();
	int c = 0, j = 0;

	for (int64_t f = 0; f < nin; f++) {
		torch::Tensor col = r.select(1, f);

		if (c < m->ncat && m->cat_feature[c] == f) {
			int64_t k = m->cat_classes[c++];
			col.copy_(torch::randint(-2, 2 * k + 2, { shape[0] }).to(torch::kFloat) / 2);
		} else {
			col.mul_(m->in_std[j]).add_(m->in_mean[j]);
			j++;
		}
	}
	return r.reshape(shape).contiguous();
}

/* The description evaluated by libtorch, on x [n, *in_shape]. */
torch::Tensor describe_forward(const hml__cg_model *m, const torch::Tensor &x)
{
	int64_t n = x.size(0), cin = m->layers[0].in, cout = m->layers[m->nlayers - 1].out;
	bool cnn = m->family == HML__CG_CNN;

	if (m->family == HML__CG_CNNVEC)
		return describe_vec_forward(m, x);
	std::vector<int64_t> pshape = cnn ? std::vector<int64_t>{ 1, 1 } : std::vector<int64_t>{};
	std::vector<int64_t> ishape = { cin }, oshape = { cout };
	torch::Tensor h;

	ishape.insert(ishape.end(), pshape.begin(), pshape.end());
	oshape.insert(oshape.end(), pshape.begin(), pshape.end());
	if (cnn)
		h = x.reshape({ n, cin, x.size(-2), x.size(-1) });
	else
		h = describe_encode(m, x.reshape({ n, hml__cg_model_in_size(m) }));
	h = (h - t_of(m->in_mean, ishape)) / t_of(m->in_std, ishape);
	for (int l = 0; l < m->nlayers; l++) {
		const hml__cg_layer *y = &m->layers[l];

		if (cnn)
			h = torch::conv2d(h, t_of(y->weight, { y->out, y->in, y->kernel, y->kernel }),
			                  t_of(y->bias, { y->out }), 1, y->kernel / 2);
		else
			h = torch::linear(h, t_of(y->weight, { y->out, y->in }), t_of(y->bias, { y->out }));
		h = activate(h, y->act);
	}
	h = h * t_of(m->out_std, oshape) + t_of(m->out_mean, oshape);
	if (m->residual)
		h = h + x.reshape(h.sizes());
	std::vector<int64_t> shape = { n };
	shape.insert(shape.end(), m->out_shape, m->out_shape + m->out_ndim);
	return h.reshape(shape);
}

/* The module's forward must compute what the description says. */
void verify(torch::jit::Module &mod, const hml__cg_model *m)
{
	torch::NoGradGuard no_grad;
	std::vector<int64_t> shape = { m->ncat ? 64 : 8 };
	shape.insert(shape.end(), m->in_shape, m->in_shape + m->in_ndim);
	torch::manual_seed(1);
	torch::Tensor x = verify_rows(m, shape);
	torch::Tensor want = describe_forward(m, x);
	/* a module of doubles (or halves) is called with its own type */
	auto ps = mod.parameters();
	torch::Tensor xin = ps.begin() != ps.end() ? x.to((*ps.begin()).scalar_type()) : x;
	torch::Tensor got = mod.forward({ xin }).toTensor().to(torch::kFloat);
	if (got.sizes() != want.sizes())
		throw Unsupported{ "its forward returns a tensor of another shape than its hml_output_shape" };
	double scale = std::max(1.0, want.abs().max().item<double>());
	double diff = (got - want).abs().max().item<double>();
	if (!(diff <= 1e-4 * scale))
		throw Unsupported{ "its forward does not compute the " +
		                   std::string(m->family == HML__CG_CNNVEC ? "cnnvec" :
		                               m->family == HML__CG_CNN ? "CNN" : "MLP") +
		                   " its parameters describe (the graph was changed)" };
}

} // namespace

extern "C" int hml__export_model(const char *path, hml__cg_model *out)
{
	int rc = 0;

	std::memset(out, 0, sizeof(*out));
	if (access(path, R_OK) != 0)
		return hml__error_set(errno == ENOENT ? HML_ENOTFOUND : HML_EIO,
		                      "cannot open model '%s': %s", path, std::strerror(errno));
	try {
		torch::jit::Module mod = torch::jit::load(path, torch::kCPU);

		mod.eval();
		read_module(mod, out);
		if ((rc = hml__cg_model_check(out)) == 0)
			verify(mod, out);
	} catch (const Unsupported &u) {
		rc = hml__error_set(HML_ENOTSUPPORTED, "cannot compile model '%s' to C: %s",
		                    path, u.why.c_str());
	} catch (const std::exception &e) {
		const char *w = what_of(e);
		rc = hml__error_set(HML_EMODEL, "cannot read model '%s': %.*s", path,
		                    (int)std::strcspn(w, "\r\n"), w);
	} catch (...) {
		rc = hml__error_set(HML_EMODEL, "cannot read model '%s': unknown error", path);
	}
	if (rc < 0)
		hml__cg_model_release(out);
	return rc;
}
