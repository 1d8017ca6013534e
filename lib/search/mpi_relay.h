/*
 * lib/search/mpi_relay.h - hml search over MPI ranks (internal; built with
 * -DHML_WITH_MPI=ON).
 *
 * Under `mpirun -n N hml search ...` rank 0 coordinates and ranks 1 to N-1
 * are the workers. They speak the JSON lines of lib/search/wire.h, as worker
 * processes do over pipes: in every rank a relay thread moves the bytes
 * between local pipes and MPI messages (tag 1: bytes of the stream; tag 2:
 * the end of the stream), so the coordinator and the worker loops are
 * those of the process mode and the history and records they write are
 * the same. Only the relay thread calls MPI between hml__mpi_init() and
 * hml__mpi_finish() (MPI_THREAD_SERIALIZED).
 *
 * Unlike a worker process, a worker rank cannot be killed or replaced: a
 * rank whose trial runs past --trial-timeout is given up (its trial is
 * recorded as timed out) and the search continues with the others.
 */
#ifndef HML_LIB_MPIRELAY_H
#define HML_LIB_MPIRELAY_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Initialise MPI; *rank and *size of MPI_COMM_WORLD.
 * Errors: HML_ENOTSUPPORTED "hml was built without MPI (-DHML_WITH_MPI=ON)"
 * or when the MPI library lacks MPI_THREAD_SERIALIZED; HML_ERROR.
 */
int hml__mpi_init(int *rank, int *size);

/**
 * Rank 0: for each worker rank r = 1 .. size-1 a pipe pair, to[r-1] (the
 * coordinator writes the worker's input) and from[r-1] (it reads the
 * worker's output), and the relay thread started. Closing to[r-1] ends
 * rank r's input; from[r-1] reaches its end when rank r's worker ended.
 * Other ranks: *in (the worker reads) and *out (the worker writes; close
 * it when done). Errors: HML_EIO, HML_ENOMEM.
 */
int hml__mpi_relay_start(int rank, int size, int *to, int *from, int *in, int *out);

/** Wait for the relay thread (every stream ended) and finalise MPI. */
void hml__mpi_finish(void);

#ifdef __cplusplus
}
#endif
#endif
