/*
 * hml model-check - load an untrusted TorchScript file under limits
 * (hidden command; lib/deploy/vet.h says who starts it and why).
 *
 * The libtorch backend is loaded first; then the address space is limited
 * to what the process holds plus --memory MiB, and the model is loaded
 * through the runtime's own loader (the archive check, then libtorch). One
 * JSON object on standard output says how it went: {"ok": true}, or
 * {"ok": false, "code": HML_E*, "message": "..."}. Exit 0 when it loaded,
 * 1 when not; whatever libtorch does to this process (a signal, a limit),
 * hml, the parent, reports. Not meant to be run by hand.
 *
 * Test hook (hml-import(1)): HML_MODEL_CHECK_TEST_HANG=1 makes it ignore
 * SIGTERM and SIGINT and sleep instead of loading, as libtorch did on a
 * file of gigabytes of newlines.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cmd.h"
#include "deploy/vet.h"
#include "loader/loader.h"

static int64_t memory_mib = 0;

static const cmd_option options[] = {
	{ "memory", 0, CMD_OPT_INT, &memory_mib, "MIB", "address space allowed beyond libtorch's" },
	{ NULL, 0, 0, NULL, NULL, NULL }
};

static const cmd_range ranges[] = {
	{ "memory", 1, (int64_t)1 << 40, 0 }, { NULL, 0, 0, 0 }
};

static const cmd_spec spec = {
	"model-check", "[--memory MIB] FILE.pt",
	"load a TorchScript file under limits (started by hml, not by hand)",
	"Loads FILE.pt through the runtime's loader with the address space limited,\n"
	"and prints one JSON object saying whether it loaded (lib/deploy/vet.h).",
	options, 1, 1, ranges
};

/* The address space this process holds now, in bytes (0: unknown). */
static unsigned long long address_space(void)
{
	unsigned long long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%llu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return pages * (unsigned long long)sysconf(_SC_PAGESIZE);
}

static int limit_memory(void)
{
	unsigned long long now = address_space();
	struct rlimit r;

	if (memory_mib <= 0 || now == 0)
		return 0;
	r.rlim_cur = r.rlim_max = now + ((unsigned long long)memory_mib << 20);
	if (setrlimit(RLIMIT_AS, &r) != 0)
		return hml__error_set(HML_EIO, "cannot limit the model check's memory");
	return 0;
}

static void report(int rc, const char *path)
{
	char msg[1200], *text;
	const char *m = hml_error_last()->message;

	if (rc != 0 && (rc == HML_ENOMEM || strstr(m, "allocate memory") || strstr(m, "bad_alloc")))
		snprintf(msg, sizeof(msg), "cannot open model '%s': loading it takes more than "
		         "%lld MiB beyond libtorch's own (%s)", path, (long long)memory_mib,
		         HML__ENV_MODEL_LOAD_MEMORY);
	else
		snprintf(msg, sizeof(msg), "%s", m);
	if ((text = hml__vet_report_write(rc, msg)))
		fputs(text, stdout);
	fflush(stdout);
	free(text);
}

int cmd_model_check(int argc, char **argv)
{
	hml__model *m = NULL;
	const char *path, *hang = getenv("HML_MODEL_CHECK_TEST_HANG");
	int first, rc;

	if ((rc = cmd_parse(&spec, argc, argv, &first)) != 0)
		return rc > 0 ? HML_EXIT_OK : HML_EXIT_USAGE;
	path = argv[first];
	/* hml's handlers would only note a signal while libtorch goes on:
	 * here a signal ends the process, as the parent means it to. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	if (hang && strcmp(hang, "1") == 0) {
		signal(SIGTERM, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		for (;;)
			pause();
	}
	if (hml__cmodel_sniff(path))
		rc = hml__error_set(HML_EINVALID, "cannot open model '%s': it is a shared object, "
		                    "not a TorchScript file", path);
	else if ((rc = hml__model_torch_prepare()) == 0 && (rc = limit_memory()) == 0)
		rc = hml__model_load(&m, path, 1);
	hml__model_free(m);
	report(rc, path);
	return rc == 0 ? HML_EXIT_OK : HML_EXIT_FAILURE;
}
