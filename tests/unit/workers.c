/*
 * tests/unit/workers.c - worker processes of hml search: a worker gets
 * its input and gives its output through the pipes, its standard error goes
 * to its log, and how it ended is reported (exit status, signal); a remote
 * worker (an MPI rank) is never signalled.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fixtures.h"
#include "search/workers.h"


TEST(echo_worker)
{
	const char *argv[] = { "/bin/cat", NULL };
	hml__worker w;
	json_t *msg = hml__wire_ready(42), *got = NULL;
	char why[64];
	int rc;

	CHECK_OK(hml__worker_spawn(&w, 3, argv, NULL));
	CHECK(w.pid > 0);
	CHECK_EQ_INT(w.index, 3);
	CHECK_EQ_INT(w.trial, -1);
	CHECK_OK(hml__wire_send(w.to, msg));
	while ((rc = hml__wire_recv(&w.from, &got)) == 0)
		;
	CHECK_EQ_INT(rc, 1);
	CHECK(got && json_integer_value(json_object_get(got, "rows")) == 42);
	json_decref(got);
	/* Closing its input ends cat by itself. */
	hml__worker_stop(&w, 0, why, sizeof(why));
	CHECK_STR(why, "exit 0");
	CHECK_EQ_INT(w.pid, 0);
	json_decref(msg);
}

TEST(killed_and_failed_workers)
{
	const char *sleeper[] = { "/bin/sleep", "30", NULL };
	const char *failing[] = { "/bin/sh", "-c", "echo oops >&2; exit 3", NULL };
	char why[64], log[600], text[64] = "";
	hml__worker w;
	json_t *got = NULL;
	FILE *f;

	CHECK_OK(hml__worker_spawn(&w, 0, sleeper, NULL));
	hml__worker_stop(&w, 1, why, sizeof(why));
	CHECK_STR(why, "killed by SIGKILL");

	snprintf(log, sizeof(log), "%s/worker.log", tmpdir);
	CHECK_OK(hml__worker_spawn(&w, 1, failing, log));
	CHECK_FAILS(hml__wire_recv(&w.from, &got), HML_EIO, "closed its pipe");
	hml__worker_stop(&w, 0, why, sizeof(why));
	CHECK_STR(why, "exit 3");
	CHECK((f = fopen(log, "r")) != NULL);
	if (f) {
		CHECK(fgets(text, sizeof(text), f) != NULL);
		fclose(f);
	}
	CHECK_STR(text, "oops\n");

	/* A program that cannot be executed ends with 127. */
	{
		const char *none[] = { "/nonexistent/hml", NULL };

		CHECK_OK(hml__worker_spawn(&w, 2, none, NULL));
		hml__worker_stop(&w, 0, why, sizeof(why));
		CHECK_STR(why, "exit 127");
	}
	/* Stopping a worker that is not running does nothing. */
	hml__worker_stop(&w, 1, why, sizeof(why));
	CHECK_STR(why, "");
}

TEST(remote_worker)
{
	int to[2], from[2];
	hml__worker w;
	char why[64];

	CHECK(pipe(to) == 0 && pipe(from) == 0);
	/* pid 1 stands for rank 1: it must never be signalled. */
	hml__worker_remote(&w, 0, 1, to[1], from[0]);
	CHECK(w.remote && w.pid == 1);
	hml__worker_stop(&w, 1, why, sizeof(why));
	CHECK_STR(why, "(rank 1) ended");
	CHECK_EQ_INT(w.pid, 0);
	close(to[0]);
	close(from[1]);
}

int main(void)
{
	if (tmp_dir_make("workers") < 0)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	RUN(echo_worker);
	RUN(killed_and_failed_workers);
	RUN(remote_worker);
	tmp_dir_remove();
	return check_report();
}
