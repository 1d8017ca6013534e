/*
 * Must NOT compile: runtime code (built with hml_runtime_obj's include
 * directories) including a CLI-only header of lib/. tests/arrows/check.sh
 * builds it and expects the compiler to say the header does not exist.
 */
#include "store.h"

int hml_arrow_probe;
