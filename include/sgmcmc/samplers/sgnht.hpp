// SPDX-License-Identifier: MIT
// SGNHT (MATH.md §2.1–2.2): z = (θ, r, ξ), H = U + rᵀr/2 + (d/2)(ξ - A)², D = diag(0, A I, 0),
// Q = [[0,-I,0],[I,0,r/d],[0,-rᵀ/d,0]], Γ = (0, 0, -1). Kick–drift order: r, θ, ξ.
#pragma once

#include "sgmcmc/core/recipe.hpp"

namespace sgmcmc {

namespace detail {
/// The state-dependent column r/d of SGNHT's Q (block momentum × thermostat).
template <int Dim>
struct MomentumOverDim {
  template <class Z>
  Vector<typename Z::Scalar, Dim> operator()(const Z& z) const noexcept {
    using T = typename Z::Scalar;
    return z.momentum() * T(1.0 / Dim);
  }
};
/// Γ of that column, analytically: Σ_k ∂(r_i/d)/∂ξ = 0 for the momentum rows, and
/// Σ_k ∂(r_k/d)/∂r_k = 1 for the thermostat (the engine subtracts it: Γ_ξ = -1).
template <class Scalar, int Dim>
struct MomentumOverDimGamma {
  template <class Z>
  Vector<Scalar, Dim> rows(const Z&) const noexcept {
    return Vector<Scalar, Dim>::Zero();
  }
  template <class Z>
  Vector<Scalar, 1> cols(const Z&) const noexcept {
    return Vector<Scalar, 1>::Ones();
  }
};
}  // namespace detail

/// The thermostat coupling of SGNHT with analytic Γ (Gamma = AutoGamma: by AD, for tests).
template <class Scalar, int Dim, class Gamma = detail::MomentumOverDimGamma<Scalar, Dim>>
using ThermostatCoupling = StateDependent<DenseShape, detail::MomentumOverDim<Dim>, true, Gamma>;

template <class Scalar, int Dim, class Integrator = Sweep<Momentum, Position, Thermostat>,
          class Gamma = detail::MomentumOverDimGamma<Scalar, Dim>>
using SGNHTRecipe =
    Recipe<Scalar, Layout<Dim, Dim, 1>, Energy<GaussianKinetic<Scalar>, QuadraticEnergy<Scalar>>,
           Diffusion<Zero, Scaled<Scalar>, Zero>,
           Curl<SkewPair<Momentum, Position, Identity>,
                SkewPair<Momentum, Thermostat, ThermostatCoupling<Scalar, Dim, Gamma>>>,
           Integrator>;

/// Stochastic-gradient Nosé–Hoover thermostat (Ding et al. 2014) in its recipe form.
template <class Scalar, int Dim, class Integrator = Sweep<Momentum, Position, Thermostat>,
          class Gamma = detail::MomentumOverDimGamma<Scalar, Dim>>
class SGNHT : public SGNHTRecipe<Scalar, Dim, Integrator, Gamma> {
  using Base = SGNHTRecipe<Scalar, Dim, Integrator, Gamma>;

 public:
  static_assert(Dim > 0, "Dim must be positive");
  struct Params {
    Scalar step_size{Scalar(1e-2)};  ///< h
    Scalar diffusion{Scalar(1)};     ///< A >= 0: injected diffusion, and ξ's target mean
  };

  explicit SGNHT(const Params& p) noexcept
      : Base(
            Energy<GaussianKinetic<Scalar>, QuadraticEnergy<Scalar>>{
                {GaussianKinetic<Scalar>{Scalar(1)},
                 QuadraticEnergy<Scalar>{Scalar(Dim), p.diffusion}}},
            Diffusion<Zero, Scaled<Scalar>, Zero>{{Zero{}, Scaled<Scalar>{p.diffusion}, Zero{}}},
            typename Base::CurlType{}, p.step_size) {}

  /// (θ₀, r = 0, ξ = A).
  typename Base::StateType start(const Vector<Scalar, Dim>& theta0) const noexcept {
    typename Base::StateType z;
    z.position() = theta0;
    z.thermostat()[0] = std::get<1>(this->energy().terms).center;
    return z;
  }
};

template <int Dim>
using SGNHTf = SGNHT<float, Dim>;
template <int Dim>
using SGNHTd = SGNHT<double, Dim>;

}  // namespace sgmcmc
