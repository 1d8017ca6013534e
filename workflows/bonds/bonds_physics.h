/*
 * bonds_physics.h - the bonds pricer without hml: what bonds.c (its
 * directive form, built by hml cc) and bonds_api.c (the same program
 * written against the C API) share, so that the physics is written once.
 *
 * A run owns its arrays: bonds_setup() allocates them, bonds_free() frees
 * them.
 */
#ifndef BONDS_PHYSICS_H
#define BONDS_PHYSICS_H

#include <stdint.h>

#define NDATES 9                /* issue, maturity, today: y, m, d each */

struct bonds {
	long bonds, batch;      /* bonds, bonds per region call */
	unsigned long seed;
	int check, quiet;
	double *rate;           /* coupon rate of each bond */
	int32_t (*dates)[NDATES];
	double (*out)[4];       /* dirty, accrued, clean, yield of each bond */
	double *dirty;          /* bonds_finish(): every dirty price */
	double sum, t0, t1;     /* sum of dirty prices; when pricing started, ended */
	long failed;            /* bonds_finish(): bonds that fail --check */
};

/* Parses the arguments (prints usage and exits 0 for --help), allocates
 * the arrays and draws the bonds. 0, or the exit status (2 for a bad
 * argument, 1 out of memory) after a one-line error on stderr. */
int bonds_setup(struct bonds *b, int argc, char **argv);
/* The region's original code: one bond in, (dirty, accrued, clean, yield) out. */
void bonds_price(double rate, const int32_t *dates, double *out);
/* After pricing: the dirty prices, their sum and, with --check, the check
 * of every bond (the first failures on stderr). */
void bonds_finish(struct bonds *b);
/* The summary on stdout (unless --quiet); mode names the hml mode. Returns
 * the exit status: 1 when --check found a failure. */
int bonds_report(const struct bonds *b, const char *mode);
void bonds_free(struct bonds *b);

#endif
