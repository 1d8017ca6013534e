/*
 * lib/deploy/export_none.c - hml__export_model (export.h) in a build without
 * libtorch (HML_WITH_TORCH=OFF): reading a TorchScript model needs
 * libtorch, so `hml deploy --target c` is refused with HML_ENOTSUPPORTED
 * before anything is compiled or registered. With libtorch, export.cpp
 * holds the real one and this file is empty.
 */
#include "core/error.h"
#include "deploy/export.h"

#ifndef HML_WITH_TORCH
int hml__export_model(const char *path, hml__cg_model *out)
{
	(void)out;
	return hml__error_set(HML_ENOTSUPPORTED,
		"cannot compile model '%s' to C: hml was built without libtorch "
		"(HML_WITH_TORCH=OFF), which reads TorchScript models", path);
}
#else
typedef int hml__export_none_empty; /* ISO C: no empty translation unit */
#endif
