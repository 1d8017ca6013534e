/*
 * lib/search/mpi_relay.c - pipes <-> MPI messages for hml search over ranks
 * (see mpi_relay.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "core/error.h"
#include "search/mpi_relay.h"

enum { TAG_BYTES = 1, TAG_END = 2, CHUNK = 65536 };

/* One stream pair with a peer rank: what the relay reads locally and
 * sends (rd), and where it writes what it receives (wr). */
typedef struct peer {
	int rank;
	int rd, wr;        /* -1 once ended */
} peer;

static struct {
	peer *p;
	int n;
	pthread_t thread;
	int running;
} relay;

int hml__mpi_init(int *rank, int *size)
{
	int provided = 0;

	if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
		return hml__error_set(HML_ERROR, "MPI_Init_thread failed");
	if (provided < MPI_THREAD_SERIALIZED) {
		MPI_Finalize();
		return hml__error_set(HML_ENOTSUPPORTED, "the MPI library does not allow MPI calls "
		                      "from a second thread (MPI_THREAD_SERIALIZED)");
	}
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
	return 0;
}

static void write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;   /* the reader is gone: what it would have read does not matter */
		buf += n;
		len -= (size_t)n;
	}
}

static peer *peer_of(int rank)
{
	for (int i = 0; i < relay.n; i++)
		if (relay.p[i].rank == rank)
			return &relay.p[i];
	return NULL;
}

/* Local bytes out to the peers: 1 when something moved. */
static int pump_out(char *buf)
{
	struct pollfd pf[256];
	int n = relay.n < 256 ? relay.n : 256, moved = 0;

	for (int i = 0; i < n; i++)
		pf[i] = (struct pollfd){ relay.p[i].rd, POLLIN, 0 };
	if (poll(pf, (nfds_t)n, 1) <= 0)
		return 0;
	for (int i = 0; i < n; i++) {
		ssize_t got;

		if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		got = read(pf[i].fd, buf, CHUNK);
		if (got < 0 && errno == EINTR)
			continue;
		if (got > 0) {
			MPI_Send(buf, (int)got, MPI_CHAR, relay.p[i].rank, TAG_BYTES, MPI_COMM_WORLD);
		} else {
			MPI_Send(buf, 0, MPI_CHAR, relay.p[i].rank, TAG_END, MPI_COMM_WORLD);
			close(relay.p[i].rd);
			relay.p[i].rd = -1;
		}
		moved = 1;
	}
	return moved;
}

/* Messages from the peers into the local pipes. */
static void pump_in(char *buf)
{
	int flag = 1;

	while (flag) {
		MPI_Status st;
		peer *p;
		int count = 0;

		MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
		if (!flag)
			return;
		MPI_Get_count(&st, MPI_CHAR, &count);
		MPI_Recv(buf, count, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
		         MPI_STATUS_IGNORE);
		if (!(p = peer_of(st.MPI_SOURCE)) || p->wr < 0)
			continue;
		if (st.MPI_TAG == TAG_BYTES) {
			write_all(p->wr, buf, (size_t)count);
		} else {
			close(p->wr);
			p->wr = -1;
		}
	}
}

static int all_ended(void)
{
	for (int i = 0; i < relay.n; i++)
		if (relay.p[i].rd >= 0 || relay.p[i].wr >= 0)
			return 0;
	return 1;
}

static void *relay_main(void *arg)
{
	char *buf = malloc(CHUNK);

	(void)arg;
	while (buf && !all_ended()) {
		pump_out(buf);
		pump_in(buf);
	}
	free(buf);
	return NULL;
}

/* A pipe whose read end is *r and write end *w (close-on-exec). */
static int make_pipe(int *r, int *w)
{
	int fd[2];

	if (pipe(fd) < 0)
		return hml__error_set(HML_EIO, "cannot make a pipe: %s", strerror(errno));
	fcntl(fd[0], F_SETFD, FD_CLOEXEC);
	fcntl(fd[1], F_SETFD, FD_CLOEXEC);
	*r = fd[0];
	*w = fd[1];
	return 0;
}

int hml__mpi_relay_start(int rank, int size, int *to, int *from, int *in, int *out)
{
	int rc;

	relay.n = rank == 0 ? size - 1 : 1;
	if (!(relay.p = calloc((size_t)(relay.n > 0 ? relay.n : 1), sizeof(*relay.p))))
		return hml__error_oom();
	for (int i = 0; i < relay.n; i++) {
		peer *p = &relay.p[i];

		p->rank = rank == 0 ? i + 1 : 0;
		/* rank 0: coordinator -> to[i] -> p->rd -> MPI; MPI -> p->wr -> from[i] -> coordinator.
		 * rank r: worker -> *out -> p->rd -> MPI; MPI -> p->wr -> *in -> worker. */
		if ((rc = make_pipe(&p->rd, rank == 0 ? &to[i] : out)) < 0 ||
		    (rc = make_pipe(rank == 0 ? &from[i] : in, &p->wr)) < 0)
			return rc;
	}
	if (pthread_create(&relay.thread, NULL, relay_main, NULL) != 0)
		return hml__error_set(HML_ERROR, "cannot start the MPI relay thread");
	relay.running = 1;
	return 0;
}

void hml__mpi_finish(void)
{
	if (relay.running)
		pthread_join(relay.thread, NULL);
	relay.running = 0;
	free(relay.p);
	relay.p = NULL;
	MPI_Finalize();
}
