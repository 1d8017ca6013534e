/*
 * cmd/common.c - option parsing, help, messages, exit codes, JSON output,
 * the progress bar and interrupt handling shared by all subcommands.
 */
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "core/envname.h"
#include "core/util.h"
#include "deploy/vet.h"
#include "search/duration.h"
#include "sys/interrupt.h"

cmd_globals g_cmd = { "hml-experiment", 0, 0 };
volatile sig_atomic_t cmd_interrupted;

static void on_signal(int sig)
{
	cmd_interrupted = 1;
	hml__interrupt(sig);
}

void cmd_signals_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int cmd_exit_status(int code)
{
	int sig = hml__interrupt_signal();

	return code == HML_EXIT_INTERRUPTED && sig > 0 ? 128 + sig : code;
}

/* --- messages ------------------------------------------------------------ */

static void vmessage(const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "hml: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cmd_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("error: ", fmt, ap);
	va_end(ap);
}

void cmd_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("warning: ", fmt, ap);
	va_end(ap);
}

void cmd_info(const char *fmt, ...)
{
	va_list ap;

	if (g_cmd.quiet)
		return;
	va_start(ap, fmt);
	vmessage("", fmt, ap);
	va_end(ap);
}

int cmd_exit_code(int err)
{
	switch (err) {
	case HML_OK:
		return HML_EXIT_OK;
	case HML_EINVALID: case HML_ESYNTAX: case HML_ESHAPE: case HML_ENOTFOUND:
	case HML_ERANGE: case HML_ENOTSUPPORTED:
		return HML_EXIT_INVALID;
	default:
		return HML_EXIT_FAILURE;
	}
}

int cmd_model_vet(const char *path)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	/* A fresh exec of this very executable, not a fork of a process that
	 * may have loaded libtorch already; by its real path, where it finds
	 * its plugins. */
	if (n <= 0 || n >= (ssize_t)sizeof(exe) - 1)
		return hml__error_set(HML_EIO, "cannot check model '%s': cannot find the hml "
		                      "executable", path);
	exe[n] = 0;
	return hml__vet_model(exe, path);
}

int cmd_fail(int err)
{
	const hml_error *e = hml_error_last();

	cmd_error("%s", e->message[0] ? e->message : hml_strerror(err));
	return cmd_interrupted ? HML_EXIT_INTERRUPTED : cmd_exit_code(err);
}

void cmd_json_print(json_t *doc)
{
	json_t *out = json_object();

	json_object_set_new(out, "schema_version", json_integer(1));
	json_object_update(out, doc);
	json_decref(doc);
	json_dumpf(out, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
	fputc('\n', stdout);
	json_decref(out);
}

void cmd_print_shell_word(const char *w, int quote)
{
	if (!quote && *w && strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                              "0123456789_-+=:,./") == strlen(w)) {
		fputs(w, stdout);
		return;
	}
	putchar('\'');
	for (; *w; w++)
		if (*w == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*w);
	putchar('\'');
}

int cmd_finish(int code)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cmd_error("cannot write the output: %s", strerror(errno));
		return code == HML_EXIT_OK ? HML_EXIT_FAILURE : code;
	}
	return code;
}

/* --- options ------------------------------------------------------------- */

static const cmd_option global_options[] = {
	{ "json", 0, CMD_OPT_FLAG, &g_cmd.json, NULL, "print the result as one JSON document" },
	{ "quiet", 'q', CMD_OPT_FLAG, &g_cmd.quiet, NULL, "no progress bar or informational messages" },
	{ "dir", 'C', CMD_OPT_STRING, &g_cmd.dir, "DIR", "experiment directory (default ./hml-experiment)" },
	{ "help", 'h', CMD_OPT_FLAG, NULL, NULL, "show this help" },
	{ NULL, 0, 0, NULL, NULL, NULL }
};

static void print_options(const cmd_option *opts, FILE *f)
{
	for (const cmd_option *o = opts; o && o->name; o++) {
		char left[64];
		int n;

		if (o->short_name)
			n = snprintf(left, sizeof(left), "-%c, --%s", o->short_name, o->name);
		else
			n = snprintf(left, sizeof(left), "    --%s", o->name);
		if (o->arg && n > 0 && (size_t)n < sizeof(left))
			snprintf(left + n, sizeof(left) - (size_t)n, " %s", o->arg);
		fprintf(f, "  %-26s %s\n", left, o->help);
	}
}

