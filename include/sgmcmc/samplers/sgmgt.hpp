// SPDX-License-Identifier: MIT
// SGMGT and SGMGT-D (Zhang et al. 2017; MATH.md §2.1, §3.3–3.5): monomial-gamma thermostats as
// recipe declarations, with the exact Gibbs resampling of p and ξ driven by a step counter that
// lives in the state (its bookkeeping).
#pragma once

#include <cmath>
#include <cstdint>

#include "sgmcmc/core/kinetic.hpp"
#include "sgmcmc/core/kinetic_mg.hpp"
#include "sgmcmc/samplers/sampler.hpp"

namespace sgmcmc {

namespace detail {
/// Entry i of the Q block γ diag ∇K_c(p) joining momentum (rows) and thermostat (columns)
/// (MATH.md §2.1, SGMGT-D row; γ = 1 for SGMGT).
/// Its entry is γ ∂H/∂p_i, since make_recipe gives it the energy's own kinetic: it says so
/// (energy_gradient_block), and the fused engine takes ∂H/∂p_i from its per-coordinate cache
/// instead of evaluating ∇K_c again (core/recipe.hpp, q_lane_value).
template <class Scalar>
struct KineticCouplingFn {
  static constexpr int energy_gradient_block = 1;
  SoftMonomialGammaKinetic<Scalar> kinetic{};
  Scalar gamma{1};
  Scalar energy_gradient_scale() const noexcept { return gamma; }
  /// γ finite and > 0 (the recipe checks it at configuration; the kinetic is the energy's).
  bool valid() const noexcept { return gamma > Scalar(0) && std::isfinite(gamma); }
  template <class X>
  Scalar operator()(const X& x) const noexcept {
    return kinetic.gradient1(x.momentum()) * gamma;
  }
};

/// Γ of that block per coordinate: ∂A_ii/∂ξ_i = 0 for the momentum rows, and
/// ∂A_ii/∂p_i = γ ∂²K_c(p_i) for the thermostat (the engine subtracts it: Γ_ξ = −γ diag∇²K_c).
template <class Scalar>
struct KineticCouplingGamma {
  SoftMonomialGammaKinetic<Scalar> kinetic{};
  Scalar gamma{1};
  template <class X>
  Scalar rows(const X&) const noexcept {
    return Scalar(0);
  }
  template <class X>
  Scalar cols(const X& x) const noexcept {
    return kinetic.curvature1(x.momentum()) * gamma;
  }
};
}  // namespace detail

/// The Q block γ diag∇K_c(p) with analytic Γ (Gamma: any aggregate {kinetic, gamma} with rows(x)
/// and cols(x); tests build a wrong-sign one as a negative control).
template <class Scalar, class Gamma = detail::KineticCouplingGamma<Scalar>>
using KineticCoupling = Elementwise<detail::KineticCouplingFn<Scalar>, Gamma>;

/// z = (θ, p, ξ), ξ ∈ R^d; H = U + K_c(p) + F(ξ); Q = [[0,−I,0],[I,0,γ diag∇K_c],[0,−γ
/// diag∇K_c,0]].
template <class Scalar, int Dim, class DiffusionT, class Integrator, class Gamma>
using MonomialGammaRecipe =
    Recipe<Scalar, Layout<Dim, Dim, Dim>,
           Energy<SoftMonomialGammaKinetic<Scalar>, QuadraticEnergy<Scalar>>, DiffusionT,
           Curl<SkewPair<Momentum, Position, Identity>,
                SkewPair<Momentum, Thermostat, KineticCoupling<Scalar, Gamma>>>,
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

/// The per-chain bookkeeping of the monomial-gamma samplers: steps taken since start.
struct MonomialGammaExtra {
  std::uint64_t steps = 0;
};

namespace detail {

/// x mod m for a period 0 < m < 2^31 (a resampling period is an int) in 32-bit arithmetic: the
/// high word reduced by one 32-bit division, the low word joined in two halves of 16 bits (two
/// more) when m < 2^16, else bit by bit (32 shift-and-subtract steps; every remainder stays below
/// m < 2^31, so 2r + 1 fits). The same value as x % m (test_sgmgt).
constexpr std::uint32_t mod_period_narrow(std::uint64_t x, std::uint32_t m) noexcept {
  const auto lo = static_cast<std::uint32_t>(x);
  std::uint32_t r = static_cast<std::uint32_t>(x >> 32) % m;
  if (m <= 0xFFFFu) {
    r = ((r << 16) | (lo >> 16)) % m;
    return ((r << 16) | (lo & 0xFFFFu)) % m;
  }
  for (int b = 31; b >= 0; --b) {
    r = (r << 1) | ((lo >> b) & 1u);
    if (r >= m) r -= m;
  }
  return r;
}
/// x mod m: x % m where the target divides 64-bit words, else mod_period_narrow. On a 32-bit
/// target x % m is a call to the run-time library's 64-bit division (__aeabi_uldivmod: 0.7 KB of
/// flash on the Cortex-M4F, for SGMGT's counter alone).
constexpr std::uint32_t mod_period(std::uint64_t x, std::uint32_t m) noexcept {
#if UINTPTR_MAX > 0xFFFFFFFFu
  return static_cast<std::uint32_t>(x % m);
#else
  return mod_period_narrow(x, m);
#endif
}

/// What SGMGT and SGMGT-D share on top of their recipe: the resampling period (a parameter the
/// engine does not know), starts, and the exact Gibbs moves of MATH.md §3.5.
/// The state has two scratch vectors: the gradient and the momentum being redrawn.
template <class Derived, class RecipeT, class Params>
class MonomialGammaSampler : public RecipeSampler<Derived, RecipeT, Params, 2, MonomialGammaExtra> {
  using Base = RecipeSampler<Derived, RecipeT, Params, 2, MonomialGammaExtra>;
  template <class, class, int, class, class, class>
  friend class sgmcmc::SamplerBase;

