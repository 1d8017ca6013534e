#include "core/util.h"
#include "hml/version.h"

const char *hml_version(void)
{
	return HML_VERSION_STRING;
}

/* HML_TORCH_VERSION comes from the build (CMake's find_package(Torch)). */
const char *hml__torch_version(void)
{
#ifdef HML_TORCH_VERSION
	return HML_TORCH_VERSION;
#else
	return "none";
#endif
}