void cmd_print_help(const cmd_spec *spec, FILE *f)
{
	fprintf(f, "usage: hml %s %s\n\n%s.\n", spec->name, spec->synopsis, spec->summary);
	if (spec->description)
		fprintf(f, "\n%s\n", spec->description);
	if (spec->options && spec->options->name) {
		fprintf(f, "\noptions:\n");
		print_options(spec->options, f);
	}
	fprintf(f, "\nglobal options:\n");
	print_options(global_options, f);
	fprintf(f, "\nSee hml-%s(1).\n", spec->name);
}

static const cmd_option *find_long(const cmd_option *opts, const char *name, size_t len)
{
	for (const cmd_option *o = opts; o && o->name; o++)
		if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
			return o;
	return NULL;
}

static const cmd_option *find_short(const cmd_option *opts, char c)
{
	for (const cmd_option *o = opts; o && o->name; o++)
		if (o->short_name == c)
			return o;
	return NULL;
}

/* "train: " before a command's messages; nothing before hml's own. */
static const char *who(const cmd_spec *spec, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s", spec->name, spec->name[0] ? ": " : "");
	return buf;
}

/* "hml train --help" or "hml --help". */
static const char *help_ref(const cmd_spec *spec, char *buf, size_t size)
{
	snprintf(buf, size, "hml%s%s --help", spec->name[0] ? " " : "", spec->name);
	return buf;
}

/* The range of option o in spec, or NULL. */
static const cmd_range *find_range(const cmd_spec *spec, const cmd_option *o)
{
	for (const cmd_range *r = spec->ranges; r && r->name; r++)
		if (strcmp(r->name, o->name) == 0)
			return r;
	return NULL;
}

/* A bound as the option's kind writes it. */
static const char *bound_text(char *buf, size_t size, const cmd_option *o, long double b)
{
	if (o->kind == CMD_OPT_INT)
		snprintf(buf, size, "%lld", (long long)b);
	else
		snprintf(buf, size, "%.15Lg", b);
	return buf;
}

/* 0 when the value x given to numeric option o (as text v) is within its
 * range, else -1 after a usage error: "search: option '--workers' must be
 * from 1 to 64, not 0". */
static int check_range(const cmd_spec *spec, const cmd_option *o, long double x, const char *v)
{
	const cmd_range *r = find_range(spec, o);
	char w[64], lo[64], hi[64];

	if (!r || ((r->above_min ? x > r->min : x >= r->min) && x <= r->max))
		return 0;
	bound_text(lo, sizeof(lo), o, r->min);
	bound_text(hi, sizeof(hi), o, r->max);
	if (isinf(r->max))
		cmd_error("%soption '--%s' must be %s %s, not %s", who(spec, w, sizeof(w)), o->name,
		          r->above_min ? "more than" : "at least", lo, v);
	else if (r->above_min)
		cmd_error("%soption '--%s' must be more than %s and at most %s, not %s",
		          who(spec, w, sizeof(w)), o->name, lo, hi, v);
	else
		cmd_error("%soption '--%s' must be from %s to %s, not %s", who(spec, w, sizeof(w)),
		          o->name, lo, hi, v);
	return -1;
}

static int set_value(const cmd_spec *spec, const cmd_option *o, const char *v)
{
	char w[64];

	switch (o->kind) {
	case CMD_OPT_FLAG:
		if (o->value)
			*(int *)o->value = 1;
		return 0;
	case CMD_OPT_STRING:
		*(const char **)o->value = v;
		return 0;
	case CMD_OPT_INT:
		if (hml__parse_i64(v, (int64_t *)o->value) == 0)
			return check_range(spec, o, (long double)*(int64_t *)o->value, v);
		cmd_error("%soption '--%s' needs an integer, not '%s'", who(spec, w, sizeof(w)),
		          o->name, v);
		return -1;
	case CMD_OPT_DOUBLE:
		if (hml__parse_double(v, (double *)o->value) == 0 &&
		    isfinite(*(double *)o->value))
			return check_range(spec, o, (long double)*(double *)o->value, v);
		cmd_error("%soption '--%s' needs a number, not '%s'", who(spec, w, sizeof(w)),
		          o->name, v);
		return -1;
	case CMD_OPT_LIST: {
		cmd_list *l = o->value;
		const char **items = realloc(l->items, (size_t)(l->n + 1) * sizeof(*items));

		if (!items) {
			cmd_error("out of memory");
			return -1;
		}
		items[l->n++] = v;
		l->items = items;
		return 0;
	}
	}
	return -1;
}

