/*
 * runtime/src/directive_internal.h - what the two files of the directive
 * calls (hml/directive.h) share (internal).
 */
#ifndef HML_RUNTIME_DIRECTIVE_INTERNAL_H
#define HML_RUNTIME_DIRECTIVE_INTERNAL_H

/**
 * Set the error the translated program prints after "hml: error: ":
 * "WHERE: region 'LABEL': WHAT" ("WHERE: WHAT" for a NULL label). A NULL
 * `what` stands for the message of the error set last (a runtime call's).
 * `code` 0 keeps that error's code (HML_ERROR when none is set). Returns
 * the code set.
 */
int hml__dir_error(int code, const char *where, const char *label, const char *what);

#endif
