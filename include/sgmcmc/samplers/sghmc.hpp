// SPDX-License-Identifier: MIT
// SGHMC (MATH.md §2.1–2.2): z = (θ, r), H = U + rᵀr/(2m), D = diag(0, C), Q = [[0,-I],[I,0]].
// Kick–drift by default (MATH.md §1.3): r ← r - hg - hCr/m + N(0, h(2TC - hV̂)); θ ← θ + hr/m.
#pragma once

#include <cmath>

#include "sgmcmc/samplers/sampler.hpp"

namespace sgmcmc {

/// The recipe declaration behind SGHMC with any integrator (KickDrift, DriftKick, ExplicitEuler,
/// BAOAB, OBABO); Cold = true is SGD with momentum.
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

namespace detail {
template <class Scalar, int Dim, class Integrator, bool Cold>
SGHMCRecipe<Scalar, Dim, Integrator, Cold> sghmc_recipe(const SGHMCParams<Scalar>& p) noexcept {
  return {Energy<GaussianKinetic<Scalar>>{{GaussianKinetic<Scalar>{p.mass}}},
          Diffusion<Zero, Scaled<Scalar>>{{Zero{}, Scaled<Scalar>{p.friction}}},
          Curl<SkewPair<Momentum, Position, Identity>>{}, p.step_size};
}
}  // namespace detail

/// Stochastic-gradient Hamiltonian Monte Carlo with friction C (Chen, Fox & Guestrin 2014).
/// Integrator: KickDrift (default), DriftKick, ExplicitEuler (the oracle), or the splittings
/// BAOAB / OBABO (friction and noise solved exactly; no V̂ correction: set_gradient_noise then
/// gives Unsupported).
template <class Scalar, int Dim, class Integrator = KickDrift>
class SGHMC : public RecipeSampler<SGHMC<Scalar, Dim, Integrator>,
                                   SGHMCRecipe<Scalar, Dim, Integrator>, SGHMCParams<Scalar>> {
  using Base = RecipeSampler<SGHMC<Scalar, Dim, Integrator>, SGHMCRecipe<Scalar, Dim, Integrator>,
                             SGHMCParams<Scalar>>;

 public:
  using Params = SGHMCParams<Scalar>;
  explicit SGHMC(const Params& p = Params{}) noexcept : Base(p) {}

  static SGHMCRecipe<Scalar, Dim, Integrator> make_recipe(const Params& p) noexcept {
    return detail::sghmc_recipe<Scalar, Dim, Integrator, false>(p);
  }

  /// Redraws r ~ N(0, m I) in place: an exact Gibbs move, valid on any state-independent
  /// schedule. Returns status() (and draws nothing) if the parameters are invalid.
  template <class St, class Rng>
  Status refresh_momentum(St& z, Rng& rng) const noexcept {
    if (Status s = this->status(); !s) return s;
    std::get<0>(this->recipe_.energy().terms).sample(rng, z.momentum());
    return StatusCode::Ok;
  }

 private:
  template <class, class, int, class, class, class>
  friend class SamplerBase;
  using Base::init_state;
  /// start(z, θ0, rng): (θ0, r ~ N(0, T m I)), the momentum from its exact stationary law at
  /// the temperature T.
  template <class St, class X, class Rng>
  Status init_state(St& z, const X&, Rng& rng) const noexcept {
    std::get<0>(this->recipe_.energy().terms).sample(rng, z.momentum());
    if (const Scalar t = this->recipe_.temperature(); t != Scalar(1)) z.momentum() *= std::sqrt(t);
    return StatusCode::Ok;
  }
};

template <int Dim>
using SGHMCf = SGHMC<float, Dim>;
template <int Dim>
using SGHMCd = SGHMC<double, Dim>;

}  // namespace sgmcmc