/*
 * Parse the option at argv[*i] (an argument starting with '-', not "--")
 * against spec->options, then the global options; a value may be taken
 * from argv[*i + 1], advancing *i. Returns 0, 1 (--help printed) or -1
 * (a usage error was printed).
 */
static int parse_option(const cmd_spec *spec, int argc, char **argv, int *i)
{
	const char *a = argv[*i], *val = NULL;
	const cmd_option *o;
	char shortbuf[3] = "-?", w[64], ref[80];

	if (a[1] == '-') {
		const char *name = a + 2, *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);

		if (!(o = find_long(spec->options, name, len)))
			o = find_long(global_options, name, len);
		if (!o) {
			cmd_error("%sunknown option '--%.*s' (see '%s')", who(spec, w, sizeof(w)),
			          (int)len, name, help_ref(spec, ref, sizeof(ref)));
			return -1;
		}
		if (eq) {
			if (o->kind == CMD_OPT_FLAG) {
				cmd_error("%soption '--%s' takes no value", who(spec, w, sizeof(w)),
				          o->name);
				return -1;
			}
			val = eq + 1;
		}
	} else {
		shortbuf[1] = a[1];
		if (!(o = find_short(spec->options, a[1])))
			o = find_short(global_options, a[1]);
		if (!o) {
			cmd_error("%sunknown option '%s' (see '%s')", who(spec, w, sizeof(w)), a,
			          help_ref(spec, ref, sizeof(ref)));
			return -1;
		}
		if (a[2] != '\0') {
			if (o->kind == CMD_OPT_FLAG) {
				cmd_error("%soption '%s' takes no value", who(spec, w, sizeof(w)),
				          shortbuf);
				return -1;
			}
			val = a + 2;
		}
	}
	if (o->kind == CMD_OPT_FLAG && o->value == NULL) { /* --help */
		cmd_print_help(spec, stdout);
		return 1;
	}
	if (o->kind != CMD_OPT_FLAG && !val) {
		if (*i + 1 >= argc) {
			cmd_error("%soption '--%s' needs a value", who(spec, w, sizeof(w)), o->name);
			return -1;
		}
		val = argv[++*i];
	}
	return set_value(spec, o, val);
}

int cmd_parse(const cmd_spec *spec, int argc, char **argv, int *first)
{
	char **pos = malloc((size_t)argc * sizeof(*pos));
	int npos = 0, i, only_pos = 0, rc = 0;

	if (!pos) {
		cmd_error("out of memory");
		return -1;
	}
	for (i = 1; i < argc && rc == 0; i++) {
		char *a = argv[i];

		if (only_pos || a[0] != '-' || a[1] == '\0') {
			pos[npos++] = a;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			only_pos = 1;
			continue;
		}
		rc = parse_option(spec, argc, argv, &i);
	}
	if (rc == 0 && (npos < spec->min_args ||
	                (spec->max_args >= 0 && npos > spec->max_args))) {
		if (npos < spec->min_args)
			cmd_error("%s: missing argument (usage: hml %s %s)", spec->name,
			          spec->name, spec->synopsis);
		else
			cmd_error("%s: unexpected argument '%s' (usage: hml %s %s)", spec->name,
			          pos[spec->max_args], spec->name, spec->synopsis);
		rc = -1;
	}
	if (rc == 0) {
		/* Positionals move to the end, in order. */
		int k = argc - npos;

		for (int j = 0; j < npos; j++)
			argv[k + j] = pos[j];
		*first = k;
	}
	free(pos);
	if (rc == 1)
		fflush(stdout);
	return rc;
}

int cmd_parse_leading(const cmd_spec *spec, int argc, char **argv, int *next)
{
	int i, rc = 0;

	for (i = 1; i < argc && rc == 0; i++) {
		const char *a = argv[i];

		if (a[0] != '-' || a[1] == '\0')
			break;
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		rc = parse_option(spec, argc, argv, &i);
	}
	*next = i;
	if (rc == 1)
		fflush(stdout);
	return rc;
}

