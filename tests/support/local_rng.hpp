// SPDX-License-Identifier: MIT
// Test-local xoshiro256** seeded by splitmix64, satisfying the RNG contract (port/rng.hpp).
#pragma once

#include <cstdint>

namespace sgmcmc_test {

/// xoshiro256** (Blackman & Vigna 2018); state from splitmix64(seed) so any seed works.
struct LocalRng {
  using result_type = std::uint64_t;
  static constexpr result_type min() noexcept { return 0; }
  static constexpr result_type max() noexcept { return ~result_type(0); }

  explicit LocalRng(std::uint64_t seed) noexcept {
    for (auto& word : s) {
      seed += 0x9e3779b97f4a7c15ULL;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      word = z ^ (z >> 31);
    }
  }

  result_type operator()() noexcept {
    const std::uint64_t result = rotl(s[1] * 5, 7) * 9;
    const std::uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s[4];
};

}  // namespace sgmcmc_test
