// SPDX-License-Identifier: MIT
// Energy terms of H for the blocks after the position: Gaussian kinetic energy and the
// quadratic thermostat term (MATH.md §2.1). Each gives its gradient, its energy and an exact draw
// from exp(-term), which the momentum refresh of HMC and SGHMC uses.
#pragma once

#include <cmath>
#include <tuple>

#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/core/types.hpp"

namespace sgmcmc {

/// K(r) = r^T r / (2 m): Gaussian kinetic energy with scalar mass m (M = m I).
/// Class invariant: mass > 0 (checked by valid()).
template <class Scalar>
struct GaussianKinetic {
  Scalar mass{1};

  bool valid() const noexcept { return mass > Scalar(0) && std::isfinite(mass); }
  /// dK/dr = r / m.
  template <class X>
  auto gradient(const Eigen::MatrixBase<X>& r) const noexcept {
    return r * (Scalar(1) / mass);
  }
  /// dK/dr_i = r_i / m for one coordinate (the fused engine's per-coordinate form).
  Scalar gradient1(Scalar r) const noexcept { return r * (Scalar(1) / mass); }
  /// rᵀr (1/(2m)): the factor does not wait for r, so a trajectory's end energy (HMC's
  /// acceptance) takes a multiplication after rᵀr, not a division. rᵀr/2 exactly when m = 1.
  template <class X>
  Scalar energy(const Eigen::MatrixBase<X>& r) const noexcept {
    return r.squaredNorm() * (Scalar(0.5) / mass);
  }
  /// r ~ N(0, m I), written to n scalars at r.
  template <class Rng>
  void sample(Rng& rng, Scalar* r, Index n) const noexcept {
    fill_normal(rng, r, n);
    const Scalar s = std::sqrt(mass);
    for (Index i = 0; i < n; ++i) r[i] *= s;
  }
  /// r ~ N(0, m I) for any fixed-size vector or map.
  template <class Rng, class X>
  void sample(Rng& rng, X&& r) const noexcept {
    sample(rng, r.data(), r.size());
  }
};

/// (w/2) ||x - c||^2: the thermostat term. SGNHT uses w = d, c = A on a scalar thermostat
/// (MATH.md §2.1, the (d/2)(xi - A)^2 term); mSGNHT/SGMGT use w = 1 per coordinate.
template <class Scalar>
struct QuadraticEnergy {
  Scalar weight{1};
  Scalar center{0};

  bool valid() const noexcept {
    return weight > Scalar(0) && std::isfinite(weight) && std::isfinite(center);
  }
  template <class X>
  auto gradient(const Eigen::MatrixBase<X>& x) const noexcept {
    return (x.array() - center).matrix() * weight;
  }
  /// w (x_i − c) for one coordinate.
  Scalar gradient1(Scalar x) const noexcept { return (x - center) * weight; }
  template <class X>
  Scalar energy(const Eigen::MatrixBase<X>& x) const noexcept {
    return weight * (x.array() - center).matrix().squaredNorm() / Scalar(2);
  }
  /// x ~ N(c, I / w), written to n scalars at x.
  template <class Rng>
  void sample(Rng& rng, Scalar* x, Index n) const noexcept {
    fill_normal(rng, x, n);
    const Scalar s = Scalar(1) / std::sqrt(weight);
    for (Index i = 0; i < n; ++i) x[i] = x[i] * s + center;
  }
  template <class Rng, class X>
  void sample(Rng& rng, X&& x) const noexcept {
    sample(rng, x.data(), x.size());
  }
};

/// The energy terms of the blocks after the position, in block order (block 1 first).
template <class... Terms>
struct Energy {
  std::tuple<Terms...> terms;
  static constexpr int count = static_cast<int>(sizeof...(Terms));
};

}  // namespace sgmcmc
