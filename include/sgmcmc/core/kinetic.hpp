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
  template <class X>
  Scalar energy(const Eigen::MatrixBase<X>& r) const noexcept {
    return r.squaredNorm() / (Scalar(2) * mass);
  }
  /// r ~ N(0, m I).
  template <class Rng, int N>
  void sample(Rng& rng, Vector<Scalar, N>& r) const noexcept {
    fill_normal(rng, r);
    r *= std::sqrt(mass);
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
  template <class X>
  Scalar energy(const Eigen::MatrixBase<X>& x) const noexcept {
    return weight * (x.array() - center).matrix().squaredNorm() / Scalar(2);
  }
  /// x ~ N(c, I / w).
  template <class Rng, int N>
  void sample(Rng& rng, Vector<Scalar, N>& x) const noexcept {
    fill_normal(rng, x);
    x = (x / std::sqrt(weight)).array() + center;
  }
};

/// The energy terms of the blocks after the position, in block order (block 1 first).
template <class... Terms>
struct Energy {
  std::tuple<Terms...> terms;
  static constexpr int count = static_cast<int>(sizeof...(Terms));
};

}  // namespace sgmcmc
