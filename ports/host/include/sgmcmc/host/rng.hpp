// SPDX-License-Identifier: MIT
// Host port RNG: xoshiro256++ with jump-ahead streams and a lane-parallel Box-Muller normal fill.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <Eigen/Core>

#include "sgmcmc/port/rng.hpp"

namespace sgmcmc::host {
namespace detail {

/// Rotate left; k in [1, 63].
constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept {
  return (x << k) | (x >> (64 - k));
}

/// splitmix64 (Steele, Lea, Flood 2014): one output per call, advancing state by the golden gamma.
constexpr std::uint64_t splitmix64(std::uint64_t& state) noexcept {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// One xoshiro256++ step (Blackman & Vigna 2021) on a state held as four words.
constexpr std::uint64_t xoshiro_next(std::uint64_t& s0, std::uint64_t& s1, std::uint64_t& s2,
                                     std::uint64_t& s3) noexcept {
  const std::uint64_t result = rotl(s0 + s3, 23) + s0;
  const std::uint64_t t = s1 << 17;
  s2 ^= s0;
  s3 ^= s1;
  s1 ^= s2;
  s0 ^= s3;
  s2 ^= t;
  s3 = rotl(s3, 45);
  return result;
}

/// Jump polynomial for 2^128 steps of xoshiro256 (published with the generator).
inline constexpr std::uint64_t kJump[4] = {0x180ec6d33cfd0abaULL, 0xd5a61266f0c9392cULL,
                                           0xa9582618e03fc9aaULL, 0x39abdc4529b1661cULL};
/// Jump polynomial for 2^192 steps of xoshiro256.
inline constexpr std::uint64_t kLongJump[4] = {0x76e15d3efefdcbbfULL, 0xc5004e441c522fb3ULL,
                                               0x77710069854ee241ULL, 0x39109bb02acbe635ULL};

/// Advances a scalar xoshiro256 state by the jump polynomial poly (the state is a linear map of
/// itself over GF(2), so the jump is the sum of the states selected by the polynomial's bits).
constexpr void jump_state(std::uint64_t (&s)[4], const std::uint64_t (&poly)[4]) noexcept {
  std::uint64_t acc[4] = {0, 0, 0, 0};
  for (int w = 0; w < 4; ++w) {
    for (int b = 0; b < 64; ++b) {
      if ((poly[w] >> b) & 1U) {
        for (int k = 0; k < 4; ++k) acc[k] ^= s[k];
      }
      xoshiro_next(s[0], s[1], s[2], s[3]);
    }
  }
  for (int k = 0; k < 4; ++k) s[k] = acc[k];
}

/// Reinterprets the bits of a value of the same size (C++17 stand-in for std::bit_cast).
template <class To, class From>
inline To bit_cast(const From& from) noexcept {
  static_assert(sizeof(To) == sizeof(From), "bit_cast needs equal sizes");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

/// Natural logarithm for positive, finite, normal x, branch-free so that loops over it vectorise.
/// x = 2^k m with m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh(s), s = (m-1)/(m+1), |s| <= 0.1716,
/// by its odd series (terms to s^9 in float, s^21 in double: truncation < 3e-9 and < 1e-18
/// relative); k ln 2 is added in two parts so that k * ln2_hi is exact.
/// Measured max relative error against a long-double reference (tests/port): 2.2e-7 (float, 2 ulp)
/// and 2.7e-16 (double, 2 ulp). Not valid for 0, subnormals, negatives, inf or NaN.
inline float log_approx(float x) noexcept {
  std::uint32_t ix = bit_cast<std::uint32_t>(x);
  ix += 0x3f800000U - 0x3f3504f3U;  // mantissas >= sqrt(2) carry into the exponent field
  const auto k = static_cast<std::int32_t>(ix >> 23) - 127;
  ix = (ix & 0x007fffffU) + 0x3f3504f3U;
  const float f = bit_cast<float>(ix) - 1.0f;
  const float s = f / (2.0f + f);
  const float z = s * s;
  const float p = 1.0f + z * (1.0f / 3 + z * (1.0f / 5 + z * (1.0f / 7 + z * (1.0f / 9))));
  const auto kf = static_cast<float>(k);
  return (kf * 1.4286068203094173e-06f + 2.0f * s * p) + kf * 0.693145751953125f;
}

/// Double-precision counterpart of log_approx(float); same reduction, longer series.
inline double log_approx(double x) noexcept {
  std::uint64_t ix = bit_cast<std::uint64_t>(x);
  ix += 0x3ff0000000000000ULL - 0x3fe6a09e667f3bcdULL;
  // k = exponent - 1023 as a double without an int64 -> double conversion (none in SSE2/AVX2):
  // the biased exponent e <= 2047 goes into the mantissa of 2^52, then 2^52 + 1023 is removed.
  const double kd = bit_cast<double>(0x4330000000000000ULL | (ix >> 52)) - 4503599627371519.0;
  ix = (ix & 0x000fffffffffffffULL) + 0x3fe6a09e667f3bcdULL;
  const double f = bit_cast<double>(ix) - 1.0;
  const double s = f / (2.0 + f);
  const double z = s * s;
  double p = 1.0 / 21;
  p = p * z + 1.0 / 19;
  p = p * z + 1.0 / 17;
  p = p * z + 1.0 / 15;
  p = p * z + 1.0 / 13;
  p = p * z + 1.0 / 11;
  p = p * z + 1.0 / 9;
  p = p * z + 1.0 / 7;
  p = p * z + 1.0 / 5;
  p = p * z + 1.0 / 3;
  const double ln_m = 2.0 * s + 2.0 * s * z * p;
  return (kd * 1.9082149292705877e-10 + ln_m) + kd * 6.93147180369123816490e-01;
}

/// cos a and sin a for a in [-pi/4, pi/4] by Taylor polynomials in a^2 (float: sin to a^11,
/// cos to a^10, truncation < 3e-8 relative near |a| = pi/4; double: sin to a^17, cos to a^18,
/// truncation < 1e-19). Measured max absolute error against long double: 6.7e-8 (float), 1.2e-16
/// (double).
inline void sincos_kernel(float a, float& c, float& s) noexcept {
  const float z = a * a;
  s = a + a * z *
              (-1.0f / 6 +
               z * (1.0f / 120 + z * (-1.0f / 5040 + z * (1.0f / 362880 - z * (1.0f / 39916800)))));
  c = 1.0f +
      z * (-0.5f + z * (1.0f / 24 + z * (-1.0f / 720 + z * (1.0f / 40320 - z * (1.0f / 3628800)))));
}

/// Double-precision counterpart of sincos_kernel(float).
inline void sincos_kernel(double a, double& c, double& s) noexcept {
  const double z = a * a;
  double ps = -1.0 / 355687428096000.0;  // -1/17!
  ps = ps * z + 1.0 / 1307674368000.0;   // 1/15!
  ps = ps * z - 1.0 / 6227020800.0;      // -1/13!
  ps = ps * z + 1.0 / 39916800.0;        // 1/11!
  ps = ps * z - 1.0 / 362880.0;          // -1/9!
  ps = ps * z + 1.0 / 5040.0;            // 1/7!
  ps = ps * z - 1.0 / 120.0;             // -1/5!
  ps = ps * z + 1.0 / 6.0;               // 1/3!
  s = a - a * z * ps;
  double pc = 1.0 / 6402373705728000.0;  // 1/18!
  pc = pc * z - 1.0 / 20922789888000.0;  // -1/16!
  pc = pc * z + 1.0 / 87178291200.0;     // 1/14!
  pc = pc * z - 1.0 / 479001600.0;       // -1/12!
  pc = pc * z + 1.0 / 3628800.0;         // 1/10!
  pc = pc * z - 1.0 / 40320.0;           // -1/8!
  pc = pc * z + 1.0 / 720.0;             // 1/6!
  pc = pc * z - 1.0 / 24.0;              // -1/4!
  pc = pc * z + 0.5;                     // 1/2!
  c = 1.0 - z * pc;
}

/// Square root of y >= 0 (finite), branch-free and errno-free so that it vectorises without
/// -fno-math-errno: a bit-level estimate of 1/sqrt(y) (relative error < 3.5%), three Newton steps
/// (error e -> 1.5 e^2, so < 1e-10), then one correction of r = y / sqrt(y).
/// Measured max relative error: 8.9e-8 (float, 1 ulp) over [1e-8, 1e8].
inline float sqrt_approx(float y) noexcept {
  const float h = 0.5f * y;
  float x = bit_cast<float>(0x5f3759dfU - (bit_cast<std::uint32_t>(y) >> 1));
  x = x * (1.5f - h * x * x);
  x = x * (1.5f - h * x * x);
  x = x * (1.5f - h * x * x);
  const float r = y * x;
  return r + x * (h - 0.5f * r * r);
}

/// Double-precision counterpart of sqrt_approx(float): four Newton steps (error < 1e-20).
/// Measured max relative error: 1.7e-16 (double, 1 ulp) over [1e-8, 1e8].
inline double sqrt_approx(double y) noexcept {
  const double h = 0.5 * y;
  double x = bit_cast<double>(0x5fe6eb50c7b537a9ULL - (bit_cast<std::uint64_t>(y) >> 1));
  x = x * (1.5 - h * x * x);
  x = x * (1.5 - h * x * x);
  x = x * (1.5 - h * x * x);
  x = x * (1.5 - h * x * x);
  const double r = y * x;
  return r + x * (h - 0.5 * r * r);
}

/// Box-Muller pair from the two 32-bit halves of one 64-bit word, float. lo gives the radius:
/// u1 = (lo >> 1) 2^-31 + 2^-32 in (0, 1], r = sqrt(-2 ln u1) <= 6.67. hi gives the angle
/// theta = q pi/2 + a: q = top 2 bits (quadrant), a = (f - 1.5) pi/2 in [-pi/4, pi/4) with f in
/// [1, 2) built from the next 23 bits. Outputs z0 = r cos theta, z1 = r sin theta.
inline void normal_pair(std::uint32_t lo, std::uint32_t hi, float& z0, float& z1) noexcept {
  const float u1 = static_cast<float>(static_cast<std::int32_t>(lo >> 1)) * 4.656612873077393e-10f +
                   2.3283064365386963e-10f;
  const float r = sqrt_approx(-2.0f * log_approx(u1));
  const float f = bit_cast<float>(0x3f800000U | ((hi >> 7) & 0x007fffffU));
  const float a = (f - 1.5f) * 1.5707963267948966f;
  float c;
  float s;
  sincos_kernel(a, c, s);
  const std::uint32_t q = hi >> 30;
  // theta = q pi/2 + a: odd quadrants swap cos and sin; cos < 0 for q in {1,2}, sin < 0 for {2,3}.
  // Selects by bit masks rather than ?: so that targets without vector compares still vectorise.
  const std::uint32_t swap = 0U - (q & 1U);
  const std::uint32_t cb = bit_cast<std::uint32_t>(c);
  const std::uint32_t sb = bit_cast<std::uint32_t>(s);
  const std::uint32_t neg_c = ((q + 1U) & 2U) << 30;
  const std::uint32_t neg_s = (q & 2U) << 30;
  z0 = r * bit_cast<float>(((cb & ~swap) | (sb & swap)) ^ neg_c);
  z1 = r * bit_cast<float>(((sb & ~swap) | (cb & swap)) ^ neg_s);
}

/// Box-Muller pair from two 64-bit words, double. w1 gives u1 = (2 (w1 >> 12) + 1) 2^-53 in
/// (0, 1), exact, so r <= 8.58; w2 gives the quadrant (top 2 bits) and a 52-bit angle fraction.
inline void normal_pair(std::uint64_t w1, std::uint64_t w2, double& z0, double& z1) noexcept {
  const double u1 =
      (bit_cast<double>(0x3ff0000000000000ULL | (w1 >> 12)) - 1.0) + 1.1102230246251565e-16;
  const double r = sqrt_approx(-2.0 * log_approx(u1));
  const double f = bit_cast<double>(0x3ff0000000000000ULL | ((w2 >> 10) & 0x000fffffffffffffULL));
  const double a = (f - 1.5) * 1.5707963267948966;
  double c;
  double s;
  sincos_kernel(a, c, s);
  const std::uint64_t q = w2 >> 62;
  const std::uint64_t swap = 0U - (q & 1U);
  const std::uint64_t cb = bit_cast<std::uint64_t>(c);
  const std::uint64_t sb = bit_cast<std::uint64_t>(s);
  const std::uint64_t neg_c = ((q + 1U) & 2U) << 62;
  const std::uint64_t neg_s = (q & 2U) << 62;
  z0 = r * bit_cast<double>(((cb & ~swap) | (sb & swap)) ^ neg_c);
  z1 = r * bit_cast<double>(((sb & ~swap) | (cb & swap)) ^ neg_s);
}

template <class Scalar>
inline constexpr bool is_float_or_double_v =
    std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>;

}  // namespace detail

/// Host RNG: xoshiro256++ words for operator(), plus Rng::lanes independent xoshiro256++ lanes
/// that fill_normal advances together so that the compiler vectorises the lane loop.
///
/// Seeding: splitmix64(seed) gives the base state B (four words; never all zero). Stream k starts
/// at J^k B, where J is the 2^128-step jump, so streams never overlap within 2^128 words. Inside a
/// stream, operator() uses J^k B itself and lane j (0 <= j < 16) uses L^(j+1) J^k B, where L is the
/// 2^192-step long jump. All 17 sub-generators of all streams k < 2^64 therefore start at least
/// 2^128 steps apart in the single period-(2^256 - 1) sequence. Construction costs 256 (k + 16)
/// xoshiro steps (about 10 us for k = 0).
///
/// operator() and fill_normal draw from disjoint sub-generators: interleaving them changes
/// neither sequence. fill_normal yields one stream of normals in blocks of Rng::block = 32:
/// leftover normals of a block are kept and served first by the next call, so the values depend
/// only on how many normals were drawn in total, not on how the calls split them (same seed, same
/// platform).
///
/// Class invariant: no sub-generator state is all zero; 0 <= cached-normal position <= block.
/// Size: about 1 KB (16 lanes of 32 bytes, plus the two caches).
class Rng {
 public:
  using result_type = std::uint64_t;
  /// Number of parallel xoshiro256++ lanes behind fill_normal.
  static constexpr int lanes = 16;
  /// Normals produced per lane step (float) or per two lane steps (double).
  static constexpr int block = 2 * lanes;

  /// @param[in] seed   any 64-bit value; expanded by splitmix64.
  /// @param[in] stream index of an independent stream (k jumps of 2^128; O(k) to construct).
  explicit Rng(std::uint64_t seed, std::uint64_t stream = 0) noexcept {
    std::uint64_t sm = seed;
    for (auto& w : s_) w = detail::splitmix64(sm);
    for (std::uint64_t k = 0; k < stream; ++k) detail::jump_state(s_, detail::kJump);
    std::uint64_t t[4] = {s_[0], s_[1], s_[2], s_[3]};
    for (int j = 0; j < lanes; ++j) {
      detail::jump_state(t, detail::kLongJump);
      for (int k = 0; k < 4; ++k) lane_[k][j] = t[k];
    }
  }

  static constexpr result_type min() noexcept { return 0; }
  static constexpr result_type max() noexcept { return ~result_type(0); }

  /// Next 64-bit word of the scalar sub-generator.
  result_type operator()() noexcept { return detail::xoshiro_next(s_[0], s_[1], s_[2], s_[3]); }

  /// Advances every sub-generator by 2^128 steps and discards cached normals, so that a freshly
  /// constructed Rng(seed, k) followed by jump() draws exactly as Rng(seed, k + 1).
  void jump() noexcept {
    detail::jump_state(s_, detail::kJump);
    std::uint64_t acc[4][lanes] = {};
    std::uint64_t sink[lanes];
    for (int w = 0; w < 4; ++w) {
      for (int b = 0; b < 64; ++b) {
        if ((detail::kJump[w] >> b) & 1U) {
          for (int k = 0; k < 4; ++k) {
            for (int j = 0; j < lanes; ++j) acc[k][j] ^= lane_[k][j];
          }
        }
        step_lanes(sink);
      }
    }
    for (int k = 0; k < 4; ++k) {
      for (int j = 0; j < lanes; ++j) lane_[k][j] = acc[k][j];
    }
    pos_f_ = block;
    pos_d_ = block;
  }

  /// Fills out with independent N(0, 1) draws (Box-Muller over the lanes; see detail::normal_pair
  /// for the bit layout). Float draws satisfy |z| <= 6.67, double draws |z| <= 8.58. Each value is
  /// within 5.5e-7 (float) or 1.1e-15 (double) of exact Box-Muller on the same bits (measured).
  /// @param[out] out any fixed size N >= 1; float or double.
  template <class Scalar, int N, std::enable_if_t<detail::is_float_or_double_v<Scalar>, int> = 0>
  void fill_normal(Eigen::Matrix<Scalar, N, 1>& out) noexcept {
    static_assert(N >= 1, "sgmcmc::host::Rng::fill_normal needs a fixed size N >= 1");
    if constexpr (N < block) {  // fast path for small N: a copy of compile-time length
      int& pos = pos_of<Scalar>();
      if (N <= block - pos) {
        const Scalar* cache = cache_of<Scalar>() + static_cast<unsigned>(pos);
        for (int j = 0; j < N; ++j) out[j] = cache[j];
        pos += N;
        return;
      }
    }
    fill_normal(out.data(), static_cast<std::size_t>(N));
  }

  /// Writes n standard normals to out[0 .. n-1]; the same stream as the vector overload.
  template <class Scalar, std::enable_if_t<detail::is_float_or_double_v<Scalar>, int> = 0>
  void fill_normal(Scalar* out, std::size_t n) noexcept {
    Scalar* cache = cache_of<Scalar>();
    int& pos = pos_of<Scalar>();
    const auto cached = static_cast<std::size_t>(block - pos);
    const std::size_t first = n < cached ? n : cached;
    for (std::size_t j = 0; j < first; ++j) out[j] = cache[static_cast<std::size_t>(pos) + j];
    pos += static_cast<int>(first);
    std::size_t i = first;
    for (; n - i >= static_cast<std::size_t>(block); i += block) {
      make_block(cache);  // through the local cache: the lane loops vectorise without alias checks
      for (std::size_t j = 0; j < static_cast<std::size_t>(block); ++j) out[i + j] = cache[j];
    }
    if (i < n) {
      const std::size_t rest = n - i;  // < block
      make_block(cache);
      for (std::size_t j = 0; j < rest; ++j) out[i + j] = cache[j];
      pos = static_cast<int>(rest);
    }
  }

 private:
  /// One xoshiro256++ step of every lane; words[j] receives lane j's output.
  void step_lanes(std::uint64_t (&words)[lanes]) noexcept {
    for (int j = 0; j < lanes; ++j) {
      words[j] = detail::xoshiro_next(lane_[0][j], lane_[1][j], lane_[2][j], lane_[3][j]);
    }
  }

  /// block float normals from one lane step: out[j], out[j + lanes] are lane j's Box-Muller pair.
  void make_block(float* out) noexcept {
    std::uint64_t w[lanes];
    step_lanes(w);
    // Split first: a loop whose elements are all 32-bit vectorises where a mixed one does not.
    std::uint32_t lo[lanes];
    std::uint32_t hi[lanes];
    for (int j = 0; j < lanes; ++j) {
      lo[j] = static_cast<std::uint32_t>(w[j]);
      hi[j] = static_cast<std::uint32_t>(w[j] >> 32);
    }
    for (int j = 0; j < lanes; ++j) detail::normal_pair(lo[j], hi[j], out[j], out[j + lanes]);
  }

  /// block double normals from two lane steps: out[j], out[j + lanes] are lane j's pair.
  void make_block(double* out) noexcept {
    std::uint64_t w1[lanes];
    std::uint64_t w2[lanes];
    step_lanes(w1);
    step_lanes(w2);
    for (int j = 0; j < lanes; ++j) detail::normal_pair(w1[j], w2[j], out[j], out[j + lanes]);
  }

  template <class Scalar>
  Scalar* cache_of() noexcept {
    if constexpr (std::is_same_v<Scalar, float>) {
      return cache_f_;
    } else {
      return cache_d_;
    }
  }
  template <class Scalar>
  int& pos_of() noexcept {
    if constexpr (std::is_same_v<Scalar, float>) {
      return pos_f_;
    } else {
      return pos_d_;
    }
  }

  std::uint64_t s_[4];                        // scalar sub-generator behind operator()
  alignas(64) std::uint64_t lane_[4][lanes];  // lane_[k][j]: word k of lane j
  alignas(64) double cache_d_[block] = {};    // unused normals of the last double block
  alignas(64) float cache_f_[block] = {};     // unused normals of the last float block
  int pos_d_ = block;                         // next unused index in cache_d_ (block: empty)
  int pos_f_ = block;                         // next unused index in cache_f_
};

static_assert(is_rng_v<Rng>, "sgmcmc::host::Rng must satisfy the port RNG contract");

}  // namespace sgmcmc::host
