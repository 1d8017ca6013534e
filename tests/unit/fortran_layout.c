/*
 * The C side of tests/unit/fortran.f90's layout check: the sizes and some
 * field offsets of the public structs that runtime/fortran/hml_c.f90
 * mirrors as bind(C) types, so that a field added on one side only fails
 * the test instead of shifting memory; and the values of the constants
 * runtime/fortran/hml.f90 repeats, in the order of the test's list.
 */
#include <stddef.h>

#include <hml/hml.h>

size_t hml_test_c_layout(int which);
int hml_test_c_constant(int k);

static const int constants[] = {
	HML_OK, HML_ERROR, HML_EINVALID, HML_ENOMEM, HML_ENOTFOUND, HML_EIO, HML_ESHAPE,
	HML_ERANGE, HML_ENOTSUPPORTED, HML_EMODEL, HML_ESYNTAX, HML_EEXISTS, HML_ELOCKED,
	HML_MODE_DEFAULT, HML_MODE_OFF, HML_MODE_COLLECT, HML_MODE_INFER, HML_MODE_INTERLEAVE,
	HML_MODE_SHADOW, HML_ON_ERROR_DEFAULT, HML_ON_ERROR_FALLBACK, HML_ON_ERROR_FAIL,
	HML_F32, HML_F64, HML_I32, HML_I64, HML_MAX_DIMS
};

/* Constant k (from 1) of the list above; -1000 past its end. */
int hml_test_c_constant(int k)
{
	return k >= 1 && (size_t)k <= sizeof(constants) / sizeof(constants[0]) ? constants[k - 1] : -1000;
}

size_t hml_test_c_layout(int which)
{
	switch (which) {
	case 1: return sizeof(hml_region_options);
	case 2: return offsetof(hml_region_options, flush_bytes);
	case 3: return sizeof(hml_array);
	case 4: return offsetof(hml_array, shape);
	case 5: return sizeof(hml_symbol);
	case 6: return sizeof(hml_error);
	case 7: return sizeof(hml_region_stats);
	case 8: return offsetof(hml_region_stats, nonfinite_calls);
	case 9: return offsetof(hml_region_stats, region_s);
	}
	return 0;
}
