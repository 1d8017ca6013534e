/*
 * lib/core/rng.h - the project's seeded random streams, one copy each
 * (internal): splitmix64, and an MMIX linear congruential step.
 *
 * Sebastiano Vigna's splitmix64: a 64-bit state advanced by the golden
 * ratio increment and mixed by two multiply-xorshift rounds. Small, fast
 * and the same on every platform, so that a seed gives the same numbers
 * everywhere: the optimiser's suggestions (search/opt/bo.c) and the
 * restarts of its hyper-parameter fits (search/opt/gp.c) repeat exactly,
 * and a resumed search suggests what the original did. Inline, as the
 * copies it replaces were: the optimiser draws a number per coordinate of
 * every candidate point.
 */
#ifndef HML_LIB_RNG_H
#define HML_LIB_RNG_H

#include <stdint.h>

/* 2^64 / golden ratio: splitmix64's increment; also a constant to tell
 * one stream's seed from another's. */
#define HML__RNG_GOLDEN 0x9e3779b97f4a7c15ULL

/** The next number of the stream whose state is *s (advanced). */
static inline uint64_t hml__rng_splitmix64(uint64_t *s)
{
	uint64_t z = (*s += HML__RNG_GOLDEN);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/**
 * Knuth's MMIX linear congruential step: the state advanced, and returned.
 * Weaker than splitmix64 in its low bits (use the top ones); kept where its
 * exact sequence is relied upon: the rows of `hml deploy --target c`'s
 * agreement check (its figure is recorded), test and benchmark inputs.
 */
static inline uint64_t hml__rng_lcg(uint64_t *s)
{
	return *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
}

/** A double uniform in [0, 1) from the next number: its top 53 bits. */
static inline double hml__rng_uniform(uint64_t *s)
{
	return (double)(hml__rng_splitmix64(s) >> 11) * 0x1.0p-53;
}

#endif
