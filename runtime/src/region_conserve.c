/*
 * runtime/src/region_conserve.c - HML_CONSERVE: a model's output corrected
 * so that the sum of a box of it is the input's, call after call
 * (lib/core/conserve.h; hml-runtime(3)). Batch calls only: row calls
 * (hml_region_rows) are not corrected.
 */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "region_internal.h"

int hml__region_conserve_setup(hml_region *r)
{
	hml__conserve c;
	char in[160], out[160];
	int rc;

	r->conserve_on = 0;
	if (!r->cfg.conserve)
		return 0;
	if ((rc = hml__conserve_parse(&c, r->cfg.conserve)) < 0)
		return rc;
	if (r->in.ndim != r->out.ndim || r->in.rows != r->out.rows ||
	    memcmp(r->in.shape, r->out.shape, (size_t)r->in.ndim * sizeof(int64_t)) != 0) {
		hml__side_shape_text(in, sizeof(in), &r->in);
		hml__side_shape_text(out, sizeof(out), &r->out);
		return hml__error_set(HML_EINVALID, "region '%s': conserve '%s' needs an output "
		                      "shaped as the input; the input is %s, the output %s",
		                      r->label, r->cfg.conserve, in, out);
	}
	if ((rc = hml__conserve_resolve(&r->conserve_box, &c, r->out.ndim, r->out.shape)) < 0)
		return hml__error_set(rc, "region '%s': %s", r->label, hml_error_last()->message);
	r->conserve_on = 1;
	return 0;
}

int hml__region_conserve_apply(hml_region *r, const void *x, hml_dtype xdt, const void **y,
                               hml_dtype ydt)
{
	size_t n = (size_t)(r->out.rows * r->out.row_size), bytes;

	if (ydt != xdt || (ydt != HML_F32 && ydt != HML_F64))
		return hml__error_set(HML_ENOTSUPPORTED, "region '%s': conserve needs the model's "
		                      "output in its input's dtype (float32 or float64)", r->label);
	bytes = n * hml_dtype_size(ydt);
	if (bytes > r->conserve_cap) {
		void *b = realloc(r->conserve_buf, bytes);

		if (!b)
			return hml__error_oom();
		r->conserve_buf = b;
		r->conserve_cap = bytes;
	}
	memcpy(r->conserve_buf, *y, bytes);
	if (ydt == HML_F32)
		hml__conserve_apply_f32(&r->conserve_box, x, r->conserve_buf, r->out.rows);
	else
		hml__conserve_apply_f64(&r->conserve_box, x, r->conserve_buf, r->out.rows);
	*y = r->conserve_buf;
	return 0;
}

void hml__region_conserve_release(hml_region *r)
{
	free(r->conserve_buf);
	r->conserve_buf = NULL;
	r->conserve_cap = 0;
	r->conserve_on = 0;
}
