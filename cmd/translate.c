/*
 * cmd/translate.c - hml translate IN.c [-o OUT.c]: print (or write) the
 * translation of a file's hml directives (lib/directive/directive.h),
 * what `hml cc` compiles in its place.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "core/read_file.h"
#include "directive/directive.h"

int cmd_translate(int argc, char **argv)
{
	const char *out_path = NULL;
	const cmd_option opts[] = {
		{ "output", 'o', CMD_OPT_STRING, &out_path, "FILE", "write the translation to FILE (default: stdout)" },
		{ NULL, 0, 0, NULL, NULL, NULL }
	};
	const cmd_spec spec = { "translate", "[-o OUT.c] IN.c",
		"show the translation of a source's #pragma approx / #pragma hml directives",
		"Translates the directives of IN.c into calls of the hml runtime API, as\n"
		"`hml cc` does before compiling, with #line directives that keep the\n"
		"user's lines. A file without directives is copied unchanged.\n"
		"A malformed directive is an error FILE:LINE:COLUMN: WHAT: 'TOKEN' (exit 3).\n"
		"See hml-cc(1) for the grammar.",
		opts, 1, 1, NULL };
	char *src = NULL, *txt = NULL;
	size_t size;
	int first, rc, count = 0;
	FILE *f = stdout;

	if ((rc = cmd_parse(&spec, argc, argv, &first)) != 0)
		return rc > 0 ? cmd_finish(HML_EXIT_OK) : HML_EXIT_USAGE;
	if ((rc = hml__read_file(argv[first], &src, &size)) < 0)
		return cmd_fail(rc);
	if (memchr(src, 0, size)) {
		free(src);
		cmd_error("'%s' holds a NUL byte: not a C source", argv[first]);
		return HML_EXIT_INVALID;
	}
	if ((rc = hml__directive_translate(&txt, &count, src, argv[first])) < 0) {
		free(src);
		cmd_error("%s", hml_error_last()->message);
		return rc == HML_ESYNTAX ? HML_EXIT_INVALID : HML_EXIT_FAILURE;
	}
	if (out_path && !(f = fopen(out_path, "w"))) {
		cmd_error("cannot write '%s': %s", out_path, strerror(errno));
		free(src);
		free(txt);
		return HML_EXIT_FAILURE;
	}
	if (!g_cmd.json || out_path)
		fputs(txt ? txt : src, f);
	if (out_path && fclose(f) != 0) {
		cmd_error("cannot write '%s'", out_path);
		rc = -1;
	}
	if (g_cmd.json)
		cmd_json_print(json_pack("{s:s, s:i, s:s?}", "input", argv[first], "directives", count,
		                         "output", out_path));
	free(src);
	free(txt);
	return cmd_finish(rc < 0 ? HML_EXIT_FAILURE : HML_EXIT_OK);
}
