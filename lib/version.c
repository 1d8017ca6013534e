#include "hml/version.h"

const char *hml_version(void)
{
	return HML_VERSION_STRING;
}
