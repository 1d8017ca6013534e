/*
 * particlefilter_physics.h - the particle filter without hml: what
 * particlefilter.c (its directive form, built by hml cc) and
 * particlefilter_api.c (the same program written against the C API)
 * share, so that the physics is written once.
 *
 * A run owns its arrays: pf_setup() allocates them, pf_free() frees them.
 */
#ifndef PARTICLEFILTER_PHYSICS_H
#define PARTICLEFILTER_PHYSICS_H

#include <stdint.h>

#define RADIUS 5                /* of the disk tracked */

struct pfilter {
	long size, frames, videos, particles;
	unsigned long seed;
	int quiet;
	int label_truth;        /* --label truth: collect the truth as the region's output */
	int off[4 * RADIUS * RADIUS][2], ndisk;  /* the disk's pixel offsets */
	int32_t *pixels;        /* [videos][frames][size][size] */
	double *truth;          /* [videos][frames][2]: where the disk is */
	double *est;            /* [videos][frames][2]: the tracker's estimates */
	double *fin, *tru, *err;        /* pf_finish(): [videos][2], [videos][2], [videos] */
	double rmse, t0, t1;    /* pf_finish(): of the final estimates; when tracking started, ended */
};

/* Parses the arguments (prints usage and exits 0 for --help), allocates
 * the arrays and makes the videos. 0, or the exit status (2 for a bad
 * argument, 1 out of memory) after a one-line error on stderr. */
int pf_setup(struct pfilter *p, int argc, char **argv);
/* --label truth records the ground truth, not the tracker's estimates, as
 * the region's output, which is only meaningful while hml collects: 0 when
 * the flag is absent or `mode` (hml_mode_name()) is "collect", else 2
 * after a one-line error on stderr. */
int pf_label_check(const struct pfilter *p, const char *mode);
/* The region's original code: every video tracked into p->est. Returns 1
 * when the final estimates pass the check against the truth (RMSE below
 * the bound), 0 when not, -1 out of memory (after an error on stderr). */
int pf_track(struct pfilter *p);
/* After tracking: the final estimates, truth and errors, and their RMSE. */
void pf_finish(struct pfilter *p);
/* The summary on stdout (unless --quiet); mode names the hml mode. */
void pf_report(const struct pfilter *p, const char *mode);
void pf_free(struct pfilter *p);

#endif
