// SPDX-License-Identifier: MIT
// Models of the measuring firmware (size_probe.cpp, rt_steps.cpp): the cheapest Gaussian, so a
// step's figure is the sampler's own cost, and the separable metric of the Riemannian probes.
#pragma once

#include "sgmcmc/core/types.hpp"
#include "sgmcmc/samplers/sgrld.hpp"

namespace fw {

/// U = θᵀθ/2: the cheapest gradient, with a constant instruction count. Written against the
/// model concept (core/model.hpp): templates over the Eigen types the engine passes (maps of the
/// state's memory), and over the scalar, so that gSGRHMC's metric (which reads Ũ) can
/// differentiate the potential.
struct Isotropic {
  template <class Theta, class Grad>
  void gradient(const Theta& th, Grad& g) const noexcept {
    g = th;
  }
  template <class Theta>
  typename Theta::Scalar potential(const Theta& th) const noexcept {
    using T = typename Theta::Scalar;
    return T(0.5f) * th.squaredNorm();
  }
  /// diag ∇²U = 1 (pSGLD's Γ).
  template <class Theta, class Hess>
  void hessian_diagonal(const Theta&, Hess& h) const noexcept {
    h.setOnes();
  }
};

/// Separable diagonal G⁻¹(θ)_i = 0.5 + 1/(1 + θ_i²): Γ by AD in one direction.
struct SeparableInverse {
  template <class T, int N>
  sgmcmc::Vector<T, N> operator()(const sgmcmc::Vector<T, N>& th) const noexcept {
    sgmcmc::Vector<T, N> g;
    for (int i = 0; i < N; ++i) g[i] = T(0.5f) + T(1.0f) / (T(1.0f) + th[i] * th[i]);
    return g;
  }
};
using SeparableMetric = sgmcmc::InverseMetric<sgmcmc::DiagonalShape, SeparableInverse, true>;

}  // namespace fw
