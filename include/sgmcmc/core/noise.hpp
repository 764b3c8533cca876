// SPDX-License-Identifier: MIT
// Uniform and standard-normal draws for fixed-size vectors through a port RNG.
#pragma once

#include <cmath>
#include <cstdint>

#include "sgmcmc/core/types.hpp"
#include "sgmcmc/port/rng.hpp"

namespace sgmcmc {

/// Uniform on the open interval (0, 1) from the top bits of one 64-bit word: (k + 1/2) 2^-b for
/// the top b bits k, b = 23 (float) or 52 (double), so that every value, 1 − 2^-(b+1) included,
/// is exact and strictly inside (0, 1) (with b = 24 or 53 the largest would round to 1).
template <class Scalar, class Rng>
Scalar uniform_open01(Rng& rng) noexcept {
  check_rng<Rng>();
  if constexpr (sizeof(Scalar) <= 4) {
    const auto bits = static_cast<std::uint32_t>(rng() >> 41);
    return (static_cast<Scalar>(bits) + Scalar(0.5)) * Scalar(1.1920928955078125e-07);
  } else {
    const auto bits = rng() >> 12;
    return (static_cast<Scalar>(bits) + Scalar(0.5)) * Scalar(2.220446049250313e-16);
  }
}

/// Portable standard-normal fill by the Box-Muller transform, used when the port has no faster
/// fill_normal of its own: n draws to out. Deterministic for a given RNG state on every platform
/// that rounds std::log, std::sqrt, std::cos and std::sin alike.
template <class Scalar, class Rng>
void fill_normal_portable(Rng& rng, Scalar* out, Index n) noexcept {
  constexpr Scalar two_pi = Scalar(6.283185307179586476925286766559);
  Index i = 0;
  for (; i + 1 < n; i += 2) {
    const Scalar r = std::sqrt(Scalar(-2) * std::log(uniform_open01<Scalar>(rng)));
    const Scalar a = two_pi * uniform_open01<Scalar>(rng);
    out[i] = r * std::cos(a);
    out[i + 1] = r * std::sin(a);
  }
  if (i < n) {
    const Scalar r = std::sqrt(Scalar(-2) * std::log(uniform_open01<Scalar>(rng)));
    out[i] = r * std::cos(two_pi * uniform_open01<Scalar>(rng));
  }
}
template <class Scalar, int N, class Rng>
void fill_normal_portable(Rng& rng, Vector<Scalar, N>& out) noexcept {
  fill_normal_portable(rng, out.data(), N);
}

/// Writes n independent N(0, 1) draws to out: the port's own fill when it has one
/// (fill_normal(Scalar*, std::size_t)), else the portable transform above. Forced inline (a
/// forwarding call): out of line it was a stack frame of its own between the step and the port.
template <class Scalar, class Rng>
[[gnu::always_inline]] inline void fill_normal(Rng& rng, Scalar* out, Index n) noexcept {
  check_rng<Rng>();
  if constexpr (HasFillNormal<Rng, Scalar>::value) {
    rng.fill_normal(out, static_cast<std::size_t>(n));
  } else {
    fill_normal_portable(rng, out, n);
  }
}

/// Fills a fixed-size vector or map with independent N(0, 1) draws.
template <class Rng, class X>
void fill_normal(Rng& rng, X&& out) noexcept {
  fill_normal(rng, out.data(), out.size());
}

/// One N(0, 1) draw.
template <class Scalar, class Rng>
Scalar normal(Rng& rng) noexcept {
  Scalar v;
  fill_normal(rng, &v, 1);
  return v;
}

}  // namespace sgmcmc
