// SPDX-License-Identifier: MIT
// SGMGT and SGMGT-D (Zhang et al. 2017; MATH.md §2.1, §3.3–3.5): monomial-gamma thermostats as
// recipe declarations, with the exact Gibbs resampling of p and ξ on a user-owned step counter.
#pragma once

#include <cmath>
#include <cstdint>

#include "sgmcmc/core/kinetic.hpp"
#include "sgmcmc/core/kinetic_mg.hpp"
#include "sgmcmc/core/recipe.hpp"

namespace sgmcmc {

namespace detail {
/// The state-dependent block γ diag ∇K_c(p) of Q joining momentum (rows) and thermostat (columns)
/// (MATH.md §2.1, SGMGT-D row; γ = 1 for SGMGT).
template <class Scalar, int Dim>
struct KineticCouplingFn {
  SoftMonomialGammaKinetic<Scalar> kinetic{};
  Scalar gamma{1};
  /// γ finite and > 0 (the recipe checks it at configuration; the kinetic is the energy's).
  bool valid() const noexcept { return gamma > Scalar(0) && std::isfinite(gamma); }
  template <class Z>
  Vector<Scalar, Dim> operator()(const Z& z) const noexcept {
    return kinetic.gradient(z.momentum()) * gamma;
  }
};

/// Γ of that block, analytically: Σ_k ∂A_ik/∂ξ_k = 0 for the momentum rows, and
/// Σ_k ∂A_ki/∂p_k = γ ∂²K_c(p_i) for the thermostat (the engine subtracts it: Γ_ξ = −γ diag∇²K_c).
template <class Scalar, int Dim>
struct KineticCouplingGamma {
  SoftMonomialGammaKinetic<Scalar> kinetic{};
  Scalar gamma{1};
  template <class Z>
  auto rows(const Z&) const noexcept {
    return Vector<Scalar, Dim>::Zero();
  }
  template <class Z>
  Vector<Scalar, Dim> cols(const Z& z) const noexcept {
    return kinetic.curvature(z.momentum()) * gamma;
  }
};
}  // namespace detail

/// The Q block γ diag∇K_c(p) with analytic Γ. Gamma may be replaced (tests use a wrong-sign Γ as
/// a negative control); it must be an aggregate {kinetic, gamma} with rows(z) and cols(z).
template <class Scalar, int Dim, class Gamma = detail::KineticCouplingGamma<Scalar, Dim>>
using KineticCoupling =
    StateDependent<DiagonalShape, detail::KineticCouplingFn<Scalar, Dim>, true, Gamma>;

/// z = (θ, p, ξ), ξ ∈ R^d; H = U + K_c(p) + F(ξ); Q = [[0,−I,0],[I,0,γ diag∇K_c],[0,−γ
/// diag∇K_c,0]].
template <class Scalar, int Dim, class DiffusionT, class Integrator, class Gamma>
using MonomialGammaRecipe =
    Recipe<Scalar, Layout<Dim, Dim, Dim>,
           Energy<SoftMonomialGammaKinetic<Scalar>, QuadraticEnergy<Scalar>>, DiffusionT,
           Curl<SkewPair<Momentum, Position, Identity>,
                SkewPair<Momentum, Thermostat, KineticCoupling<Scalar, Dim, Gamma>>>,
           Integrator>;

/// Kick–drift for the monomial-gamma samplers: p, then θ (new p), then ξ (new p) (MATH.md §1.3).
using MonomialGammaSweep = Sweep<Momentum, Position, Thermostat>;

/// The condition of MATH.md §3.4 for SGMGT-D: 2D − hB̂ ⪰ 0 on each coordinate's (θ_i, p_i) block,
/// B̂ = [[σ_θ²v, σ_θv], [σ_θv, v]], i.e. hvσ_θ ≤ 2 and hv(1 + σ_θσ_p) ≤ 2σ_p (σ_θ > 0), or
/// hv ≤ 2σ_p (σ_θ = 0). v is the gradient-noise variance V̂_ii ≥ 0.
template <class Scalar>
constexpr bool sgmgtd_noise_psd(Scalar h, Scalar v, Scalar sigma_theta, Scalar sigma_p) noexcept {
  if (!(h > Scalar(0)) || !(v >= Scalar(0)) || !(sigma_theta >= Scalar(0)) ||
      !(sigma_p >= Scalar(0))) {
    return false;
  }
  const Scalar hv = h * v;
  if (sigma_theta == Scalar(0)) return hv <= Scalar(2) * sigma_p;
  return hv * sigma_theta <= Scalar(2) &&
         hv * (Scalar(1) + sigma_theta * sigma_p) <= Scalar(2) * sigma_p;
}
/// The same for every coordinate of V̂ = diag(v).
template <class Scalar, int N>
bool sgmgtd_noise_psd(Scalar h, const Vector<Scalar, N>& v, Scalar sigma_theta,
                      Scalar sigma_p) noexcept {
  for (Index i = 0; i < N; ++i) {
    if (!sgmgtd_noise_psd(h, v[i], sigma_theta, sigma_p)) return false;
  }
  return true;
}

namespace detail {

/// What SGMGT and SGMGT-D share on top of their recipe: parameter checks the engine does not
/// know about (the resampling period), starts, and the exact Gibbs moves of MATH.md §3.5.
template <class Base>
class MonomialGammaSampler : public Base {
 public:
  using typename Base::Scalar;
  using typename Base::StateType;
  static constexpr int dim = Base::dim;
  using PositionVector = Vector<Scalar, dim>;

