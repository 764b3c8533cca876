// SPDX-License-Identifier: MIT
// Cortex-M RNG port: xoshiro256++ over 64-bit words, seeded by SplitMix64 or the board hook.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "sgmcmc/core/math.hpp"
#include "sgmcmc/cortex_m/board.hpp"
#include "sgmcmc/port/rng.hpp"

namespace sgmcmc::cortex_m {

/// xoshiro256++ (Blackman & Vigna): 256 bits of state, period 2^256 - 1, one 64-bit word per
/// call, satisfying the RNG contract (include/sgmcmc/port/rng.hpp). On a Cortex-M4 a word
/// costs about 30 32-bit ALU instructions. Seeding and streams follow the host port
/// (sgmcmc::host::Rng): the base state is four SplitMix64 outputs of the seed and stream k
/// starts k jumps of 2^128 words later, so both ports give the same 64-bit word stream for the
/// same (seed, stream). fill_normal is branch-free Box-Muller (sgmcmc::detail::normal_pair): no
/// libm call, a constant instruction count per call for a given n and Scalar, whatever the bits.
class Rng {
 public:
  using result_type = std::uint64_t;

  /// Seeds from `seed`; stream k (for parallel chains) is k jumps of 2^128 words ahead, so
  /// streams never overlap. Costs 256 (k + 1) generator steps.
  explicit constexpr Rng(std::uint64_t seed, std::uint64_t stream = 0) noexcept {
    std::uint64_t sm = seed;
    // Four consecutive SplitMix64 outputs are distinct, so the state is never all zero.
    for (auto& word : s_) word = splitmix64(sm);
    for (std::uint64_t k = 0; k < stream; ++k) jump();
  }

  /// Seeds from the board hook sgmcmc_board_seed() (board.hpp).
  static Rng from_board(std::uint64_t stream = 0) noexcept {
    return Rng(sgmcmc_board_seed(), stream);
  }

  static constexpr result_type min() noexcept { return 0u; }
  static constexpr result_type max() noexcept { return ~result_type(0); }

  /// Next 64-bit word.
  constexpr result_type operator()() noexcept {
    const std::uint64_t result = rotl(s_[0] + s_[3], 23) + s_[0];
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  /// Writes n independent N(0, 1) draws to out[0 .. n-1]. float: one word per pair (a 32-bit
  /// half for the radius, one for the angle; |z| <= 6.56), with a constant instruction count on
  /// a Cortex-M4F (VSQRT, polynomial log and sin/cos, no branch; measured by scripts/cm4-count).
  /// double: two words per pair (|z| <= 8.58), errno-free but software floating point on an M4F,
  /// so not constant-time there. Each call uses ceil(n / 2) pairs and drops the second value of
  /// the last pair when n is odd: no draw is cached between calls, so a call's cost depends only
  /// on n, and its values on the generator state and n. Same seed, same values: bit-identical
  /// at -O2 and -Os on the M4F and in an x86-64 build that contracts to FMA (tests/normal.cpp);
  /// without FMA contraction a few last bits differ. Forced inline (with its pair), so that a
  /// sampler's step is one stack frame (docs/PERFORMANCE.md, "Cortex-M4F"): each call site holds
  /// its own copy of the transform (about 0.5 KB of code at -O2).
  template <
      class Scalar,
      std::enable_if_t<std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>, int> = 0>
  [[gnu::always_inline]] void fill_normal(Scalar* out, std::size_t n) noexcept {
    std::size_t i = 0;
    for (; i + 1 < n; i += 2) pair(out[i], out[i + 1]);
    if (i < n) {
      Scalar unused;
      pair(out[i], unused);
    }
  }

  /// Fills a fixed-size vector: the same values as fill_normal(out.data(), N).
  template <
      class Scalar, int N,
      std::enable_if_t<std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>, int> = 0>
  void fill_normal(Eigen::Matrix<Scalar, N, 1>& out) noexcept {
    static_assert(N >= 1, "sgmcmc::cortex_m::Rng::fill_normal needs a fixed size N >= 1");
    fill_normal(out.data(), static_cast<std::size_t>(N));
  }

  /// Advances by 2^128 words: Rng(seed, k) followed by jump() equals Rng(seed, k + 1).
  constexpr void jump() noexcept {
    // The jump polynomial published with xoshiro256; the state is linear over GF(2), so the
    // jumped state is the XOR of the states selected by the polynomial's bits.
    constexpr std::uint64_t kJump[4] = {0x180EC6D33CFD0ABAu, 0xD5A61266F0C9392Cu,
                                        0xA9582618E03FC9AAu, 0x39ABDC4529B1661Cu};
    std::uint64_t acc[4] = {0u, 0u, 0u, 0u};
    for (const std::uint64_t word : kJump) {
      for (int b = 0; b < 64; ++b) {
        if (((word >> b) & 1u) != 0u) {
          for (int k = 0; k < 4; ++k) acc[k] ^= s_[k];
        }
        (*this)();
      }
    }
    for (int k = 0; k < 4; ++k) s_[k] = acc[k];
  }

  /// Equal states produce equal streams.
  friend constexpr bool operator==(const Rng& a, const Rng& b) noexcept {
    return a.s_[0] == b.s_[0] && a.s_[1] == b.s_[1] && a.s_[2] == b.s_[2] && a.s_[3] == b.s_[3];
  }
  friend constexpr bool operator!=(const Rng& a, const Rng& b) noexcept { return !(a == b); }

 private:
  /// One Box-Muller pair: float from one word, double from two.
  [[gnu::always_inline]] void pair(float& z0, float& z1) noexcept {
    const std::uint64_t w = (*this)();
    detail::normal_pair(static_cast<std::uint32_t>(w), static_cast<std::uint32_t>(w >> 32), z0, z1);
  }
  void pair(double& z0, double& z1) noexcept {
    const std::uint64_t w1 = (*this)();
    const std::uint64_t w2 = (*this)();
    detail::normal_pair(w1, w2, z0, z1);
  }

  static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept {
    return (x << k) | (x >> (64 - k));
  }
  static constexpr std::uint64_t splitmix64(std::uint64_t& x) noexcept {
    std::uint64_t z = (x += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
  }

  std::uint64_t s_[4] = {};
};

static_assert(is_rng_v<Rng>, "sgmcmc::cortex_m::Rng must satisfy the RNG contract");

}  // namespace sgmcmc::cortex_m
