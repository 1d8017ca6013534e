/*
 * lib/store/store_provenance.c - the facts recorded with every record
 * (store_private.h): the command line and its name, the user, the
 * versions of hml and its libraries, and the hashes of the input files
 * (hml__store_provenance, which finds them in a store, is store.c's).
 */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include <jansson.h>

#include "core/beneath.h"
#include "core/error.h"
#include "core/util.h"
#include "hml/version.h"
#include "store/store_private.h"
#include "sys/fsutil.h"

/* Set once by main() before any store is used. */
static json_t *g_command;
static json_t *g_versions;
static char g_command_name[128];

json_t *hml__json_bytes(const char *s)
{
	static const char digits[] = "0123456789abcdef";
	json_t *j;
	char *hex;
	size_t n;

	if (!s)
		return json_null();
	if ((j = json_string(s)) != NULL)
		return j;
	/* Not UTF-8: JSON cannot hold it as a string; keep every byte. */
	n = strlen(s);
	if (!(hex = malloc(2 * n + 1)))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		hex[2 * i] = digits[(unsigned char)s[i] >> 4];
		hex[2 * i + 1] = digits[(unsigned char)s[i] & 15];
	}
	hex[2 * n] = '\0';
	j = json_pack("{s:s}", "hex", hex);
	free(hex);
	return j;
}

void hml__store_set_command(int argc, char **argv)
{
	const char *base;
	int i;

	json_decref(g_command);
	g_command = json_array();
	for (i = 0; g_command && i < argc; i++)
		json_array_append_new(g_command, hml__json_bytes(argv[i]));
	if (argc < 1)
		return;
	/* "hml train" for the lock file: the program's name and its first
	 * argument that is neither an option nor the value of -C. */
	base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	snprintf(g_command_name, sizeof(g_command_name), "%s", base);
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-C") == 0) {
			i++;
			continue;
		}
		if (argv[i][0] == '-')
			continue;
		snprintf(g_command_name, sizeof(g_command_name), "%s %s", base, argv[i]);
		break;
	}
}

void hml__store_set_version(const char *name, const char *version)
{
	if (!name)
		return;
	if (!g_versions && !(g_versions = json_object()))
		return;
	json_object_set_new(g_versions, name, hml__json_bytes(version ? version : "unknown"));
}

/* The command line: as main() set it, else as the kernel has it. */
static json_t *command_json(void)
{
	json_t *a;
	char *buf = NULL;
	size_t len = 0;

	if (g_command)
		return json_deep_copy(g_command);
	if (!(a = json_array()))
		return NULL;
	if (hml__read_file("/proc/self/cmdline", &buf, &len) == 0)
		for (size_t off = 0; off < len; off += strlen(buf + off) + 1)
			json_array_append_new(a, hml__json_bytes(buf + off));
	free(buf);
	return a;
}

const char *hml__store_command_name(void)
{
	static _Thread_local char comm[64];
	char *buf = NULL;

	if (g_command_name[0])
		return g_command_name;
	if (hml__read_file("/proc/self/comm", &buf, NULL) == 0) {
		buf[strcspn(buf, "\n")] = '\0';
		snprintf(comm, sizeof(comm), "%s", buf);
	}
	free(buf);
	return comm[0] ? comm : "unknown";
}

static json_t *user_json(void)
{
	struct passwd pw, *res = NULL;
	char buf[1024];
	uid_t uid = geteuid();

	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res && res->pw_name)
		return hml__json_bytes(res->pw_name);
	snprintf(buf, sizeof(buf), "%ld", (long)uid);
	return json_string(buf);
}

static json_t *versions_json(void)
{
	json_t *v = json_pack("{s:s, s:s, s:s}", "hml", HML_VERSION_STRING,
	                      "hdf5", hml__hdf5_version(), "jansson", JANSSON_VERSION);

	if (v && g_versions)
		json_object_update(v, g_versions);
	return v;
}

/* The provenance object, with the given hashes of experiment-relative files. */
json_t *hml__store_provenance_new(const char *const *rels, char (*hashes)[65], size_t n)
{
	char when[32], host[256], *cwd;
	json_t *p, *sums;

	hml__time_iso(when, sizeof(when));
	hml__hostname(host, sizeof(host));
	cwd = getcwd(NULL, 0);
	p = json_object();
	sums = json_object();
	if (!p || !sums)
		goto oom;
	if (json_object_set_new(p, "time", json_string(when)) ||
	    json_object_set_new(p, "host", hml__json_bytes(host)) ||
	    json_object_set_new(p, "user", user_json()) ||
	    json_object_set_new(p, "command", command_json()) ||
	    json_object_set_new(p, "cwd", cwd ? hml__json_bytes(cwd) : json_null()) ||
	    json_object_set_new(p, "versions", versions_json()))
		goto oom;
	for (size_t i = 0; i < n; i++)
		if (json_object_set_new(sums, rels[i], json_string(hashes[i])))
			goto oom;
	json_object_set_new(p, "sha256", sums);
	free(cwd);
	return p;

oom:
	free(cwd);
	json_decref(p);
	json_decref(sums);
	hml__error_oom();
	return NULL;
}
