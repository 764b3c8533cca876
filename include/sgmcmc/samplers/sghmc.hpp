// SPDX-License-Identifier: MIT
// SGHMC (MATH.md §2.1–2.2): z = (θ, r), H = U + rᵀr/(2m), D = diag(0, C), Q = [[0,-I],[I,0]].
// Kick–drift by default (MATH.md §1.3): r ← r - hg - hCr/m + N(0, h(2C - hV̂)); θ ← θ + hr/m.
#pragma once

#include <cmath>

#include "sgmcmc/core/recipe.hpp"

namespace sgmcmc {

/// Kick–drift: momentum first, then position from the new momentum.
using KickDrift = Sweep<Momentum, Position>;
/// Drift–kick: position first (SGHMC paper's Algorithm 2).
using DriftKick = Sweep<Position, Momentum>;

template <class Scalar, int Dim, class Integrator = KickDrift, bool Cold = false>
using SGHMCRecipe = Recipe<Scalar, Layout<Dim, Dim>, Energy<GaussianKinetic<Scalar>>,
                           Diffusion<Zero, Scaled<Scalar>>,
                           Curl<SkewPair<Momentum, Position, Identity>>, Integrator, Cold>;

/// Parameters of SGHMC; the SGD-with-momentum form converts with from_momentum_sgd().
template <class Scalar>
struct SGHMCParams {
  Scalar step_size{Scalar(1e-2)};  ///< h
  Scalar friction{Scalar(1)};      ///< C >= 0 (MATH.md's C: D = diag(0, C))
  Scalar mass{Scalar(1)};          ///< m > 0, M = m I

  /// From "SGD with momentum" parameters (MATH.md §2.2): learning rate η, momentum decay α
  /// (momentum coefficient 1 - α), with m = 1: h = √η, C = α/√η. The velocity is v = h r.
  static SGHMCParams from_momentum_sgd(Scalar eta, Scalar alpha) noexcept {
    SGHMCParams p;
    p.step_size = std::sqrt(eta);
    p.friction = alpha / p.step_size;
    p.mass = Scalar(1);
    return p;
  }
};

/// Stochastic-gradient Hamiltonian Monte Carlo with friction C (Chen, Fox & Guestrin 2014).
template <class Scalar, int Dim, class Integrator = KickDrift>
class SGHMC : public SGHMCRecipe<Scalar, Dim, Integrator> {
  using Base = SGHMCRecipe<Scalar, Dim, Integrator>;

 public:
  static_assert(Dim > 0, "Dim must be positive");
  using Params = SGHMCParams<Scalar>;

  explicit SGHMC(const Params& p) noexcept
      : Base(Energy<GaussianKinetic<Scalar>>{{GaussianKinetic<Scalar>{p.mass}}},
             Diffusion<Zero, Scaled<Scalar>>{{Zero{}, Scaled<Scalar>{p.friction}}},
             Curl<SkewPair<Momentum, Position, Identity>>{}, p.step_size) {}

  /// (θ₀, r = 0).
  typename Base::StateType start(const Vector<Scalar, Dim>& theta0) const noexcept {
    typename Base::StateType z;
    z.position() = theta0;
    return z;
  }
  /// Redraws r ~ N(0, m I): an exact Gibbs move, valid on any state-independent schedule.
  template <class Rng>
  void refresh_momentum(typename Base::StateType& z, Rng& rng) const noexcept {
    std::get<0>(this->energy().terms).sample(rng, z.momentum());
  }
};

template <int Dim>
using SGHMCf = SGHMC<float, Dim>;
template <int Dim>
using SGHMCd = SGHMC<double, Dim>;

}  // namespace sgmcmc
