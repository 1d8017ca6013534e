/*
 * hml - the command line: collect, train, deploy, evaluate.
 *
 * One table of subcommands; each lives in cmd/<name>.c. Global options
 * (-C/--dir DIR, -q, --json) may come before or after the subcommand name:
 * both places are parsed with cmd/common.c's one global options table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd.h"
#include "core/util.h"
#include "hml/version.h"
#include "store/store.h"
#include "train/train.h"

typedef struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} command;

static const command commands[] = {
	{ "collect",  cmd_collect,  "run a workflow's application and collect its region data" },
	{ "train",    cmd_train,    "train a surrogate model on collected data (libtorch)" },
	{ "import",   cmd_import,   "register a TorchScript model trained elsewhere" },
	{ "deploy",   cmd_deploy,   "choose a model and print the environment that runs it" },
	{ "evaluate", cmd_evaluate, "compare the application with and without the surrogate" },
	{ "search",   cmd_search,   "search architectures and hyper-parameters (BO + ASHA, Pareto front)" },
	{ "show",     cmd_show,     "list the experiment's data sets, models, deployments, evaluations" },
	{ "ls",       cmd_show,     "the same as show" },
	{ "translate", cmd_translate, "show the translation of a source's hml directives" },
	{ "cc",       cmd_cc,       "compile a source with hml directives (a compiler wrapper)" },
	/* Hidden (no summary): the worker processes hml search starts. */
	{ "search-worker", cmd_search_worker, NULL },
	/* Hidden: the child that loads an untrusted model under limits (lib/deploy/vet.h). */
	{ "model-check", cmd_model_check, NULL },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const command *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hml [-C DIR | --dir DIR] [-q] [--json] <command> [options] [args]\n"
		"       hml --version | --help | help <command>\n"
		"\n"
		"Machine-learning surrogates for marked regions of C applications.\n"
		"\n"
		"commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (commands[i].summary)
			fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f,
		"\n"
		"global options:\n"
		"  -C, --dir DIR  experiment directory (default ./hml-experiment, or $HML_EXPERIMENT)\n"
		"  -q, --quiet    no progress bar or informational messages\n"
		"  --json         print results as one JSON document\n"
		"  --version      print the versions of hml and its libraries\n"
		"\n"
		"The life cycle:  hml collect binomial && hml train && hml deploy --best && hml evaluate\n"
		"See hml(1) and hml-<command>(1).\n");
}

static int print_version(void)
{
	const char *torch = hml__torch_version();

	if (g_cmd.json) {
		json_t *d = json_pack("{s:s, s:s, s:s, s:s}",
			"hml", HML_VERSION_STRING, "libtorch", torch,
			"hdf5", hml__hdf5_version(), "jansson", JANSSON_VERSION);
		json_t *list = json_array();
		for (size_t i = 0; i < NCOMMANDS; i++)
			if (commands[i].summary)
				json_array_append_new(list, json_string(commands[i].name));
		json_object_set_new(d, "commands", list);
		cmd_json_print(d);
	} else {
		printf("hml %s\nlibtorch %s\nhdf5 %s\njansson %s\n", HML_VERSION_STRING,
		       torch, hml__hdf5_version(), JANSSON_VERSION);
	}
	return cmd_finish(HML_EXIT_OK);
}

/* `hml help [CMD]`: the overview, or the command's own --help. */
static int help(int argc, char **argv)
{
	const command *c;
	char *args[] = { NULL, (char *)"--help", NULL };

	if (argc < 2) {
		usage(stdout);
		return cmd_finish(HML_EXIT_OK);
	}
	if (!(c = find_command(argv[1]))) {
		cmd_error("unknown command '%s' (see 'hml --help')", argv[1]);
		return HML_EXIT_USAGE;
	}
	args[0] = argv[1];
	return c->fn(2, args);
}

int main(int argc, char **argv)
{
	int want_help = 0, want_version = 0, i, rc;
	const cmd_option leading[] = {
		{ "version", 'V', CMD_OPT_FLAG, &want_version, NULL, "print the versions" },
		{ "help", 'h', CMD_OPT_FLAG, &want_help, NULL, "show this help" },
		{ NULL, 0, 0, NULL, NULL, NULL }
	};
	const cmd_spec spec = { "", "", "", NULL, leading, 0, -1, NULL };
	const command *c;

	g_cmd.dir = getenv("HML_EXPERIMENT");
	if (!g_cmd.dir || !*g_cmd.dir)
		g_cmd.dir = "hml-experiment";
	hml__store_set_command(argc, argv);
	hml__store_set_version("libtorch", hml__torch_version());

	/* Global options before the command name: the same table as after it. */
	if ((rc = cmd_parse_leading(&spec, argc, argv, &i)) != 0)
		return rc > 0 ? cmd_finish(HML_EXIT_OK) : HML_EXIT_USAGE;
	if (want_version)
		return print_version();
	if (want_help) {
		usage(stdout);
		return cmd_finish(HML_EXIT_OK);
	}
	if (i >= argc) {
		usage(stderr);
		return HML_EXIT_USAGE;
	}
	if (strcmp(argv[i], "help") == 0)
		return help(argc - i, argv + i);
	if (strcmp(argv[i], "version") == 0)
		return print_version();
	if (!(c = find_command(argv[i]))) {
		cmd_error("unknown command '%s' (see 'hml --help')", argv[i]);
		return HML_EXIT_USAGE;
	}
	if (cmd_progress_setup() < 0)
		return HML_EXIT_USAGE;
	cmd_signals_install();
	return cmd_exit_status(c->fn(argc - i, argv + i));
}
