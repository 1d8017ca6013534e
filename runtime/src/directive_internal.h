/*
 * runtime/src/directive_internal.h - what the two files of the directive
 * calls (hml/directive.h) share (internal).
 */
#ifndef HML_RUNTIME_DIRECTIVE_INTERNAL_H
#define HML_RUNTIME_DIRECTIVE_INTERNAL_H

/**
 * Set the error the translated program prints after "hml: error: ":
 * "WHERE: region 'LABEL': WHAT" ("WHERE: WHAT" for a NULL label). A NULL
 * `what` takes the message (and the code, unless `code` is given as 0
 * and none is set: HML_ERROR) of the error set last. Returns the code.
 */
int hml__dir_error(int code, const char *where, const char *label, const char *what);

#endif
