/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Seeded random numbers for the user-space test tools (tests/hostile,
 * tests/stress): splitmix64, one generator per thread, so that a seed
 * draws the same sequence in each thread and a run can be replayed.
 */
#ifndef KSERIES_TESTS_RNG_H
#define KSERIES_TESTS_RNG_H

#include <stdbool.h>
#include <stdint.h>

struct rng {
	uint64_t s;
};

static inline uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A number in [0, n), or 0 if n is 0. */
static inline uint64_t below(struct rng *r, uint64_t n)
{
	return n ? rng_next(r) % n : 0;
}

static inline bool chance(struct rng *r, unsigned int percent)
{
	return below(r, 100) < percent;
}

#endif
