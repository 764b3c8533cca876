// SPDX-License-Identifier: MIT
// SGNHT (MATH.md §2.1–2.2): z = (θ, r, ξ), H = U + rᵀr/2 + (d/2)(ξ - A)², D = diag(0, A I, 0),
// Q = [[0,-I,0],[I,0,r/d],[0,-rᵀ/d,0]], Γ = (0, 0, -1). Kick–drift order: r, θ, ξ.
#pragma once

#include "sgmcmc/samplers/sampler.hpp"

namespace sgmcmc {

namespace detail {
/// Entry i of SGNHT's column r/d of Q (block momentum × thermostat).
template <int Dim>
struct MomentumOverDim {
  template <class X>
  typename X::Scalar operator()(const X& x) const noexcept {
    using T = typename X::Scalar;
    return x.momentum() * T(1.0 / Dim);
  }
};
/// Γ of that column, per coordinate: ∂(r_i/d)/∂ξ = 0 for the momentum rows, and
/// ∂(r_i/d)/∂r_i = 1/d summed over i = 1 for the thermostat (the engine subtracts it: Γ_ξ = -1).
template <class Scalar, int Dim>
struct MomentumOverDimGamma {
  static constexpr bool zero_rows = true;  ///< rows() is 0 for every state: the pass skips it
  template <class X>
  Scalar rows(const X&) const noexcept {
    return Scalar(0);
  }
  template <class X>
  Scalar cols(const X&) const noexcept {
    return Scalar(1) / Scalar(Dim);
  }
};
}  // namespace detail

/// The thermostat coupling of SGNHT with analytic Γ (Gamma = AutoGamma: by AD, as tests check).
template <class Scalar, int Dim, class Gamma = detail::MomentumOverDimGamma<Scalar, Dim>>
using ThermostatCoupling = ElementwiseColumn<detail::MomentumOverDim<Dim>, Gamma>;

/// The recipe declaration behind SGNHT (Gamma chooses how Γ is computed; the sampler uses the
/// analytic one).
template <class Scalar, int Dim, class Integrator = Sweep<Momentum, Position, Thermostat>,
          class Gamma = detail::MomentumOverDimGamma<Scalar, Dim>>
using SGNHTRecipe =
    Recipe<Scalar, Layout<Dim, Dim, 1>, Energy<GaussianKinetic<Scalar>, QuadraticEnergy<Scalar>>,
           Diffusion<Zero, Scaled<Scalar>, Zero>,
           Curl<SkewPair<Momentum, Position, Identity>,
                SkewPair<Momentum, Thermostat, ThermostatCoupling<Scalar, Dim, Gamma>>>,
           Integrator>;

/// Parameters of SGNHT.
template <class Scalar>
struct SGNHTParams {
  Scalar step_size{Scalar(1e-2)};  ///< h
  Scalar diffusion{Scalar(1)};     ///< A >= 0: injected diffusion, and ξ's target mean
};

/// Stochastic-gradient Nosé–Hoover thermostat (Ding et al. 2014) in its recipe form.
template <class Scalar, int Dim, class Integrator = Sweep<Momentum, Position, Thermostat>>
class SGNHT : public RecipeSampler<SGNHT<Scalar, Dim, Integrator>,
                                   SGNHTRecipe<Scalar, Dim, Integrator>, SGNHTParams<Scalar>> {
  using Base = RecipeSampler<SGNHT<Scalar, Dim, Integrator>, SGNHTRecipe<Scalar, Dim, Integrator>,
                             SGNHTParams<Scalar>>;
  template <class, class, int, class, class, class>
  friend class SamplerBase;

 public:
  using Params = SGNHTParams<Scalar>;
  explicit SGNHT(const Params& p = Params{}) noexcept : Base(p) {}

  template <class Gamma = detail::MomentumOverDimGamma<Scalar, Dim>>
  static SGNHTRecipe<Scalar, Dim, Integrator, Gamma> make_recipe(const Params& p) noexcept {
    return {Energy<GaussianKinetic<Scalar>, QuadraticEnergy<Scalar>>{
                {GaussianKinetic<Scalar>{Scalar(1)},
                 QuadraticEnergy<Scalar>{Scalar(Dim), p.diffusion}}},
            Diffusion<Zero, Scaled<Scalar>, Zero>{{Zero{}, Scaled<Scalar>{p.diffusion}, Zero{}}},
            typename SGNHTRecipe<Scalar, Dim, Integrator, Gamma>::CurlType{}, p.step_size};
  }

 private:
  /// (θ₀, r = 0, ξ = A).
  template <class St, class X>
  Status init_state(St& z, const X&) const noexcept {
    z.thermostat()[0] = this->params_.diffusion;
    return StatusCode::Ok;
  }
  /// start(z, θ0, rng): (θ0, r ~ N(0, T I), ξ ~ N(A, T/d)), the auxiliary variables from their
  /// exact stationary laws at the temperature T (the energy's terms).
  template <class St, class X, class Rng>
  Status init_state(St& z, const X&, Rng& rng) const noexcept {
    const auto& terms = this->recipe_.energy().terms;
    std::get<0>(terms).sample(rng, z.momentum());
    std::get<1>(terms).sample(rng, z.thermostat());
    if (const Scalar t = this->recipe_.temperature(); t != Scalar(1)) {
      const Scalar s = std::sqrt(t);
      const Scalar a = this->params_.diffusion;
      z.momentum() *= s;
      z.thermostat()[0] = a + (z.thermostat()[0] - a) * s;
    }
    return StatusCode::Ok;
  }
};

template <int Dim>
using SGNHTf = SGNHT<float, Dim>;
template <int Dim>
using SGNHTd = SGNHT<double, Dim>;

}  // namespace sgmcmc
