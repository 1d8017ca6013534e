/*
 * The C side of tests/unit/fortran.f90's layout check: the sizes and some
 * field offsets of the public structs that runtime/fortran/hml_c.f90
 * mirrors as bind(C) types, so that a field added on one side only fails
 * the test instead of shifting memory.
 */
#include <stddef.h>

#include <hml/hml.h>

size_t hml_test_c_layout(int which);

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
