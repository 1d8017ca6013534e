/*
 * runtime/loader/torch_backend.cpp - libhml-torch.so, the libtorch backend:
 * TorchScript inference behind the C table of backend.h, loaded by
 * model.c the first time a region opens a TorchScript model. Every
 * function of the table catches every C++ exception and turns it into an
 * hml error (this plugin's own copy of lib/core/error.c; the loader reads it
 * through last_error). The only symbol it exports is its entry point.
 */
#include <torch/script.h>
#include <ATen/Parallel.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#if __has_include(<torch/version.h>)
#  include <torch/version.h>
#endif
#ifdef HML_WITH_CUDA
#  include <torch/cuda.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/envname.h"
#include "core/error.h"
#include "core/util.h"
#include "loader/backend.h"

struct torch_model {
	torch::jit::Module module;
	std::string path;
	hml_dtype dtype = HML_F32;
	torch::ScalarType scalar = torch::kFloat;
	torch::Device device = torch::kCPU;
	int in_ndim = 0, out_ndim = 0;
	int64_t in_shape[HML_MAX_DIMS] = { 0 };
	int64_t out_shape[HML_MAX_DIMS] = { 0 };
	/* forward, called through Function::run on a stack kept here, so a call
	 * allocates nothing of ours beyond the tensors libtorch makes. */
	torch::jit::Function *forward = nullptr;
	c10::IValue self;
	std::vector<c10::IValue> stack;
	torch::Tensor output;
};