  /// Ok iff every parameter is valid; step() returns this otherwise.
  Status status() const noexcept { return own_ ? Base::status() : own_; }

  /// Resampling period R (0: never).
  std::uint32_t resample_period() const noexcept { return period_; }
  const SoftMonomialGammaKinetic<Scalar>& kinetic() const noexcept {
    return std::get<0>(this->energy().terms);
  }
  const QuadraticEnergy<Scalar>& thermostat_energy() const noexcept {
    return std::get<1>(this->energy().terms);
  }

  /// (θ₀, p = 0, ξ = F's centre). Fine for a = 1; for a = 2 prefer start(theta0, rng), since
  /// ∂²K_c is capped at its (large) value at p = 0 and would kick the thermostat on step one.
  StateType start(const PositionVector& theta0) const noexcept {
    StateType z;
    z.position() = theta0;
    z.thermostat().setConstant(thermostat_energy().center);
    return z;
  }
  /// (θ₀, p ~ exp(−K_c), ξ ~ exp(−F)): the auxiliary variables drawn from their exact laws.
  template <class Rng>
  StateType start(const PositionVector& theta0, Rng& rng) const noexcept {
    StateType z = start(theta0);
    resample_momentum(z, rng);
    resample_thermostat(z, rng);
    return z;
  }

  /// p ← a draw from its exact conditional exp(−K_c(p)) (MATH.md §3.2, §3.5): a Gibbs move that
  /// preserves exp(−H), since H is separable in (θ, p, ξ).
  template <class Rng>
  void resample_momentum(StateType& z, Rng& rng) const noexcept {
    kinetic().sample(rng, z.momentum());
  }
  /// ξ ← a draw from exp(−F(ξ)): N(A, I) for SGMGT, N(σ_p, γI) for SGMGT-D (MATH.md §3.5).
  template <class Rng>
  void resample_thermostat(StateType& z, Rng& rng) const noexcept {
    thermostat_energy().sample(rng, z.thermostat());
  }

  /// One step of the dynamics (no resampling). On failure z is unchanged.
  /// NonFiniteState if z holds a NaN or Inf (checked before anything else is evaluated).
  template <class Model, class Rng>
  Status step(StateType& z, const Model& model, Rng& rng) const noexcept {
    if (!own_) return own_;
    if (!Base::status()) return Base::status();
    if (!z.all_finite()) return StatusCode::NonFiniteState;
    return Base::step(z, model, rng);
  }
  /// One step with the given standard normals (ordered as the diffusive blocks: SGMGT p;
  /// SGMGT-D θ, p, ξ).
  template <class Model>
  Status step_with_noise(StateType& z, const Model& model,
                         const typename Base::NoiseVector& zeta) const noexcept {
    if (!own_) return own_;
    if (!Base::status()) return Base::status();
    if (!z.all_finite()) return StatusCode::NonFiniteState;
    return Base::step_with_noise(z, model, zeta);
  }

  /// One step with the periodic stochastic resampling of MATH.md §3.5, driven by the user-owned
  /// counter t (the sampler keeps no state): if R > 0, p is redrawn when t ≡ 0 (mod R) and ξ
  /// when t ≡ ⌊R/2⌋ (mod R), then the dynamics steps once. t advances by one only on success;
  /// on failure z and t are unchanged.
  template <class Model, class Rng>
  Status step(StateType& z, const Model& model, Rng& rng, std::uint64_t& t) const noexcept {
    if (!own_) return own_;
    if (!Base::status()) return Base::status();
    if (!z.all_finite()) return StatusCode::NonFiniteState;
    StateType w = z;
    if (period_ > 0) {
      const std::uint64_t phase = t % period_;
      if (phase == 0) resample_momentum(w, rng);
      if (phase == period_ / 2) resample_thermostat(w, rng);
    }
    const Status s = Base::step(w, model, rng);
    if (!s) return s;
    z = w;
    ++t;
    return s;
  }

