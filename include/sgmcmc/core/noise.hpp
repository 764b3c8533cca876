// SPDX-License-Identifier: MIT
// Uniform and standard-normal draws for fixed-size vectors through a port RNG.
#pragma once

#include <cmath>
#include <cstdint>

#include "sgmcmc/core/types.hpp"
#include "sgmcmc/port/rng.hpp"

namespace sgmcmc {

/// Uniform on the open interval (0, 1) from the top bits of one 64-bit word.
template <class Scalar, class Rng>
Scalar uniform_open01(Rng& rng) noexcept {
  check_rng<Rng>();
  if constexpr (sizeof(Scalar) <= 4) {
    // 24 mantissa bits; the +0.5 keeps both ends away from 0 and 1.
    const auto bits = static_cast<std::uint32_t>(rng() >> 40);
    return (static_cast<Scalar>(bits) + Scalar(0.5)) * Scalar(5.9604644775390625e-08);
  } else {
    const auto bits = rng() >> 11;  // 53 bits
    return (static_cast<Scalar>(bits) + Scalar(0.5)) * Scalar(1.1102230246251565e-16);
  }
}

/// Portable standard-normal fill by the Box-Muller transform, used when the port has no faster
/// fill_normal of its own. Deterministic for a given RNG state on every platform that rounds
/// std::log, std::sqrt, std::cos and std::sin alike.
template <class Scalar, int N, class Rng>
void fill_normal_portable(Rng& rng, Vector<Scalar, N>& out) noexcept {
  constexpr Scalar two_pi = Scalar(6.283185307179586476925286766559);
  Index i = 0;
  for (; i + 1 < N; i += 2) {
    const Scalar r = std::sqrt(Scalar(-2) * std::log(uniform_open01<Scalar>(rng)));
    const Scalar a = two_pi * uniform_open01<Scalar>(rng);
    out[i] = r * std::cos(a);
    out[i + 1] = r * std::sin(a);
  }
  if (i < N) {
    const Scalar r = std::sqrt(Scalar(-2) * std::log(uniform_open01<Scalar>(rng)));
    out[i] = r * std::cos(two_pi * uniform_open01<Scalar>(rng));
  }
}

/// Fills out with independent N(0, 1) draws: the port's own fill when it has one, else the
/// portable transform above.
template <class Scalar, int N, class Rng>
void fill_normal(Rng& rng, Vector<Scalar, N>& out) noexcept {
  check_rng<Rng>();
  if constexpr (HasFillNormal<Rng, Scalar, N>::value) {
    rng.fill_normal(out);
  } else {
    fill_normal_portable(rng, out);
  }
}

/// One N(0, 1) draw.
template <class Scalar, class Rng>
Scalar normal(Rng& rng) noexcept {
  Vector<Scalar, 1> v;
  fill_normal(rng, v);
  return v[0];
}

}  // namespace sgmcmc
