/*
 * cmd/cc.c - hml cc COMPILER ARGS...: a compiler wrapper, as mpicc is for
 * MPI. Each C or C++ source among ARGS that holds hml directives is
 * translated (lib/directive/directive.h) into a private temporary folder
 * under its own name (so `-c app.c` still makes app.o) and compiled in its
 * place, with -iquote for its own folder (its "..." includes) and #line
 * keeping diagnostics on the user's lines; every other argument, and a
 * source without directives, goes to the compiler untouched. The runtime's
 * include folders are added, and when the command links (no -c, -S, -E,
 * -M), libhml with its run path: the build tree's when hml runs from one,
 * else the installed prefix's, both found relative to this executable.
 *
 * Usable as CC="hml cc gcc" and as CMake's C_COMPILER_LAUNCHER. A
 * malformed directive stops it before the compiler runs (exit 3).
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd.h"
#include "core/read_file.h"
#include "directive/directive.h"

static void help(void)
{
	printf("usage: hml cc COMPILER [COMPILER ARGUMENTS...]\n"
	       "\n"
	       "Compile with COMPILER (gcc, clang, g++, mpicc, ...) after translating the\n"
	       "#pragma approx (HPAC-ML) and #pragma hml directives of the C and C++ sources\n"
	       "among the arguments into calls of the hml runtime. Adds the runtime's include\n"
	       "folder and, when linking, -lhml with its library folder and run path.\n"
	       "Sources without directives compile exactly as without hml cc.\n"
	       "\n"
	       "  CC=\"hml cc gcc\" make\n"
	       "  cmake -DCMAKE_C_COMPILER_LAUNCHER=\"hml;cc\" ...\n"
	       "\n"
	       "Exit status: the compiler's; 3 for a malformed directive (reported as\n"
	       "FILE:LINE:COLUMN: WHAT: 'TOKEN'; the compiler is not run); 1 when the\n"
	       "compiler cannot be run. See hml-cc(1).\n");
}

static int is_source(const char *a)
{
	const char *dot = strrchr(a, '.');
	static const char *const ext[] = { ".c", ".cc", ".cpp", ".cxx", ".C", ".c++", NULL };

	if (!dot || a[0] == '-')
		return 0;
	for (int i = 0; ext[i]; i++)
		if (strcmp(dot, ext[i]) == 0)
			return 1;
	return 0;
}

/* Options whose next argument is a value, not a source. */
static int takes_value(const char *a)
{
	static const char *const opts[] = { "-o", "-I", "-L", "-D", "-U", "-include", "-imacros",
		"-isystem", "-iquote", "-idirafter", "-MF", "-MT", "-MQ", "-x", "-Xlinker",
		"-Xpreprocessor", "-Xassembler", "-l", NULL };

	for (int i = 0; opts[i]; i++)
		if (strcmp(a, opts[i]) == 0)
			return 1;
	return 0;
}

/* The runtime's include folders and library folder for this hml. */
static int locate(char *inc1, char *inc2, char *lib, size_t n)
{
	char exe[PATH_MAX], probe[PATH_MAX + 32];
	ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *dir;

	if (k <= 0)
		return -1;
	exe[k] = 0;
	dir = dirname(exe);
	snprintf(probe, sizeof(probe), "%s/../runtime/libhml.so", dir);
	if (access(probe, F_OK) == 0) {           /* the build tree */
		snprintf(inc1, n, "%s", HML__SOURCE_INCLUDE);
		snprintf(inc2, n, "%s/../include", dir);
		snprintf(lib, n, "%s/../runtime", dir);
	} else {                                  /* an installed prefix */
		snprintf(inc1, n, "%s/%s", dir, HML__BIN_TO_INCLUDE);
		inc2[0] = 0;
		snprintf(lib, n, "%s/%s", dir, HML__BIN_TO_LIB);
	}
	return 0;
}

/* Translate argv's source `src` into `tmp`/<its name>; 1 when it had
 * directives (*out the new path, malloc'ed), 0 when not, <0 on error. */
static int translate_one(const char *src, const char *tmp, char **out)
{
	char *text = NULL, *txt = NULL, *copy;
	size_t size;
	int rc, count = 0;
	FILE *f;

	if (hml__read_file(src, &text, &size) < 0 || memchr(text, 0, size)) {
		free(text);
		return 0;   /* the compiler reports what it cannot read */
	}
	if (!hml__directive_present(text)) {
		free(text);
		return 0;
	}
	if ((rc = hml__directive_translate(&txt, &count, text, src)) < 0) {
		free(text);
		cmd_error("%s", hml_error_last()->message);
		return rc;
	}
	free(text);
	if (!count)
		return 0;
	copy = strdup(src);
	*out = malloc(strlen(tmp) + strlen(src) + 2);
	if (!copy || !*out) {
		free(copy);
		free(txt);
		return hml__error_oom();
	}
	sprintf(*out, "%s/%s", tmp, basename(copy));
	free(copy);
	if (!(f = fopen(*out, "w")) || fputs(txt, f) < 0 || fclose(f) != 0) {
		cmd_error("cannot write '%s': %s", *out, strerror(errno));
		free(txt);
		return HML_EIO;
	}
	free(txt);
	return 1;
}

