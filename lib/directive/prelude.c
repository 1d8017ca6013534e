/*
 * lib/directive/prelude.c - what a translated file carries besides its
 * directives' code: the runtime's header of directive calls
 * (hml/directive.h, where the helpers live) and what needs the user's
 * types or the user's file, before its first directive; at its end the few
 * lines that print a failed call's error and exit (hml__dir_ck), which
 * include <stdio.h> and <stdlib.h> there so that they cannot disturb the
 * feature macros the user set before their own includes. Why the exit
 * stays in the user's file: hml/directive.h.
 */
#include "directive/emit.h"

const char hml__dprelude_head[] =
"/* hml translate: the directives below call the hml runtime (hml/directive.h,\n"
" * hml-cc(1)). */\n"
"#include <hml/hml.h>\n"
"#include <hml/directive.h>\n"
"#if defined(__GNUC__)\n"
"#define HML__DIR_UNUSED __attribute__((unused))\n"
"#else\n"
"#define HML__DIR_UNUSED\n"
"#endif\n"
"#if defined(__cplusplus)\n"
"static inline hml_dtype hml__dir_dt(const float *) { return HML_F32; }\n"
"static inline hml_dtype hml__dir_dt(const double *) { return HML_F64; }\n"
"static inline hml_dtype hml__dir_dt(const int *) { return HML_I32; }\n"
"static inline hml_dtype hml__dir_dt(const long *) { return sizeof(long) == 8 ? HML_I64 : HML_I32; }\n"
"static inline hml_dtype hml__dir_dt(const long long *) { return HML_I64; }\n"
"static inline hml_dtype hml__dir_dt(const void *) { return (hml_dtype)0; }\n"
"template <class T, size_t N> static inline hml_dtype hml__dir_dt(const T (*)[N]) { return hml__dir_dt((const T *)0); }\n"
"#define HML__DIR_DT(p) hml__dir_dt(p)\n"
"#else\n"
"#define HML__DIR_DT(p) _Generic(*(p), float: HML_F32, double: HML_F64, int: HML_I32, \\\n"
"\tlong: (sizeof(long) == 8 ? HML_I64 : HML_I32), long long: HML_I64, \\\n"
"\tfloat *: HML_F32, double *: HML_F64, int *: HML_I32, \\\n"
"\tlong *: (sizeof(long) == 8 ? HML_I64 : HML_I32), long long *: HML_I64, default: (hml_dtype)0)\n"
"#endif\n"
"static HML__DIR_UNUSED int64_t hml__dir_ck(int64_t rc);\n";

const char hml__dprelude_tail[] =
"#include <stdio.h>\n"
"#include <stdlib.h>\n"
"/* A failed directive call: its one-line error, exit status 1. */\n"
"static int64_t hml__dir_ck(int64_t rc)\n"
"{\n"
"\tif (rc < 0) {\n"
"\t\tfprintf(stderr, \"hml: error: %s\\n\", hml_error_last()->message);\n"
"\t\texit(1);\n"
"\t}\n"
"\treturn rc;\n"
"}\n";