 protected:
  template <class... Args>
  MonomialGammaSampler(int period, Args&&... args) noexcept
      : Base(static_cast<Args&&>(args)...),
        period_(period > 0 ? static_cast<std::uint32_t>(period) : 0U),
        own_(period >= 0 ? StatusCode::Ok : StatusCode::InvalidParameter) {}

 private:
  std::uint32_t period_;
  Status own_;
};

}  // namespace detail

/// Parameters of SGMGT (MATH.md §3.3); code defaults of §3.6 for a = 1 where they apply.
template <class Scalar>
struct SGMGTParams {
  Scalar step_size{Scalar(1e-2)};  ///< h
  int shape{1};                    ///< a ∈ {1, 2}: K = Σ|p_i|^{1/a}/m (softened)
  Scalar mass{1};                  ///< m > 0
  Scalar softness{5};              ///< c > 0 (code: 5 for a = 1, 3 for a = 2)
  Scalar diffusion{1};             ///< A ≥ 0: D_pp = A I, and ξ's target mean
  int resample_period{0};          ///< R ≥ 0 for step(z, model, rng, t); 0: never (code: 50)
};

template <class Scalar, int Dim, class Integrator = MonomialGammaSweep,
          class Gamma = detail::KineticCouplingGamma<Scalar, Dim>>
using SGMGTRecipe =
    MonomialGammaRecipe<Scalar, Dim, Diffusion<Zero, Scaled<Scalar>, Zero>, Integrator, Gamma>;

/// Stochastic-gradient monomial-gamma thermostat (MATH.md §2.1, §3.3): z = (θ, p, ξ ∈ R^d),
/// H = U + K_c(p) + ½‖ξ − A‖², D = diag(0, A I, 0), Γ = (0, 0, −diag∇²K_c). The step is
///   p ← p − h[g + ξ⊙∇K_c(p)] + N(0, h(2A − hV̂));  θ ← θ + h∇K_c(p);  ξ ← ξ + h[(∇K_c)² − ∂²K_c](p)
/// (kick–drift; ExplicitEuler evaluates all three at the old state, as the authors' code does).
/// V̂ (set_gradient_noise) is supported: it only enters the momentum block.
template <class Scalar, int Dim, class Integrator = MonomialGammaSweep,
          class Gamma = detail::KineticCouplingGamma<Scalar, Dim>>
class SGMGT : public detail::MonomialGammaSampler<SGMGTRecipe<Scalar, Dim, Integrator, Gamma>> {
  using Recipe_ = SGMGTRecipe<Scalar, Dim, Integrator, Gamma>;
  using Base = detail::MonomialGammaSampler<Recipe_>;

 public:
  static_assert(Dim > 0, "Dim must be positive");
  using Params = SGMGTParams<Scalar>;

  explicit SGMGT(const Params& p) noexcept
      : Base(p.resample_period, make_energy(p),
             Diffusion<Zero, Scaled<Scalar>, Zero>{{Zero{}, Scaled<Scalar>{p.diffusion}, Zero{}}},
             make_curl(p), p.step_size),
        params_(p) {}

  const Params& params() const noexcept { return params_; }

