/*
 * miniweather_mpi - miniWeather (workflows/miniweather/miniweather_physics.c,
 * the same physics) with its domain split in x over MPI ranks: rank r of n
 * owns the columns [r nx/n, (r+1) nx/n) (--nx a multiple of n), and the x
 * halos of every stage are exchanged with the neighbours (MPI_Sendrecv of
 * the two edge columns each way, periodic in x as the serial program is).
 *
 * The region "miniweather" is the serial workflow's, on the rank's part:
 * it advances the rank's state, halos included, --k steps per call, one
 * sample per call per rank:
 *   [0:4, 0:nz+4, 0:nx+4] = ([0:4, 0:nz+4, 0:nx+4])   nx the rank's columns
 * so the serial workflow's model families (a CNN over the whole field)
 * apply, and each rank collects into its own file (HML_DB by the rank rule,
 * hml-runtime(3)). Every rank runs the region in the same mode on every
 * call, and the ranks agree on each call's path (hml_region_set_agree: an
 * MPI_Allreduce): when a guard or a failing model sends one rank to the
 * original code, every rank runs it, with its exchanges, instead of the
 * others waiting for that rank's halos for ever.
 *
 * Quantities of interest, per rank (HML_QOI by the rank rule; hml evaluate
 * reads the ranks' files as one, in rank order): "state" (the rank's final
 * interior state, [4, nz, nx/n]), "mass" and "energy" (the rank's share of
 * the totals after the warm-up and after each region call: [calls + 1]).
 * Mass conservation is checked over the whole domain: the ranks' shares
 * are summed (MPI_Allreduce) and rank 0 prints the relative drift, which
 * must stay below 1e-12.
 *
 *   mpirun -n N miniweather_mpi [--nx NX] [--nz NZ] [--steps T] [--k K]
 *                               [--warm W] [--seed S] [--quiet]
 *
 * Test-only: HML_TEST_MW_DIE_RANK=R and HML_TEST_MW_DIE_CALL=C make rank R
 * kill itself (SIGKILL) at the start of region call C, once rank R has
 * collected the calls before it (a rank killed during collection).
 */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hml/hml.h>

#include "miniweather_physics.h"

/* The halo exchange: the rank's neighbours and its buffers. */
struct halo {
	MPI_Comm comm;
	int left, right;
	size_t n;                          /* NV * h * HS values each way */
	double *send_l, *send_r, *recv_l, *recv_r;
};

static void pack(const struct model *m, const double *s, double *buf, long first)
{
	for (long v = 0, at = 0; v < NV; v++)
		for (long k = 0; k < m->h; k++)
			for (long j = 0; j < HS; j++)
				buf[at++] = Q(s, v, k, first + j);
}

static void unpack(const struct model *m, double *s, const double *buf, long first)
{
	for (long v = 0, at = 0; v < NV; v++)
		for (long k = 0; k < m->h; k++)
			for (long j = 0; j < HS; j++)
				Q(s, v, k, first + j) = buf[at++];
}

/* The serial program's periodic copy, across ranks: the left neighbour's
 * last two interior columns become the left halo, the right neighbour's
 * first two the right halo. */
static void exchange_x(struct model *m, double *s)
{
	struct halo *h = m->payload;

	pack(m, s, h->send_l, HS);
	pack(m, s, h->send_r, m->nx);
	MPI_Sendrecv(h->send_l, (int)h->n, MPI_DOUBLE, h->left, 0, h->recv_r, (int)h->n,
	             MPI_DOUBLE, h->right, 0, h->comm, MPI_STATUS_IGNORE);
	MPI_Sendrecv(h->send_r, (int)h->n, MPI_DOUBLE, h->right, 1, h->recv_l, (int)h->n,
	             MPI_DOUBLE, h->left, 1, h->comm, MPI_STATUS_IGNORE);
	unpack(m, s, h->recv_l, 0);
	unpack(m, s, h->recv_r, m->nx + HS);
}

static int halo_init(struct halo *h, struct model *m, int rank, int size)
{
	h->comm = MPI_COMM_WORLD;
	h->left = (rank + size - 1) % size;
	h->right = (rank + 1) % size;
	h->n = (size_t)NV * (size_t)m->h * HS;
	h->send_l = malloc(4 * h->n * sizeof(double));
	if (!h->send_l)
		return -1;
	h->send_r = h->send_l + h->n;
	h->recv_l = h->send_r + h->n;
	h->recv_r = h->recv_l + h->n;
	m->exchange_x = exchange_x;
	m->payload = h;
	return 0;
}

/* The ranks take one path per region call (hml_region_set_agree): when a
 * guard or a failing model sends one rank to the original code, whose halo
 * exchange the others must join, they all run it. */
