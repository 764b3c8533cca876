// Test support: small deterministic models and a tiny RNG meeting the port contract, shared by
// the core and conformance tests (the statistical targets live in targets.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "sgmcmc/core/types.hpp"

namespace sgmcmc_test {

/// splitmix64-seeded xorshift-free generator (xoshiro256**), meets include/sgmcmc/port/rng.hpp.
struct TinyRng {
  using result_type = std::uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type(0); }
  std::uint64_t s[4];
  explicit TinyRng(std::uint64_t seed) {
    for (auto& w : s) {
      seed += 0x9e3779b97f4a7c15ull;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      w = z ^ (z >> 31);
    }
  }
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  result_type operator()() {
    const std::uint64_t r = rotl(s[1] * 5, 7) * 9;
    const std::uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
  }
};

/// U(θ) = Σ θ_i⁴/4 + ½ θᵀAθ with A = I + 0.3 (ones - I): a non-quadratic, coupled potential.
template <class Scalar, int Dim>
struct QuarticModel {
  void gradient(const sgmcmc::Vector<Scalar, Dim>& th, sgmcmc::Vector<Scalar, Dim>& g) const {
    const Scalar s = th.sum();
    for (int i = 0; i < Dim; ++i)
      g[i] = th[i] * th[i] * th[i] + Scalar(0.7) * th[i] + Scalar(0.3) * s;
  }
  Scalar potential(const sgmcmc::Vector<Scalar, Dim>& th) const {
    const Scalar s = th.sum();
    return th.array().pow(4).sum() / Scalar(4) + Scalar(0.35) * th.squaredNorm() +
           Scalar(0.15) * s * s;
  }
};

/// Returns a gradient with one entry replaced by bad (NaN or Inf).
template <class Scalar, int Dim>
struct BadGradientModel {
  Scalar bad = std::numeric_limits<Scalar>::quiet_NaN();
  void gradient(const sgmcmc::Vector<Scalar, Dim>& th, sgmcmc::Vector<Scalar, Dim>& g) const {
    g = th;
    g[Dim - 1] = bad;
  }
  Scalar potential(const sgmcmc::Vector<Scalar, Dim>& th) const { return th.squaredNorm() / 2; }
};

/// A model that allocates on every gradient: the positive control of the allocation counter.
template <class Scalar, int Dim>
struct AllocatingModel {
  void gradient(const sgmcmc::Vector<Scalar, Dim>& th, sgmcmc::Vector<Scalar, Dim>& g) const {
    std::vector<Scalar> tmp(th.data(), th.data() + Dim);
    for (int i = 0; i < Dim; ++i) g[i] = tmp[static_cast<std::size_t>(i)];
  }
  Scalar potential(const sgmcmc::Vector<Scalar, Dim>& th) const { return th.squaredNorm() / 2; }
};

/// Bit-for-bit equality of two states' flat vectors (distinguishes -0 from +0, equal NaNs).
template <class State>
bool bit_identical(const State& a, const State& b) {
  const auto fa = a.flat();
  const auto fb = b.flat();
  for (int i = 0; i < fa.size(); ++i) {
    if (std::memcmp(&fa[i], &fb[i], sizeof(fa[i])) != 0) return false;
  }
  return true;
}

}  // namespace sgmcmc_test