/* --- training's memory ------------------------------------------------------ */

void cmd_keep_heap(void)
{
	if (getenv("GLIBC_TUNABLES"))   /* the user's own malloc settings */
		return;
	mallopt(M_MMAP_MAX, 0);
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

/* --- progress ------------------------------------------------------------ */

struct cmd_progress {
	char label[48];
	double total;
	double last_draw;
	int drawn;
	int lines;      /* no terminal: a line every `every` seconds */
	double start;
};

/* HML_PROGRESS_SECONDS: seconds between two progress lines off a terminal. */
static double progress_every = 60.0;

int cmd_progress_setup(void)
{
	const char *v = getenv(HML__ENV_PROGRESS_SECONDS);
	double s;

	if (!v || !*v)
		return 0;
	if (hml__parse_double(v, &s) < 0 || !(s >= 0.0) || !isfinite(s)) {
		cmd_error("invalid %s '%s': a number of seconds >= 0 (0: no progress lines)",
		          HML__ENV_PROGRESS_SECONDS, v);
		return -1;
	}
	progress_every = s;
	return 0;
}

cmd_progress *cmd_progress_start(const char *label, double total, int lines)
{
	int terminal = isatty(STDERR_FILENO);
	cmd_progress *p;

	if (g_cmd.quiet || (!terminal && (!lines || progress_every <= 0.0)))
		return NULL;
	if (!(p = calloc(1, sizeof(*p))))
		return NULL;
	snprintf(p->label, sizeof(p->label), "%s", label);
	p->total = total > 0 ? total : 1;
	p->lines = !terminal;
	p->start = p->last_draw = hml__now();
	return p;
}

/* Off a terminal: one line when `every` seconds have passed since the last
 * (or the start), with the time left at the pace so far. */
static void progress_line(cmd_progress *p, double done, const char *detail, double now)
{
	char elapsed[16], left[16], eta[40] = "";

	if (now - p->last_draw < progress_every || done >= p->total)
		return;
	p->last_draw = now;
	hml__search_duration_format(elapsed, sizeof(elapsed), now - p->start);
	if (done > 0) {
		hml__search_duration_format(left, sizeof(left),
		                            (now - p->start) / done * (p->total - done));
		snprintf(eta, sizeof(eta), ", about %s left", left);
	}
	cmd_info("%s: %.0f/%.0f (%.0f%%)%s%s, %s elapsed%s", p->label, done, p->total,
	         100.0 * done / p->total, detail && *detail ? ", " : "", detail ? detail : "",
	         elapsed, eta);
}

void cmd_progress_update(cmd_progress *p, double done, const char *detail)
{
	enum { WIDTH = 30 };
	char bar[WIDTH + 1];
	double now, frac;
	int fill;

	if (!p)
		return;
	now = hml__now();
	if (p->lines) {
		progress_line(p, done, detail, now);
		return;
	}
	if (p->drawn && now - p->last_draw < 0.1 && done < p->total)
		return;
	p->last_draw = now;
	p->drawn = 1;
	frac = done / p->total;
	frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
	fill = (int)(frac * WIDTH + 0.5);
	for (int i = 0; i < WIDTH; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[WIDTH] = '\0';
	fprintf(stderr, "\r\033[K%s [%s] %3.0f%% %s", p->label, bar, frac * 100,
	        detail ? detail : "");
	fflush(stderr);
}

void cmd_progress_end(cmd_progress *p)
{
	if (!p)
		return;
	if (p->drawn && !p->lines)
		fputs("\r\033[K", stderr);
	fflush(stderr);
	free(p);
}

int cmd_env_threads(const char *cmd, int64_t *out)
{
	const char *v = getenv(HML__ENV_THREADS);
	int64_t n;

	if (!v || !*v)
		return 0;
	if (hml__parse_i64(v, &n) < 0 || n < 0 || n > hml__threads_max()) {
		cmd_error("%s: invalid %s '%s': expected an integer from 0 to %d (%d per online core)",
		          cmd, HML__ENV_THREADS, v, hml__threads_max(), HML__THREADS_PER_CORE);
		return -1;
	}
	*out = n;
	return 0;
}
