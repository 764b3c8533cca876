/* SPDX-License-Identifier: MIT
 * The benchmark's independent floor: a SIMD normal generator and FMA passes written in the bench
 * (floor.c), sharing no code with the library. */
#ifndef SGMCMC_BENCH_FLOOR_H
#define SGMCMC_BENCH_FLOOR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FLOOR_BATCH 256

/** 16 lanes of xoshiro128+ and a cache of one batch of normals per type. */
typedef struct {
  uint32_t s[4][16];
  float cache_f[FLOOR_BATCH];
  double cache_d[FLOOR_BATCH];
  int pos_f;
  int pos_d;
} FloorRng;

void floor_rng_init(FloorRng* r, uint64_t seed);
/** n standard normals (the cache first, then whole batches straight into out). */
void floor_normals_f(FloorRng* r, float* out, int n);
void floor_normals_d(FloorRng* r, double* out, int n);
/** One floor step over a state x of n scalars: m normals, x_i += a g_i + b zeta_i (i < m),
 * x_i += a g_i (i >= m). */
void floor_step_f(FloorRng* r, float* x, const float* g, int n, int m, float a, float b);
void floor_step_d(FloorRng* r, double* x, const double* g, int n, int m, double a, double b);
/** x_i += a g_i (the extra passes of a leapfrog). */
void floor_pass_f(float* x, const float* g, int n, float a);
void floor_pass_d(double* x, const double* g, int n, double a);

#ifdef __cplusplus
}
#endif

#endif
