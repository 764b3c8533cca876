// SPDX-License-Identifier: MIT
// Float test models for the on-target sampler firmware: a 2-D Gaussian target and models
// that return a NaN or an overflowing gradient (bad-input controls).
#pragma once

#include <limits>

#include "sgmcmc/core/types.hpp"

namespace fw {

/// Dimension of the stationarity target.
inline constexpr int kDim = 2;
using Vec = sgmcmc::Vector<float, kDim>;

// Every model is written against the model concept (core/model.hpp): templates over the Eigen
// types of θ and the gradient, so the engine passes maps of the state's memory, no copies.

/// U(θ) = Σ θ_i² / (2 σ_i²) with σ = (1, 1.5): an axis-aligned Gaussian, mean 0.
struct Gaussian {
  static constexpr float kVar[kDim] = {1.0f, 2.25f};  ///< σ_i²
  template <class Theta, class Grad>
  void gradient(const Theta& th, Grad& g) const noexcept {
    for (int i = 0; i < kDim; ++i) g[i] = th[i] / kVar[i];
  }
  template <class Theta>
  float potential(const Theta& th) const noexcept {
    float u = 0.0f;
    for (int i = 0; i < kDim; ++i) u += 0.5f * th[i] * th[i] / kVar[i];
    return u;
  }
};

/// Gradient is NaN: every sampler must return NonFiniteGradient.
struct NanGradient {
  template <class Theta, class Grad>
  void gradient(const Theta&, Grad& g) const noexcept {
    g.setConstant(std::numeric_limits<float>::quiet_NaN());
  }
  template <class Theta>
  float potential(const Theta&) const noexcept {
    return 0.0f;
  }
};

/// Gradient is finite but huge: with a large step the next state overflows (NonFiniteState).
struct HugeGradient {
  template <class Theta, class Grad>
  void gradient(const Theta&, Grad& g) const noexcept {
    g.setConstant(3.0e38f);
  }
  template <class Theta>
  float potential(const Theta&) const noexcept {
    return 0.0f;
  }
};

/// Finite gradient, NaN potential: HMC's Metropolis test must refuse it.
struct NanPotential {
  template <class Theta, class Grad>
  void gradient(const Theta& th, Grad& g) const noexcept {
    g = th;
  }
  template <class Theta>
  float potential(const Theta&) const noexcept {
    return std::numeric_limits<float>::quiet_NaN();
  }
};

}  // namespace fw