static int agree(int local, void *comm)
{
	int all = 1;

	MPI_Allreduce(&local, &all, 1, MPI_INT, MPI_LOR, *(MPI_Comm *)comm);
	return all;
}

/* A failed rank ends the job: the others would wait for it forever. */
static void fail(int rank, const char *what)
{
	fprintf(stderr, "miniweather_mpi: error: rank %d: %s: %s\n", rank, what,
	        hml_error_last()->message);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

/* The rank's quantities of interest: its interior state and its shares. */
static void record(int rank, struct model *m, const double *mass, const double *energy, long n)
{
	int64_t sshape[3] = { NV, m->nz, m->nx }, tshape[1] = { n };
	double *s = malloc(sizeof(double) * NV * (size_t)(m->nx * m->nz));

	if (!s) {
		fprintf(stderr, "miniweather_mpi: error: rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
		return;
	}
	for (long v = 0; v < NV; v++)
		for (long k = 0; k < m->nz; k++)
			memcpy(s + (v * m->nz + k) * m->nx, &Q(m->state, v, k + HS, HS),
			       sizeof(double) * (size_t)m->nx);
	if (hml_qoi_write("state", s, HML_F64, 3, sshape) < 0 ||
	    hml_qoi_write("mass", mass, HML_F64, 1, tshape) < 0 ||
	    hml_qoi_write("energy", energy, HML_F64, 1, tshape) < 0)
		fail(rank, "cannot record the quantity of interest");
	free(s);
}

/* The test-only knob: the call at which this rank kills itself, or -1. */
static long die_at(int rank)
{
	const char *r = getenv("HML_TEST_MW_DIE_RANK"), *c = getenv("HML_TEST_MW_DIE_CALL");

	return r && c && atoi(r) == rank ? atol(c) : -1;
}

/* Rank 0's report over the whole domain: the ranks' shares summed. */
static void report(struct mw *w, int rank, const char *mode)
{
	size_t n = (size_t)w->calls + 1;
	double *mass = malloc(n * sizeof(double)), *energy = malloc(n * sizeof(double));
	double *own_mass = w->mass, *own_energy = w->energy;

	if (!mass || !energy) {
		fprintf(stderr, "miniweather_mpi: error: rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Allreduce(own_mass, mass, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(own_energy, energy, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0) {
		w->mass = mass;
		w->energy = energy;
		mw_report(w, mode);
		w->mass = own_mass;
		w->energy = own_energy;
	}
	free(mass);
	free(energy);
}

int main(int argc, char **argv)
{
	struct mw w;
	struct halo halo = { 0 };
	hml_region *region = NULL;
	hml_symbol sym[2];
	hml_array st;
	int rank, size, rc;
	long c, die;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if ((rc = mw_setup_part(&w, argc, argv, rank, size)) != 0) {
		MPI_Finalize();
		return rc;
	}
	if (halo_init(&halo, &w.m, rank, size) < 0) {
		fprintf(stderr, "miniweather_mpi: error: rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	die = die_at(rank);
	sym[0] = (hml_symbol){ "nz", w.m.nz };
	sym[1] = (hml_symbol){ "nx", w.m.nx };
	st = HML_ARRAY_3D(w.m.state, HML_F64, NV, w.m.h, w.m.w);
	if (hml_region_open(&region, "miniweather", NULL) < 0 ||
	    hml_region_inout(region, "[0:4, 0:nz+4, 0:nx+4] = ([0:4, 0:nz+4, 0:nx+4])",
	                     NULL, &st, 1, sym, 2) < 0 ||
	    hml_region_set_agree(region, agree, &halo.comm) < 0)
		fail(rank, "cannot set up region 'miniweather'");
	for (c = 0; c < w.calls; c++) {
		int run;

		if (c == die) {
			if (hml_region_flush(region) < 0)
				fail(rank, "cannot write collected data");
			raise(SIGKILL);
		}
		if ((run = hml_region_begin(region)) < 0)
			fail(rank, "region 'miniweather' failed");
		if (run)
			for (long s = 0; s < w.o.k; s++)
				mw_step(&w.m);
		if (hml_region_end(region) < 0)
			fail(rank, "region 'miniweather' failed");
		mw_called(&w, c);
	}
	mw_finish(&w);
	record(rank, &w.m, w.mass, w.energy, w.calls + 1);
	report(&w, rank, hml_mode_name(hml_region_mode(region)));
	if (hml_region_flush(region) < 0)
		fail(rank, "cannot write collected data");
	hml_region_free(region);
	free(halo.send_l);
	mw_free(&w);
	MPI_Finalize();
	return 0;
}