 private:
  static SoftMonomialGammaKinetic<Scalar> make_kinetic(const Params& p) noexcept {
    return {p.shape, p.mass, p.softness};
  }
  static typename Recipe_::EnergyType make_energy(const Params& p) noexcept {
    return {{make_kinetic(p), QuadraticEnergy<Scalar>{Scalar(1), p.diffusion}}};
  }
  static typename Recipe_::CurlType make_curl(const Params& p) noexcept {
    typename Recipe_::CurlType q{};
    auto& a = std::get<1>(q.pairs).a;
    a.fn = {make_kinetic(p), Scalar(1)};
    a.gamma = Gamma{make_kinetic(p), Scalar(1)};
    return q;
  }
  Params params_;
};

/// Parameters of SGMGT-D (MATH.md §3.4); the code's values (§3.6) are a = 1: m = 1, c = 5,
/// σ_θ = 0.01, σ_p = 10, σ_ξ = 0.01, γ = 0.001 and a = 2: m = 1, c = 3, γ = 1 (same σ's).
template <class Scalar>
struct SGMGTDParams {
  Scalar step_size{Scalar(1e-2)};    ///< h
  int shape{1};                      ///< a ∈ {1, 2}
  Scalar mass{1};                    ///< m > 0
  Scalar softness{5};                ///< c > 0
  Scalar sigma_theta{Scalar(0.01)};  ///< σ_θ ≥ 0: Langevin diffusion on θ
  Scalar sigma_p{10};                ///< σ_p ≥ 0: diffusion on p, and ξ's target mean
  Scalar sigma_xi{Scalar(0.01)};     ///< σ_ξ ≥ 0: Langevin diffusion on ξ
  Scalar gamma{Scalar(1e-3)};        ///< γ > 0: coupling, and ξ's target variance
  int resample_period{0};            ///< R ≥ 0; 0: never (code: 50)
};

template <class Scalar, int Dim, class Integrator = MonomialGammaSweep,
          class Gamma = detail::KineticCouplingGamma<Scalar, Dim>>
using SGMGTDRecipe =
    MonomialGammaRecipe<Scalar, Dim, Diffusion<Scaled<Scalar>, Scaled<Scalar>, Scaled<Scalar>>,
                        Integrator, Gamma>;

/// SGMGT-D (MATH.md §2.1, §3.4): z = (θ, p, ξ), H = U + K_c(p) + F(ξ), F = ‖ξ − σ_p‖²/(2γ),
/// D = diag(σ_θI, σ_pI, σ_ξI), Q with γ diag∇K_c, Γ = (0, 0, −γ diag∇²K_c):
///   θ ← θ + h[∇K_c(p) − σ_θg] + N(0, 2hσ_θ)
///   p ← p − h[ξ⊙∇K_c(p) + g] + N(0, 2hσ_p)
///   ξ ← ξ + h[γ((∇K_c)² − ∂²K_c)(p) − (σ_ξ/γ)(ξ − σ_p)] + N(0, 2hσ_ξ)
/// (kick–drift order p, θ, ξ by default; ExplicitEuler is the code's update, §3.6). g is used in
/// both θ and p, as MATH.md requires.
/// Gradient noise: B̂ couples θ and p (P = (σ_θI, I, 0)ᵀ). The engine does not yet draw noise
/// jointly across two blocks, so set_gradient_noise with any V̂_ii > 0 makes status()
/// StatusCode::Unsupported (honestly: no silent under-correction). sgmgtd_noise_psd() checks the
/// §3.4 condition the joint draw will need.
template <class Scalar, int Dim, class Integrator = MonomialGammaSweep,
          class Gamma = detail::KineticCouplingGamma<Scalar, Dim>>
class SGMGTD : public detail::MonomialGammaSampler<SGMGTDRecipe<Scalar, Dim, Integrator, Gamma>> {
  using Recipe_ = SGMGTDRecipe<Scalar, Dim, Integrator, Gamma>;
  using Base = detail::MonomialGammaSampler<Recipe_>;

 public:
  static_assert(Dim > 0, "Dim must be positive");
  using Params = SGMGTDParams<Scalar>;

  explicit SGMGTD(const Params& p) noexcept
      : Base(p.resample_period, make_energy(p),
             Diffusion<Scaled<Scalar>, Scaled<Scalar>, Scaled<Scalar>>{
                 {Scaled<Scalar>{p.sigma_theta}, Scaled<Scalar>{p.sigma_p},
                  Scaled<Scalar>{p.sigma_xi}}},
             make_curl(p), p.step_size),
        params_(p) {}

  const Params& params() const noexcept { return params_; }

  /// The §3.4 condition for V̂ = diag(v) at this sampler's h, σ_θ, σ_p.
  bool noise_psd(const Vector<Scalar, Dim>& v) const noexcept {
    return sgmgtd_noise_psd(this->step_size(), v, params_.sigma_theta, params_.sigma_p);
  }

 private:
  static SoftMonomialGammaKinetic<Scalar> make_kinetic(const Params& p) noexcept {
    return {p.shape, p.mass, p.softness};
  }
  static typename Recipe_::EnergyType make_energy(const Params& p) noexcept {
    return {{make_kinetic(p), QuadraticEnergy<Scalar>{Scalar(1) / p.gamma, p.sigma_p}}};
  }
  static typename Recipe_::CurlType make_curl(const Params& p) noexcept {
    typename Recipe_::CurlType q{};
    auto& a = std::get<1>(q.pairs).a;
    a.fn = {make_kinetic(p), p.gamma};
    a.gamma = Gamma{make_kinetic(p), p.gamma};
    return q;
  }
  Params params_;
};

template <int Dim>
using SGMGTf = SGMGT<float, Dim>;
template <int Dim>
using SGMGTd = SGMGT<double, Dim>;
template <int Dim>
using SGMGTDf = SGMGTD<float, Dim>;
template <int Dim>
using SGMGTDd = SGMGTD<double, Dim>;

}  // namespace sgmcmc
