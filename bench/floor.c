/* SPDX-License-Identifier: MIT
 * The benchmark's floor (DESIGN §7), independent of the library it judges: a plain SIMD
 * Box-Muller written here (16 lanes of xoshiro128+, log by the atanh series with a division,
 * Taylor sin/cos on a quarter turn), vectorised by the compiler (this file is built with
 * -O3 -ffast-math -fopenmp-simd, and -march=native -mprefer-vector-width=512 in native builds),
 * and a fused multiply-add pass over a state. None of it is used by the library. */
#include "floor.h"

#include <math.h>
#include <string.h>

static inline float as_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
static inline uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
static inline double as_double(uint64_t u) {
  double f;
  memcpy(&f, &u, sizeof f);
  return f;
}
static inline uint64_t double_bits(double f) {
  uint64_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* One xoshiro128+ step of the 16 lanes. */
static inline void lane_step(FloorRng* restrict r, uint32_t* restrict out) {
#pragma omp simd
  for (int j = 0; j < 16; ++j) {
    uint32_t s0 = r->s[0][j], s1 = r->s[1][j], s2 = r->s[2][j], s3 = r->s[3][j];
    out[j] = s0 + s3;
    const uint32_t t = s1 << 9;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= t;
    s3 = (s3 << 11) | (s3 >> 21);
    r->s[0][j] = s0;
    r->s[1][j] = s1;
    r->s[2][j] = s2;
    r->s[3][j] = s3;
  }
}

void floor_rng_init(FloorRng* r, uint64_t seed) {
  uint64_t x = seed;
  for (int k = 0; k < 4; ++k) {
    for (int j = 0; j < 16; ++j) {
      x += 0x9e3779b97f4a7c15ULL; /* splitmix64 */
      uint64_t z = x;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      r->s[k][j] = (uint32_t)((z ^ (z >> 31)) | 1u);
    }
  }
  r->pos_f = FLOOR_BATCH;
  r->pos_d = FLOOR_BATCH;
}

/* 256 float normals: out[j] = r cos, out[128 + j] = r sin. */
static void batch_f(FloorRng* r, float* restrict out) {
  uint32_t a[128], c[128];
  for (int k = 0; k < 8; ++k) {
    lane_step(r, a + 16 * k);
    lane_step(r, c + 16 * k);
  }
  for (int j = 0; j < 128; ++j) {
    /* u1 in (0, 1] from 24 bits; ln u1 = e ln 2 + 2 atanh((m - 1)/(m + 1)), m in [1, 2) */
    const float u1 = (float)(int32_t)((a[j] >> 8) + 1u) * (1.0f / 16777216.0f);
    const uint32_t bits = float_bits(u1);
    const float e = (float)((int32_t)(bits >> 23) - 127);
    const float m = as_float((bits & 0x007fffffu) | 0x3f800000u);
    const float s = (m - 1.0f) / (m + 1.0f), s2 = s * s;
    const float lnm =
        2.0f * s *
        (1.0f + s2 * (1.0f / 3 + s2 * (1.0f / 5 + s2 * (1.0f / 7 + s2 * (1.0f / 9 + s2 * (1.0f / 11 + s2 / 13))))));
    const float rad = sqrtf(-2.0f * (e * 0.69314718056f + lnm));
    /* angle: quadrant q from the top 2 bits, t in [-pi/4, pi/4) from the next 22 */
    const uint32_t q = c[j] >> 30;
    const float t = ((float)(int32_t)((c[j] >> 8) & 0x3fffffu) * (1.0f / 4194304.0f) - 0.5f) * 1.5707963268f;
    const float t2 = t * t;
    const float sn = t * (1.0f - t2 / 6 * (1.0f - t2 / 20 * (1.0f - t2 / 42 * (1.0f - t2 / 72))));
    const float cs = 1.0f - t2 / 2 * (1.0f - t2 / 12 * (1.0f - t2 / 30 * (1.0f - t2 / 56 * (1.0f - t2 / 90))));
    const float x = (q & 1u) ? -sn : cs, y = (q & 1u) ? cs : sn;
    out[j] = rad * ((q & 2u) ? -x : x);
    out[128 + j] = rad * ((q & 2u) ? -y : y);
  }
}

/* 256 double normals from 52-bit uniforms (two 32-bit words each). */
static void batch_d(FloorRng* r, double* restrict out) {
  uint32_t a[128], b[128], c[128], d[128];
  for (int k = 0; k < 8; ++k) {
    lane_step(r, a + 16 * k);
    lane_step(r, b + 16 * k);
    lane_step(r, c + 16 * k);
    lane_step(r, d + 16 * k);
  }
  for (int j = 0; j < 128; ++j) {
    const uint64_t w1 = ((uint64_t)a[j] << 32) | b[j];
    const uint64_t w2 = ((uint64_t)c[j] << 32) | d[j];
    /* u1 in (0, 1) */
    const double u1 = as_double(0x3ff0000000000000ULL | (w1 >> 12)) - 1.0 + 1.1102230246251565e-16;
    /* u1 = 2^e m with m in [sqrt(1/2), sqrt(2)), without a branch or a fold: offset the bits so
     * that the exponent field steps where the mantissa passes sqrt(2), then undo the offset in
     * the mantissa alone; |s| <= 0.1716 */
    const uint64_t ib = double_bits(u1) + (0x3ff0000000000000ULL - 0x3fe6a09e667f3bcdULL);
    /* the exponent as a double without a 64-bit integer conversion (AVX2 has none): 2^52 + k
     * has k in its low mantissa bits */
    const double e = as_double(0x4330000000000000ULL | (ib >> 52)) - (4503599627370496.0 + 1023.0);
    const double m = as_double((ib & 0x000fffffffffffffULL) + 0x3fe6a09e667f3bcdULL);
    const double s = (m - 1.0) / (m + 1.0), z = s * s, z2 = z * z, z4 = z2 * z2;
    /* ln m = 2 atanh s = 2 s + s^3 R(s^2): R a degree-6 Chebyshev fit on [0, 0.0295] (made for
     * this file with mpmath.chebyfit; error 3e-16 in R, below 2e-18 in ln m) */
    const double r01 = 0.66666666666666696862 + z * 0.3999999999989950449;
    const double r23 = 0.28571428625975484921 + z * 0.22222211134795079855;
    const double r45 = 0.1818288912526172208 + z * 0.15331721600556041269;
    const double lnm = 2.0 * s + s * z * ((r01 + z2 * r23) + z4 * (r45 + z2 * 0.1461644968504340586));
    const double rad = sqrt(-2.0 * (e * 0.6931471805599453 + lnm));
    const uint64_t q = w2 >> 62;
    const double t =
        (as_double(0x3ff0000000000000ULL | ((w2 >> 10) & 0x000fffffffffffffULL)) - 1.5) * 1.5707963267948966;
    const double t2 = t * t, t4 = t2 * t2;
    /* sin t = t + t^3 S(t^2), cos t = 1 - t^2/2 + t^4 C(t^2) on |t| <= pi/4: S and C degree-5
     * Chebyshev fits (same tool; errors 2e-17 and 1.3e-18) */
    const double sa = -0.16666666666666664624 + t2 * 0.0083333333333309484855;
    const double sb = -0.00019841269836758574323 + t2 * 2.7557316102552440119e-6;
    const double sc = -2.5051131845003624417e-8 + t2 * 1.5918129294866608667e-10;
    const double sn = t + t * t2 * ((sa + t4 * sb) + t4 * t4 * sc);
    const double ca = 0.041666666666666665389 + t2 * -0.0013888888888887397237;
    const double cb = 0.000024801587298765687927 + t2 * -2.7557317271729792882e-7;
    const double cc = 2.0876146268403197893e-9 + t2 * -1.1382632425521718005e-11;
    const double cs = (1.0 - 0.5 * t2) + t4 * ((ca + t4 * cb) + t4 * t4 * cc);
    const double x = (q & 1u) ? -sn : cs, y = (q & 1u) ? cs : sn;
    out[j] = rad * ((q & 2u) ? -x : x);
    out[128 + j] = rad * ((q & 2u) ? -y : y);
  }
}

void floor_normals_f(FloorRng* r, float* out, int n) {
  int i = 0;
  while (i < n) {
    if (r->pos_f == FLOOR_BATCH) {
      if (n - i >= FLOOR_BATCH) {
        batch_f(r, out + i);
        i += FLOOR_BATCH;
        continue;
      }
      batch_f(r, r->cache_f);
      r->pos_f = 0;
    }
    const int take = n - i < FLOOR_BATCH - r->pos_f ? n - i : FLOOR_BATCH - r->pos_f;
    for (int k = 0; k < take; ++k) out[i + k] = r->cache_f[r->pos_f + k];
    r->pos_f += take;
    i += take;
  }
}

void floor_normals_d(FloorRng* r, double* out, int n) {
  int i = 0;
  while (i < n) {
    if (r->pos_d == FLOOR_BATCH) {
      if (n - i >= FLOOR_BATCH) {
        batch_d(r, out + i);
        i += FLOOR_BATCH;
        continue;
      }
      batch_d(r, r->cache_d);
      r->pos_d = 0;
    }
    const int take = n - i < FLOOR_BATCH - r->pos_d ? n - i : FLOOR_BATCH - r->pos_d;
    for (int k = 0; k < take; ++k) out[i + k] = r->cache_d[r->pos_d + k];
    r->pos_d += take;
    i += take;
  }
}

/* x_i += a g_i + b zeta_i for i < m, x_i += a g_i for m <= i < n; the normals for each chunk of
 * FLOOR_BATCH coordinates are drawn just before it (they stay in L1, as the library's do). */
void floor_step_f(FloorRng* r, float* restrict x, const float* restrict g, int n, int m, float a,
                  float b) {
  float z[FLOOR_BATCH];
  for (int c = 0; c < m; c += FLOOR_BATCH) {
    const int len = m - c < FLOOR_BATCH ? m - c : FLOOR_BATCH;
    floor_normals_f(r, z, len);
    for (int i = 0; i < len; ++i) x[c + i] += a * g[c + i] + b * z[i];
  }
  for (int i = m; i < n; ++i) x[i] += a * g[i];
}

void floor_step_d(FloorRng* r, double* restrict x, const double* restrict g, int n, int m,
                  double a, double b) {
  double z[FLOOR_BATCH];
  for (int c = 0; c < m; c += FLOOR_BATCH) {
    const int len = m - c < FLOOR_BATCH ? m - c : FLOOR_BATCH;
    floor_normals_d(r, z, len);
    for (int i = 0; i < len; ++i) x[c + i] += a * g[c + i] + b * z[i];
  }
  for (int i = m; i < n; ++i) x[i] += a * g[i];
}

void floor_pass_f(float* restrict x, const float* restrict g, int n, float a) {
  for (int i = 0; i < n; ++i) x[i] += a * g[i];
}
void floor_pass_d(double* restrict x, const double* restrict g, int n, double a) {
  for (int i = 0; i < n; ++i) x[i] += a * g[i];
}
