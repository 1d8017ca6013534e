#include <H5public.h>

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

/* Debian's libhdf5-dev ships the headers of the libhdf5 it depends on, at
 * the same version: the headers' version is the library's. */
#define HML__STR(x) #x
#define HML__XSTR(x) HML__STR(x)

const char *hml__hdf5_version(void)
{
	return HML__XSTR(H5_VERS_MAJOR) "." HML__XSTR(H5_VERS_MINOR) "." HML__XSTR(H5_VERS_RELEASE);
}
