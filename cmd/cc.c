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

/* `s` as make writes a file name in a dependency rule. */
static char *make_escaped(const char *s)
{
	char *e = malloc(strlen(s) * 2 + 1), *q = e;

	if (!e)
		return NULL;
	for (; *s; s++) {
		if (*s == ' ' || *s == '#' || *s == '\t')
			*q++ = '\\';
		else if (*s == '$')
			*q++ = '$';
		*q++ = *s;
	}
	*q = 0;
	return e;
}

/* The dependency file -MD or -MMD made for the source `src` without -MF:
 * the object's name `out` (-o with -c), else the source's base name, with
 * .d for its suffix. */
static char *dep_file(const char *src, const char *out)
{
	const char *from = out ? out : src, *slash, *dot;
	char *d;
	size_t n;

	slash = strrchr(from, '/');
	if (!out && slash)
		from = slash + 1;
	slash = strrchr(from, '/');
	dot = strrchr(from, '.');
	n = dot && (!slash || dot > slash) ? (size_t)(dot - from) : strlen(from);
	if ((d = malloc(n + 3)))
		snprintf(d, n + 3, "%.*s.d", (int)n, from);
	return d;
}

/* In the dependency file `dep`, the translated source `tmp` becomes the
 * user's `src` (make does not see the temporary folder). */
static int fix_deps(const char *dep, const char *tmp, const char *src)
{
	char *text = NULL, *et = make_escaped(tmp), *es = make_escaped(src), *p, *at;
	size_t size, nt;
	int rc = 0;
	FILE *f;

	if (!et || !es || hml__read_file(dep, &text, &size) < 0 || !(f = fopen(dep, "w"))) {
		rc = access(dep, F_OK) == 0 ? -1 : 0;   /* none written: nothing to fix */
		goto done;
	}
	nt = strlen(et);
	for (p = text; (at = strstr(p, et)); p = at + nt) {
		fwrite(p, 1, (size_t)(at - p), f);
		fputs(es, f);
	}
	fputs(p, f);
	if (fclose(f) != 0)
		rc = -1;
done:
	if (rc < 0)
		cmd_error("cannot rewrite the dependency file '%s'", dep);
	free(text);
	free(et);
	free(es);
	return rc;
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
	char **args, **made, *tmpdir = NULL, *stdout_deps = NULL;
	const char **srcs, *mf = NULL, *out = NULL;
	int n = 0, i, links = 1, rc = HML_EXIT_OK, nmade = 0, nsrc = 0, md = 0, m = 0;

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
	made = calloc((size_t)argc * 2 + 2, sizeof(*made));
	srcs = calloc((size_t)argc, sizeof(*srcs));
	if (!args || !made || !srcs) {
		free(args);
		free(made);
		free(srcs);
		return cmd_fail(hml__error_oom());
	}
	args[n++] = argv[1];
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "-c") || !strcmp(argv[i], "-S") || !strcmp(argv[i], "-E") ||
		    !strcmp(argv[i], "-M") || !strcmp(argv[i], "-MM") || !strcmp(argv[i], "-fsyntax-only"))
			links = 0;
		md |= !strcmp(argv[i], "-MD") || !strcmp(argv[i], "-MMD");
		m |= !strcmp(argv[i], "-M") || !strcmp(argv[i], "-MM");
		if (i + 1 < argc && (!strcmp(argv[i], "-MF") || !strcmp(argv[i], "-o")))
			*(argv[i][1] == 'o' ? &out : &mf) = argv[i + 1];
		else if (!strncmp(argv[i], "-MF", 3) && argv[i][3])
			mf = argv[i] + 3;
		else if (!strncmp(argv[i], "-o", 2) && argv[i][2])
			out = argv[i] + 2;
	}
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
			srcs[nsrc++] = a;
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
	if (nsrc && m && !mf && !out) {   /* -M to standard output: through a file */
		if (!(stdout_deps = malloc(strlen(tmpdir) + 16))) {
			rc = cmd_fail(hml__error_oom());
			goto done;
		}
		sprintf(stdout_deps, "%s/deps.d", tmpdir);
		args[n++] = (char *)"-MF";
		args[n++] = stdout_deps;
		mf = stdout_deps;
	}
	args[n] = NULL;
	fflush(stdout);
	rc = run(args);
	/* the dependency files name the user's sources, not the temporary ones */
	for (i = 0; rc == HML_EXIT_OK && (md || m) && i < nsrc; i++) {
		/* -MF's file; -M's output (-o); -MD's file */
		const char *exact = mf ? mf : m && out ? out : NULL;
		char *dep = exact ? strdup(exact) : dep_file(srcs[i], links ? NULL : out);
		if (!dep || fix_deps(dep, made[2 * i + 1], srcs[i]) < 0)
			rc = HML_EXIT_FAILURE;
		free(dep);
	}
	if (stdout_deps) {
		char *text = NULL;
		size_t size;
		if (rc == HML_EXIT_OK && hml__read_file(stdout_deps, &text, &size) == 0)
			fwrite(text, 1, size, stdout);
		free(text);
		unlink(stdout_deps);
		free(stdout_deps);
	}
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
	free(srcs);
	return rc;
}