static int run(char **args)
{
	pid_t pid = fork();
	int status;

	if (pid < 0) {
		cmd_error("cannot start '%s': %s", args[0], strerror(errno));
		return HML_EXIT_FAILURE;
	}
	if (pid == 0) {
		execvp(args[0], args);
		fprintf(stderr, "hml: error: cannot run '%s': %s\n", args[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return HML_EXIT_FAILURE;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status) == 127 ? HML_EXIT_FAILURE : WEXITSTATUS(status);
}

int cmd_cc(int argc, char **argv)
{
	char inc1[PATH_MAX], inc2[PATH_MAX], lib[PATH_MAX], tmp[] = "/tmp/hml-cc-XXXXXX";
	char **args, **made, *tmpdir = NULL;
	int n = 0, i, links = 1, rc = HML_EXIT_OK, nmade = 0;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		if (argc < 2) {
			cmd_error("usage: hml cc COMPILER [ARGUMENTS...] (see 'hml cc --help')");
			return HML_EXIT_USAGE;
		}
		help();
		return cmd_finish(HML_EXIT_OK);
	}
	if (locate(inc1, inc2, lib, sizeof(inc1)) < 0) {
		cmd_error("cannot find the hml executable's folder (/proc/self/exe)");
		return HML_EXIT_FAILURE;
	}
	args = calloc((size_t)argc * 3 + 12, sizeof(*args));
	made = calloc((size_t)argc, sizeof(*made));
	if (!args || !made) {
		free(args);
		free(made);
		return cmd_fail(hml__error_oom());
	}
	args[n++] = argv[1];
	for (i = 2; i < argc; i++)
		if (!strcmp(argv[i], "-c") || !strcmp(argv[i], "-S") || !strcmp(argv[i], "-E") ||
		    !strcmp(argv[i], "-M") || !strcmp(argv[i], "-MM") || !strcmp(argv[i], "-fsyntax-only"))
			links = 0;
	for (i = 2; i < argc; i++) {
		char *a = argv[i], *t = NULL;
		int r = 0;
		if (takes_value(a) && i + 1 < argc) {
			args[n++] = a;
			args[n++] = argv[++i];
			continue;
		}
		if (is_source(a)) {
			if (!tmpdir && !(tmpdir = mkdtemp(tmp))) {
				cmd_error("cannot create a temporary folder: %s", strerror(errno));
				rc = HML_EXIT_FAILURE;
				goto done;
			}
			if ((r = translate_one(a, tmpdir, &t)) < 0) {
				rc = r == HML_ESYNTAX ? HML_EXIT_INVALID : HML_EXIT_FAILURE;
				goto done;
			}
		}
		if (r == 1) {
			char *copy = strdup(a), *q = malloc(strlen(a) + 16);
			if (!copy || !q) {
				free(copy);
				free(q);
				rc = cmd_fail(hml__error_oom());
				goto done;
			}
			sprintf(q, "-iquote%s", dirname(copy));
			free(copy);
			made[nmade++] = q;
			args[n++] = q;
			made[nmade++] = t;
			args[n++] = t;
		} else {
			args[n++] = a;
		}
	}
	{
		static char iflag1[PATH_MAX + 4], iflag2[PATH_MAX + 4], lflag[PATH_MAX + 4], rpath[PATH_MAX + 16];
		snprintf(iflag1, sizeof(iflag1), "-I%s", inc1);
		args[n++] = iflag1;
		if (inc2[0]) {
			snprintf(iflag2, sizeof(iflag2), "-I%s", inc2);
			args[n++] = iflag2;
		}
		if (links) {
			snprintf(lflag, sizeof(lflag), "-L%s", lib);
			snprintf(rpath, sizeof(rpath), "-Wl,-rpath,%s", lib);
			args[n++] = lflag;
			args[n++] = rpath;
			args[n++] = (char *)"-lhml";
		}
	}
	args[n] = NULL;
	fflush(stdout);
	rc = run(args);
done:
	for (i = 0; i < nmade; i++) {
		if (made[i][0] == '/')
			unlink(made[i]);
		free(made[i]);
	}
	if (tmpdir)
		rmdir(tmpdir);
	free(args);
	free(made);
	return rc;
}
