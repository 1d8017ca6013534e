/*
 * libFuzzer target: the TorchScript archive check (runtime/loader/archive.c)
 * that every model file passes before libtorch reads it. The input is
 * written to a file and checked twice: against the documented limits and
 * against small ones (a few KiB of code, shallow nesting), so that both
 * the zip structure and the code scanner's limits are reached by short
 * inputs. A refusal must be HML_EMODEL (or HML_ENOMEM) with a message that
 * names the file; anything else, a crash or an inflate past a limit is a
 * defect.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "fuzz_files.h"
#include "loader/archive.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int fd, const char *path, const hml__archive_limits *lim)
{
	int rc = hml__archive_check_with(fd, path, lim);

	if (rc == 0)
		return;
	if (rc != HML_EMODEL && rc != HML_ENOMEM)
		abort();
	if (rc == HML_EMODEL && !strstr(hml_error_last()->message, path))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const hml__archive_limits small = { 64, 1 << 20, 4 << 20, 1 << 16, 4096, 8192,
	                                           256, 8, 8, 16 };
	const char *path = fuzz_write("model.pt", data, size);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		abort();
	check(fd, path, &hml__archive_default_limits);
	check(fd, path, &small);
	close(fd);
	return 0;
}