namespace {

/* Length of the first line of `s`, for "%.*s". */
int line_len(const char *s)
{
	return (int)std::strcspn(s, "\r\n");
}

/*
 * The line of a libtorch message worth showing. An error inside the
 * TorchScript interpreter reads "The following operation failed in the
 * TorchScript interpreter.", a traceback of indented lines, then the
 * exception itself ("RuntimeError: mat1 and mat2 shapes ..."): show that
 * line, without the class name when it is RuntimeError. Otherwise the
 * first line. The result points into `what`.
 */
const char *reason_of(const char *what)
{
	static const char interp[] = "The following operation failed in the TorchScript interpreter.";
	static const char rt[] = "RuntimeError: ";
	const char *p;

	if (std::strncmp(what, interp, sizeof(interp) - 1) != 0)
		return what;
	for (p = std::strchr(what, '\n'); p; p = std::strchr(p, '\n')) {
		p++;
		if (*p == '\0' || *p == ' ' || *p == '\t' || *p == '\n' ||
		    std::strncmp(p, "Traceback of TorchScript", 24) == 0)
			continue;
		if (std::strncmp(p, rt, sizeof(rt) - 1) == 0)
			p += sizeof(rt) - 1;
		return p;
	}
	return what;
}

/* c10::Error::what() appends a C++ backtrace; the message alone is enough. */
const char *what_of(const std::exception &e)
{
	if (auto c = dynamic_cast<const c10::Error *>(&e))
		return c->what_without_backtrace();
	return e.what();
}

const char *scalar_name(torch::ScalarType t)
{
	switch (t) {
	case torch::kHalf: return "float16";
	case torch::kBFloat16: return "bfloat16";
	case torch::kFloat: return "float32";
	case torch::kDouble: return "float64";
	default: return c10::toString(t);
	}
}

/* The element type of the first floating-point parameter or buffer. */
int find_dtype(torch_model *m)
{
	std::optional<torch::ScalarType> t;

	for (const auto &p : m->module.parameters()) {
		if (p.is_floating_point()) {
			t = p.scalar_type();
			break;
		}
	}
	if (!t) {
		for (const auto &b : m->module.buffers()) {
			if (b.is_floating_point()) {
				t = b.scalar_type();
				break;
			}
		}
	}
	if (!t || *t == torch::kFloat) {
		m->dtype = HML_F32;
		m->scalar = torch::kFloat;
	} else if (*t == torch::kDouble) {
		m->dtype = HML_F64;
		m->scalar = torch::kDouble;
	} else {
		return hml__error_set(HML_ENOTSUPPORTED,
			"cannot open model '%s': parameters of type %s are not supported (use float32 or float64)",
			m->path.c_str(), scalar_name(*t));
	}
	return 0;
}

/* Read the integer-list attribute `name` into shape, *ndim = 0 if absent. */
int read_declared(torch_model *m, const char *name, int64_t *shape, int *ndim)
{
	std::vector<int64_t> v;

	*ndim = 0;
	if (!m->module.hasattr(name))
		return 0;
	c10::IValue a = m->module.attr(name);
	if (a.isIntList()) {
		v = a.toIntVector();
	} else if (a.isTuple()) {
		for (const auto &e : a.toTupleRef().elements()) {
			if (!e.isInt())
				goto bad;
			v.push_back(e.toInt());
		}
	} else {
		goto bad;
	}
	if (v.size() > HML_MAX_DIMS)
		return hml__error_set(HML_ENOTSUPPORTED,
			"cannot open model '%s': attribute '%s' has %zu dims, more than %d",
			m->path.c_str(), name, v.size(), HML_MAX_DIMS);
	for (size_t i = 0; i < v.size(); i++)
		shape[i] = v[i];
	*ndim = (int)v.size();
	return 0;
bad:
	return hml__error_set(HML_EMODEL,
		"cannot open model '%s': attribute '%s' is %s, expected List[int]",
		m->path.c_str(), name, a.type()->annotation_str().c_str());
}

/* The device `device` names, or when NULL the one HML_DEVICE asks for:
 * "auto" (also unset or empty) is the GPU
 * when this plugin was built with CUDA and libtorch sees one, else the
 * CPU; "cpu" and "cuda" are obeyed, or refused when impossible. */
int place(torch_model *m, const char *device)
{
	const char *want = device ? device : getenv(HML__ENV_DEVICE);
	int cuda;

	if (!want || !*want || std::strcmp(want, "auto") == 0) {
#ifdef HML_WITH_CUDA
		cuda = torch::cuda::is_available();
#else
		cuda = 0;
#endif
	} else if (std::strcmp(want, "cpu") == 0) {
		cuda = 0;
	} else if (std::strcmp(want, "cuda") == 0) {
#ifdef HML_WITH_CUDA
		if (!torch::cuda::is_available())
			return hml__error_set(HML_EINVALID, "%s=cuda: no CUDA device is visible to libtorch",
			                      HML__ENV_DEVICE);
		cuda = 1;
#else
		return hml__error_set(HML_ENOTSUPPORTED,
			"%s=cuda: this hml was built without CUDA (configure with -DHML_WITH_CUDA=ON "
			"against a libtorch with CUDA)", HML__ENV_DEVICE);
#endif
	} else {
		return hml__error_set(HML_EINVALID, "%s='%.64s' is not auto, cpu or cuda",
		                      HML__ENV_DEVICE, want);
	}
	if (cuda) {
#ifdef HML_WITH_CUDA
		/* float32 as on the CPU: cuDNN's convolutions use TF32 by default
		 * (miniWeather's CNN then differed from the CPU by 4e-4 of its
		 * scale on an H200), and the model was checked in float32. */
		at::globalContext().setAllowTF32CuDNN(false);
		at::globalContext().setAllowTF32CuBLAS(false);
#endif
		m->module.to(torch::kCUDA);
		m->device = torch::Device(torch::kCUDA);
	}
	return 0;
}

/* On a GPU, forward passes of zero rows at load, one row and a batch
 * (4096 rows, or fewer to stay within 16 MB): CUDA creates its cuBLAS
 * handle and loads each kernel lazily, on its first launch, and cuBLAS
 * picks other kernels for one row than for many. Measured on an H200 with
 * a 64x64 MLP: the region's first call took 150 ms with no warm-up, 40 ms
 * after one row only. The process pays it either way; this keeps it out of
 * the region's timing. Needs the declared input shape; a failure here is
 * left for the first real call to report. */
void warm_up(torch_model *m)
{
#ifdef HML_WITH_CUDA
	int64_t row = (int64_t)c10::elementSize(m->scalar);

	if (m->device.is_cpu() || m->in_ndim == 0)
		return;
	for (int d = 0; d < m->in_ndim; d++)
		row *= m->in_shape[d] > 0 ? m->in_shape[d] : 1;
	try {
		torch::NoGradGuard no_grad;

		for (int64_t rows : { (int64_t)1, std::max<int64_t>(1, std::min<int64_t>(4096, (16 << 20) / row)) }) {
			std::vector<int64_t> shape(1, rows);

			shape.insert(shape.end(), m->in_shape, m->in_shape + m->in_ndim);
			std::vector<c10::IValue> stack{ m->self, torch::zeros(shape, torch::TensorOptions()
			                                                       .dtype(m->scalar).device(m->device)) };
			m->forward->run(stack);
		}
		torch::cuda::synchronize();
	} catch (...) {
	}
#else
	(void)m;   /* no GPU: nothing is lazy */
#endif
}

int load(torch_model *m, const char *path, int threads, const char *device)
{
	int rc;

	try {
		m->module = torch::jit::load(path, torch::kCPU);
	} catch (const std::bad_alloc &) {
		return hml__error_oom();
	} catch (const std::exception &e) {
		const char *w = what_of(e);
		return hml__error_set(HML_EMODEL, "cannot open model '%s': not a TorchScript archive (%.*s)",
		                      path, line_len(w), w);
	} catch (...) {
		return hml__error_set(HML_EMODEL, "cannot open model '%s': not a TorchScript archive", path);
	}
	auto method = m->module.find_method("forward");
	if (!method)
		return hml__error_set(HML_EMODEL, "cannot open model '%s': no forward method", path);
	m->module.eval();
	if ((rc = find_dtype(m)) < 0)
		return rc;
	if ((rc = read_declared(m, "hml_input_shape", m->in_shape, &m->in_ndim)) < 0 ||
	    (rc = read_declared(m, "hml_output_shape", m->out_shape, &m->out_ndim)) < 0)
		return rc;
	if (threads > 0)
		at::set_num_threads(threads);
	/* The profiling graph executor re-optimises a model during its first
	 * calls (70 ms for a small MLP here) and gains nothing for the small
	 * dense models surrogates are; the plain interpreter is faster from
	 * the first call. Process-wide; HML_JIT_OPTIMIZE=1 keeps it on. */
	{
		const char *opt = getenv(HML__ENV_JIT_OPTIMIZE);
		torch::jit::setGraphExecutorOptimize(opt && strcmp(opt, "1") == 0);
	}
	if ((rc = place(m, device)) < 0)
		return rc;
	m->forward = &method->function();
	m->self = m->module._ivalue();
	m->stack.reserve(4);
	warm_up(m);
	return 0;
}

torch_model *self_of(void *p)
{
	return static_cast<torch_model *>(p);
}

const torch_model *self_of(const void *p)
{
	return static_cast<const torch_model *>(p);
}

/* The table's functions: loader.h's hml__model_* contract, on a torch_model. The loader
 * (model.c) has checked the file and the arguments it can. */

int torch_load(void **out, const char *path, int threads, const char *device)
{
	torch_model *m = nullptr;
	int rc;

	*out = nullptr;
	try {
		m = new torch_model();
		m->path = path;
		rc = load(m, path, threads, device);
	} catch (const std::bad_alloc &) {
		rc = hml__error_oom();
	} catch (const std::exception &e) {
		const char *w = what_of(e);
		rc = hml__error_set(HML_EMODEL, "cannot open model '%s': %.*s", path, line_len(w), w);
	} catch (...) {
		rc = hml__error_set(HML_EMODEL, "cannot open model '%s': unknown C++ exception", path);
	}
	if (rc < 0) {
		delete m;
		return rc;
	}
	*out = m;
	return 0;
}

void torch_free(void *p)
{
	try {
		delete self_of(p);
	} catch (...) {
	}
}

hml_dtype torch_dtype(const void *p)
{
	return self_of(p)->dtype;
}

int torch_declared_input(const void *p, int64_t *shape)
{
	const torch_model *m = self_of(p);

	std::memcpy(shape, m->in_shape, (size_t)m->in_ndim * sizeof(int64_t));
	return m->in_ndim;
}

int torch_declared_output(const void *p, int64_t *shape)
{
	const torch_model *m = self_of(p);

	std::memcpy(shape, m->out_shape, (size_t)m->out_ndim * sizeof(int64_t));
	return m->out_ndim;
}

int torch_forward(void *p, const void *in, hml_dtype dtype, int ndim, const int64_t *shape)
{
	torch_model *m = self_of(p);
	char dims[160];
	int64_t n = 1;
	int d, rc = 0;

	if (ndim < 1 || ndim > HML_MAX_DIMS + 1 || !shape)
		return hml__error_set(HML_EINVALID, "cannot run model '%s': input has %d dims, expected 1 to %d",
		                      m->path.c_str(), ndim, HML_MAX_DIMS + 1);
	for (d = 0; d < ndim; d++) {
		if (shape[d] < 0)
			break;
		n *= shape[d];
	}
	if (d < ndim || (!in && n > 0) || (dtype != HML_F32 && dtype != HML_F64)) {
		hml__format_shape(dims, sizeof(dims), shape, ndim);
		return hml__error_set(HML_EINVALID, "cannot run model '%s' on input %s of %s: %s",
		                      m->path.c_str(), dims, hml_dtype_name(dtype),
		                      d < ndim ? "negative dimension" : !in ? "no data" : "unknown element type");
	}

	try {
		torch::NoGradGuard no_grad;
		torch::ScalarType st = dtype == HML_F64 ? torch::kDouble : torch::kFloat;
		torch::Tensor x = torch::from_blob(const_cast<void *>(in),
		                                   c10::IntArrayRef(shape, (size_t)ndim),
		                                   torch::TensorOptions().dtype(st));
		torch::Tensor blob = x;
		if (st != m->scalar || !m->device.is_cpu())
			x = x.to(m->device, m->scalar);

		m->output.reset();
		m->stack.clear();
		m->stack.push_back(m->self);
		m->stack.emplace_back(std::move(x));
		m->forward->getSchema().checkAndNormalizeInputs(m->stack);
		m->forward->run(m->stack);
		if (m->stack.empty() || !m->stack.back().isTensor()) {
			std::string type = m->stack.empty() ? std::string("nothing")
			                                     : m->stack.back().type()->annotation_str();
			m->stack.clear();
			return hml__error_set(HML_EMODEL, "model '%s' returned %s, expected a tensor",
			                      m->path.c_str(), type.c_str());
		}
		torch::Tensor y = std::move(m->stack.back()).toTensor();
		m->stack.clear();
		if (!y.device().is_cpu())
			y = y.to(torch::kCPU);
		if (y.scalar_type() != torch::kFloat && y.scalar_type() != torch::kDouble)
			y = y.to(m->scalar);
		y = y.contiguous();
		/* The output must be the model's: a model that returns its input,
		 * or a view of it, would hand back the caller's memory. */
		if (y.storage().is_alias_of(blob.storage()))
			y = y.clone();
		if (y.dim() > HML_MAX_DIMS + 1) {
			hml__format_shape(dims, sizeof(dims), shape, ndim);
			return hml__error_set(HML_ESHAPE, "model '%s' returned %d dims on input %s, more than %d",
			                      m->path.c_str(), (int)y.dim(), dims, HML_MAX_DIMS + 1);
		}
		m->output = std::move(y);
	} catch (const std::bad_alloc &) {
		rc = hml__error_oom();
	} catch (const std::exception &e) {
		const char *w = reason_of(what_of(e));
		hml__format_shape(dims, sizeof(dims), shape, ndim);
		rc = hml__error_set(HML_EMODEL, "model '%s' failed on input %s of %s: %.*s",
		                    m->path.c_str(), dims, hml_dtype_name(dtype), line_len(w), w);
	} catch (...) {
		hml__format_shape(dims, sizeof(dims), shape, ndim);
		rc = hml__error_set(HML_EMODEL, "model '%s' failed on input %s of %s: unknown C++ exception",
		                    m->path.c_str(), dims, hml_dtype_name(dtype));
	}
	if (rc < 0) {
		m->stack.clear();
		m->output.reset();
	}
	return rc;
}

int torch_output(const void *p, const void **data, hml_dtype *dtype, int *ndim, int64_t *shape)
{
	const torch_model *m = self_of(p);

	if (!m->output.defined())
		return hml__error_set(HML_EINVALID, "model '%s' has no output: forward has not succeeded",
		                      m->path.c_str());
	try {
		const torch::Tensor &y = m->output;
		int nd = (int)y.dim();
		*data = y.data_ptr();
		*dtype = y.scalar_type() == torch::kDouble ? HML_F64 : HML_F32;
		*ndim = nd;
		for (int d = 0; d < nd; d++)
			shape[d] = y.size(d);
	} catch (...) {
		return hml__error_set(HML_EMODEL, "model '%s': cannot read its output", m->path.c_str());
	}
	return 0;
}

const char *torch_last_error(void)
{
	const hml_error *e = hml_error_last();

	return e->message ? e->message : "unknown error";
}

const hml__backend torch_backend = {
	HML__BACKEND_ABI,
	sizeof(hml__backend),
	"torch",
#ifdef TORCH_VERSION
	TORCH_VERSION,
#else
	"unknown",
#endif
	torch_load,
	torch_free,
	torch_dtype,
	torch_declared_input,
	torch_declared_output,
	torch_forward,
	torch_output,
	torch_last_error,
};

} // namespace

extern "C" __attribute__((visibility("default")))
const hml__backend *hml_torch_backend(int abi)
{
	return abi == HML__BACKEND_ABI ? &torch_backend : nullptr;
}