 public:
  using typename Base::Scalar;
  static constexpr int dim = RecipeT::dim;
  /// step also advances the counter and resamples (Gamma draws): no step_with_noise.
  static constexpr bool has_noise_tick = false;

  /// Resampling period R (0: never).
  std::uint32_t resample_period() const noexcept {
    return this->params_.resample_period > 0
               ? static_cast<std::uint32_t>(this->params_.resample_period)
               : 0U;
  }
  const SoftMonomialGammaKinetic<Scalar>& kinetic() const noexcept {
    return std::get<0>(this->recipe_.energy().terms);
  }
  const QuadraticEnergy<Scalar>& thermostat_energy() const noexcept {
    return std::get<1>(this->recipe_.energy().terms);
  }

  /// p ← a draw from its exact conditional exp(−K_c(p)) (MATH.md §3.2, §3.5): a Gibbs move that
  /// preserves exp(−H), since H is separable in (θ, p, ξ). CapReached (z unchanged) if a draw
  /// reached its rejection cap.
  template <class St, class Rng>
  Status resample_momentum(St& z, Rng& rng) const noexcept {
    if (Status s = this->status(); !s) return s;
    Scalar* p = detail::StateAccess::scratch(z, 1);
    if (!kinetic().sample(rng, p, dim)) return StatusCode::CapReached;
    z.momentum() = ConstVectorMap<Scalar, dim>(p);
    return StatusCode::Ok;
  }
  /// ξ ← a draw from exp(−F(ξ)): N(A, I) for SGMGT, N(σ_p, γI) for SGMGT-D (MATH.md §3.5).
  template <class St, class Rng>
  Status resample_thermostat(St& z, Rng& rng) const noexcept {
    if (Status s = this->status(); !s) return s;
    thermostat_energy().sample(rng, z.thermostat());
    return StatusCode::Ok;
  }

 protected:
  explicit MonomialGammaSampler(const Params& p) noexcept : Base(p) {}

 private:
  Status current_status() const noexcept {
    if (this->params_.resample_period < 0) return StatusCode::InvalidParameter;
    return this->recipe_.status();
  }
  /// (θ₀, p = 0, ξ = F's centre). Fine for a = 1; for a = 2 prefer start(θ₀, rng), since
  /// ∂²K_c is capped at its (large) value at p = 0 and would kick the thermostat on step one.
  template <class St, class X>
  Status init_state(St& z, const X&) const noexcept {
    z.thermostat().setConstant(thermostat_energy().center);
    return StatusCode::Ok;
  }
  /// (θ₀, p ~ exp(−K_c), ξ ~ exp(−F)): the auxiliary variables drawn from their exact laws.
  template <class St, class X, class Rng>
  Status init_state(St& z, const X& theta0, Rng& rng) const noexcept {
    static_cast<void>(init_state(z, theta0));
    if (Status s = resample_momentum(z, rng); !s) return s;
    return resample_thermostat(z, rng);
  }

  /// One step of the dynamics, then the periodic resampling of MATH.md §3.5 on the state's step
  /// counter t (bookkeeping): if R > 0, after the step that makes t ≡ 0 (mod R) p is redrawn, and
  /// after the one that makes t ≡ ⌊R/2⌋ (mod R) ξ is. On any failure (the dynamics, or a draw at
  /// its cap) z and t are unchanged: the step is undone by switching back to the copy it left.
  template <class St, class Model, class Rng>
  Status step_state(St& z, const Model& model, Rng& rng) const noexcept {
    if (Status s = current_status(); !s) return s;
    if (!z.all_finite()) return StatusCode::NonFiniteState;
    MonomialGammaExtra e = z.extra();
    if (Status s = this->recipe_.step(z, model, rng); !s) return s;
    ++e.steps;
    const std::uint32_t period = resample_period();
    if (period > 0) {
      const std::uint32_t phase = mod_period(e.steps, period);
      if (phase == 0) {
        Scalar* p = detail::StateAccess::scratch(z, 1);
        if (!kinetic().sample(rng, p, dim)) {
          detail::StateAccess::flip(z);  // back to the copy the step read: z as it was
          return StatusCode::CapReached;
        }
        z.momentum() = ConstVectorMap<Scalar, dim>(p);
      }
      if (phase == period / 2) thermostat_energy().sample(rng, z.thermostat());
    }
    z.set_extra(e);
    return StatusCode::Ok;
  }
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
  int resample_period{0};          ///< R ≥ 0: p and ξ redrawn every R steps; 0: never (code: 50)
};

template <class Scalar, int Dim, class Integrator = MonomialGammaSweep,
          class Gamma = detail::KineticCouplingGamma<Scalar>>
using SGMGTRecipe =
    MonomialGammaRecipe<Scalar, Dim, Diffusion<Zero, Scaled<Scalar>, Zero>, Integrator, Gamma>;

/// Stochastic-gradient monomial-gamma thermostat (MATH.md §2.1, §3.3): z = (θ, p, ξ ∈ R^d),
/// H = U + K_c(p) + ½‖ξ − A‖², D = diag(0, A I, 0), Γ = (0, 0, −diag∇²K_c). The step is
///   p ← p − h[g + ξ⊙∇K_c(p)] + N(0, h(2A − hV̂));  θ ← θ + h∇K_c(p);  ξ ← ξ + h[(∇K_c)² − ∂²K_c](p)
/// (kick–drift; ExplicitEuler evaluates all three at the old state, as the authors' code does).
/// V̂ (set_gradient_noise) is supported: it only enters the momentum block.
template <class Scalar, int Dim, class Integrator = MonomialGammaSweep>
class SGMGT : public detail::MonomialGammaSampler<SGMGT<Scalar, Dim, Integrator>,
                                                  SGMGTRecipe<Scalar, Dim, Integrator>,
                                                  SGMGTParams<Scalar>> {
  using Base =
      detail::MonomialGammaSampler<SGMGT<Scalar, Dim, Integrator>,
                                   SGMGTRecipe<Scalar, Dim, Integrator>, SGMGTParams<Scalar>>;

 public:
  using Params = SGMGTParams<Scalar>;
  explicit SGMGT(const Params& p = Params{}) noexcept : Base(p) {}

  /// The recipe of parameters p, with the coupling's Γ from Gamma.
  template <class Gamma = detail::KineticCouplingGamma<Scalar>>
  static SGMGTRecipe<Scalar, Dim, Integrator, Gamma> make_recipe(const Params& p) noexcept {
    const SoftMonomialGammaKinetic<Scalar> k{p.shape, p.mass, p.softness};
    typename SGMGTRecipe<Scalar, Dim, Integrator, Gamma>::CurlType q{};
    auto& a = std::get<1>(q.pairs).a;
    a.fn = {k, Scalar(1)};
    a.gamma = Gamma{k, Scalar(1)};
    return {{{k, QuadraticEnergy<Scalar>{Scalar(1), p.diffusion}}},
            Diffusion<Zero, Scaled<Scalar>, Zero>{{Zero{}, Scaled<Scalar>{p.diffusion}, Zero{}}},
            q,
            p.step_size};
  }
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
          class Gamma = detail::KineticCouplingGamma<Scalar>>
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
/// Gradient noise: B̂ couples θ and p (P = (σ_θI, I, 0)ᵀ). The engine does not draw noise jointly
/// across two blocks, so set_gradient_noise with any V̂_ii > 0 makes status()
/// StatusCode::Unsupported (honestly: no silent under-correction). sgmgtd_noise_psd() checks the
/// §3.4 condition the joint draw will need.
template <class Scalar, int Dim, class Integrator = MonomialGammaSweep>
class SGMGTD : public detail::MonomialGammaSampler<SGMGTD<Scalar, Dim, Integrator>,
                                                   SGMGTDRecipe<Scalar, Dim, Integrator>,
                                                   SGMGTDParams<Scalar>> {
  using Base =
      detail::MonomialGammaSampler<SGMGTD<Scalar, Dim, Integrator>,
                                   SGMGTDRecipe<Scalar, Dim, Integrator>, SGMGTDParams<Scalar>>;

 public:
  using Params = SGMGTDParams<Scalar>;
  explicit SGMGTD(const Params& p = Params{}) noexcept : Base(p) {}

  template <class Gamma = detail::KineticCouplingGamma<Scalar>>
  static SGMGTDRecipe<Scalar, Dim, Integrator, Gamma> make_recipe(const Params& p) noexcept {
    const SoftMonomialGammaKinetic<Scalar> k{p.shape, p.mass, p.softness};
    typename SGMGTDRecipe<Scalar, Dim, Integrator, Gamma>::CurlType q{};
    auto& a = std::get<1>(q.pairs).a;
    a.fn = {k, p.gamma};
    a.gamma = Gamma{k, p.gamma};
    return {
        {{k, QuadraticEnergy<Scalar>{Scalar(1) / p.gamma, p.sigma_p}}},
        Diffusion<Scaled<Scalar>, Scaled<Scalar>, Scaled<Scalar>>{
            {Scaled<Scalar>{p.sigma_theta}, Scaled<Scalar>{p.sigma_p}, Scaled<Scalar>{p.sigma_xi}}},
        q,
        p.step_size};
  }

  /// The §3.4 condition for V̂ = diag(v) at this sampler's h, σ_θ, σ_p.
  bool noise_psd(const Vector<Scalar, Dim>& v) const noexcept {
    return sgmgtd_noise_psd(this->step_size(), v, this->params_.sigma_theta, this->params_.sigma_p);
  }
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
