// SPDX-License-Identifier: MIT
// SGRHMC / gSGRHMC (MATH.md §2.1–2.2): z = (θ, r), H = U + rᵀr/2, D = diag(0, G⁻¹),
// Q = [[0, −S], [S, 0]] with S = G^{-1/2}, Γ = (0, ∇·S); and the recipe paper's synthetic metric.
#pragma once

#include <cmath>
#include <type_traits>

#include <Eigen/Core>
#include <unsupported/Eigen/AutoDiff>

#include "sgmcmc/core/linalg.hpp"
#include "sgmcmc/core/recipe.hpp"
#include "sgmcmc/samplers/sghmc.hpp"
#include "sgmcmc/samplers/sgrld.hpp"

namespace sgmcmc {

/// Γ of SGRHMC's skew pair by forward-mode automatic differentiation of the metric:
/// rows (∇·S)_i = Σ_j ∂_j S_ij (MATH.md §2.1), columns zero (S does not depend on r).
/// Scalar and diagonal S: differentiate S = √(G⁻¹) directly (Dim directions, or one if the
/// metric is separable). Dense S: differentiate G⁻¹ (Dim directions) and map each ∂_j G⁻¹ to
/// ∂_j S through the derivative of the matrix square root in G⁻¹'s eigenbasis V, λ:
///   Vᵀ(∂_j S)V = (Vᵀ(∂_j G⁻¹)V) ⊘ (√λ_a + √λ_b)    (Daleckii–Krein; S² = G⁻¹ differentiated),
/// which needs no derivative of the eigen-decomposition itself and no heap.
template <class Scalar, int Dim, class MetricT>
struct SqrtMetricDivergence {
  MetricT metric{};

  template <class Z, class Ctx>
  Vector<Scalar, Dim> rows(const Z& z, const Ctx& ctx) const noexcept {
    using Shape = typename MetricT::ShapeType;
    constexpr int K = MetricT::separable ? 1 : Dim;
    using AD = Eigen::AutoDiffScalar<Vector<Scalar, K>>;
    Vector<AD, Dim> th;
    for (Index i = 0; i < Dim; ++i) {
      th[i] = AD(z.position()[i], Vector<Scalar, K>::Zero());
      th[i].derivatives()[K == 1 ? 0 : i] = Scalar(1);
    }
    Vector<Scalar, Dim> out;
    if constexpr (std::is_same_v<Shape, ScalarShape>) {
      const AD s = metric.sqrt_inverse(th, ctx);
      out = s.derivatives();
    } else if constexpr (std::is_same_v<Shape, DiagonalShape>) {
      const Vector<AD, Dim> s = metric.sqrt_inverse(th, ctx);
      for (Index i = 0; i < Dim; ++i) out[i] = s[i].derivatives()[K == 1 ? 0 : i];
    } else {
      const Matrix<AD, Dim, Dim> a = metric.inverse(th, ctx);
      Matrix<Scalar, Dim, Dim> a0;
      for (Index i = 0; i < Dim; ++i) {
        for (Index k = 0; k < Dim; ++k) a0(i, k) = a(i, k).value();
      }
      out.setZero();
      if (!a0.allFinite()) return a0.col(0);  // not finite: the engine reports NonFiniteMetric
      Vector<Scalar, Dim> lambda;
      Matrix<Scalar, Dim, Dim> v;
      detail::symmetric_eigen(a0, lambda, v);
      const Vector<Scalar, Dim> sig = lambda.cwiseMax(Scalar(0)).cwiseSqrt();
      Matrix<Scalar, Dim, Dim> da;
      Matrix<Scalar, Dim, Dim> e;
      for (Index j = 0; j < Dim; ++j) {
        for (Index i = 0; i < Dim; ++i) {
          for (Index k = 0; k < Dim; ++k) da(i, k) = a(i, k).derivatives()[j];
        }
        e.noalias() = v.transpose() * da * v;
        for (Index p = 0; p < Dim; ++p) {
          for (Index q = 0; q < Dim; ++q) {
            const Scalar den = sig[p] + sig[q];
            e(p, q) = den > Scalar(0) ? e(p, q) / den : Scalar(0);
          }
        }
        // column j of ∂_j S = V E Vᵀ e_j
        out.noalias() += v * (e * v.row(j).transpose());
      }
    }
    return out;
  }

  template <class Z, class Ctx>
  Vector<Scalar, Dim> cols(const Z&, const Ctx&) const noexcept {
    return Vector<Scalar, Dim>::Zero();
  }
};

namespace detail {
/// The GammaFn of SGRHMC's skew pair for a Divergence choice: AutoGamma → SqrtMetricDivergence,
/// ZeroGamma → ZeroGamma (the naive control), otherwise the user's ∇·S.
template <class Scalar, int Dim, class MetricT, class Divergence>
using SGRHMCPairGamma =
    std::conditional_t<std::is_same_v<Divergence, AutoGamma>,
                       SqrtMetricDivergence<Scalar, Dim, MetricT>,
                       std::conditional_t<std::is_same_v<Divergence, ZeroGamma>, ZeroGamma,
                                          UserDivergence<Scalar, Dim, Divergence>>>;

template <class Scalar, int Dim, class MetricT, class Divergence>
using SGRHMCPair =
    SkewPair<Momentum, Position,
             StateDependent<typename MetricT::ShapeType, SqrtInverseMetricBlock<MetricT>, false,
                            SGRHMCPairGamma<Scalar, Dim, MetricT, Divergence>>>;

/// D_rr = G⁻¹(θ): differentiated against r only, so its Γ is zero exactly.
template <class MetricT>
using SGRHMCDiffusionBlock =
    StateDependent<typename MetricT::ShapeType, InverseMetricBlock<MetricT>, false, ZeroGamma>;
}  // namespace detail

/// The recipe declaration behind SGRHMC (and, with Divergence = ZeroGamma, naive SGRHMC).
template <class Scalar, int Dim, class MetricT, class Divergence = AutoGamma,
          class Integrator = ExplicitEuler>
using SGRHMCRecipe = Recipe<Scalar, Layout<Dim, Dim>, Energy<GaussianKinetic<Scalar>>,
                            Diffusion<Zero, detail::SGRHMCDiffusionBlock<MetricT>>,
                            Curl<detail::SGRHMCPair<Scalar, Dim, MetricT, Divergence>>, Integrator>;

/// Parameters of SGRHMC.
template <class Scalar, class MetricT, class Divergence>
struct SGRHMCParams {
  Scalar step_size{Scalar(1e-2)};  ///< h
  MetricT metric{};                ///< G(θ) or G⁻¹(θ)
  Divergence divergence{};         ///< analytic ∇·S, or the AutoGamma / ZeroGamma marker
};

namespace detail {
template <class Scalar, int Dim, class MetricT, class Divergence, class Integrator>
SGRHMCRecipe<Scalar, Dim, MetricT, Divergence, Integrator> sgrhmc_recipe(
    const SGRHMCParams<Scalar, MetricT, Divergence>& p) noexcept {
  using DB = SGRHMCDiffusionBlock<MetricT>;
  using Pair = SGRHMCPair<Scalar, Dim, MetricT, Divergence>;
  DB d;
  d.fn.metric = p.metric;
  Pair q;
  q.a.fn.metric = p.metric;
  if constexpr (std::is_same_v<Divergence, AutoGamma>) {
    q.a.gamma.metric = p.metric;
  } else if constexpr (!std::is_same_v<Divergence, ZeroGamma>) {
    q.a.gamma.div = p.divergence;
  }
  return {Energy<GaussianKinetic<Scalar>>{{GaussianKinetic<Scalar>{Scalar(1)}}},
          Diffusion<Zero, DB>{{Zero{}, d}}, Curl<Pair>{{q}}, p.step_size};
}
}  // namespace detail

/// Stochastic-gradient Riemann HMC (Ma, Chen & Fox 2015, §3.2); with any SPD G, gSGRHMC.
/// Explicit Euler is the paper's Algorithm 1 (MATH.md §2.2), everything at (θ_t, r_t):
///   θ' = θ + hSr;  r' = r − hSg − hG⁻¹r + hT∇·S + N(0, h(2TG⁻¹ − hSV̂S)).
/// KickDrift (Sweep<Momentum, Position>) updates r' first, then θ' = θ + hS(θ_t)r' (MATH.md §1.3);
/// it is the default, as for SGHMC. Divergence: AutoGamma (∇·S by forward-mode automatic
/// differentiation, SqrtMetricDivergence), a user type div(θ[, ctx]) returning ∇·S, or ZeroGamma
/// (naive.hpp). A non-finite metric gives NonFiniteMetric, a G⁻¹ that is not PSD (dense: not PD)
/// NoiseNotPSD, both with the state unchanged. Per step, explicit Euler evaluates S three times
/// (two drifts, the B̂ correction) and G⁻¹ twice; dense S costs a Dim x Dim eigen-decomposition.
/// Stability: the friction is G⁻¹ (with unit mass), so kick–drift needs h < 2/λmax(G⁻¹) and
/// explicit Euler h < 1/λmax(G⁻¹) (docs/samplers/sgrhmc.md).
template <class Scalar, int Dim, class MetricT, class Divergence = AutoGamma,
          class Integrator = KickDrift>
class SGRHMC : public RecipeSampler<SGRHMC<Scalar, Dim, MetricT, Divergence, Integrator>,
                                    SGRHMCRecipe<Scalar, Dim, MetricT, Divergence, Integrator>,
                                    SGRHMCParams<Scalar, MetricT, Divergence>> {
  using Base = RecipeSampler<SGRHMC<Scalar, Dim, MetricT, Divergence, Integrator>,
                             SGRHMCRecipe<Scalar, Dim, MetricT, Divergence, Integrator>,
                             SGRHMCParams<Scalar, MetricT, Divergence>>;

 public:
  using Params = SGRHMCParams<Scalar, MetricT, Divergence>;
  explicit SGRHMC(const Params& p = Params{}) noexcept : Base(p) {}

  static SGRHMCRecipe<Scalar, Dim, MetricT, Divergence, Integrator> make_recipe(
      const Params& p) noexcept {
    return detail::sgrhmc_recipe<Scalar, Dim, MetricT, Divergence, Integrator>(p);
  }

  /// Redraws r ~ N(0, I): an exact Gibbs move (Algorithm 1's optional periodic resampling).
  /// Returns status() (and draws nothing) if the parameters are invalid.
  template <class St, class Rng>
  Status refresh_momentum(St& z, Rng& rng) const noexcept {
    if (Status s = this->status(); !s) return s;
    fill_normal(rng, z.momentum());
    return StatusCode::Ok;
  }
};

// ---------------------------------------------------------------------------------------------
// The recipe paper's synthetic gSGRHMC metric (Supplement F.1, MATH.md §5.1).

/// G⁻¹(θ) = D √max(|Ũ(θ) + C|, floor) I with Ũ the model's minibatch potential value, read as
/// ctx.model.potential(θ) (templated on the scalar, so that automatic differentiation sees it).
/// The paper's D = 1.5 and C = 0.5. Without the floor G⁻¹ vanishes where Ũ + C = 0 (for
/// θ⁴ − 2θ² at |θ| = 0.541196 and 1.306563) and ∇·S ∝ |Ũ + C|^{-3/4} is unbounded there. The floor
/// (default 0.01, our choice) keeps S ≥ √D floor^{1/4} = 0.39 and |∇·S| ≤ (√D/4) floor^{-3/4} |∇Ũ|
/// = 9.7 |∇Ũ|. The floored metric is itself a valid metric (continuous, positive), and Γ below
/// is its exact divergence (zero where the floor is active), so the sampler stays a recipe
/// instance: the floor changes the dynamics, not the target.
template <class Scalar>
struct PotentialMetric {
  Scalar scale{Scalar(1.5)};   ///< D > 0
  Scalar shift{Scalar(0.5)};   ///< C
  Scalar floor{Scalar(0.01)};  ///< lower bound on |Ũ + C|, > 0

  /// True iff D > 0, C finite and floor > 0 (all finite).
  bool valid() const noexcept {
    return scale > Scalar(0) && floor > Scalar(0) && std::isfinite(scale) && std::isfinite(shift) &&
           std::isfinite(floor);
  }

  template <class T, int Dim, class Ctx>
  T operator()(const Vector<T, Dim>& theta, const Ctx& ctx) const noexcept {
    static_assert(!std::is_same_v<Ctx, NoContext>,
                  "sgmcmc: PotentialMetric reads the model's potential, so it is only defined "
                  "inside a step (or Recipe::gamma(z, model))");
    using std::abs;
    using std::sqrt;
    T a = abs(detail::potential_at(ctx.model, theta) + T(shift));
    if (a < T(floor)) a = T(floor);  // a constant: zero derivative where the floor is active
    return T(T(scale) * T(sqrt(a)));
  }
};

/// Analytic ∇·S for PotentialMetric, from the gradient the step already has (ctx.gradient):
/// S = √D a^{1/4}, a = max(|x|, floor), x = Ũ + C, so ∇·S = ∇S = (√D/4) a^{-3/4} sign(x) ∇Ũ where
/// |x| > floor, else 0 (MATH.md §5.1). One potential evaluation, no differentiation.
template <class Scalar>
struct PotentialMetricSqrtDivergence {
  PotentialMetric<Scalar> metric{};

  template <int Dim, class Ctx>
  Vector<Scalar, Dim> operator()(const Vector<Scalar, Dim>& theta, const Ctx& ctx) const noexcept {
    static_assert(!std::is_same_v<Ctx, NoContext>,
                  "sgmcmc: PotentialMetricSqrtDivergence needs the step's model and gradient");
    const Scalar x = detail::potential_at(ctx.model, theta) + metric.shift;
    const Scalar a = std::abs(x);
    if (!(a > metric.floor)) return Vector<Scalar, Dim>::Zero();
    const Scalar c = std::sqrt(metric.scale) / Scalar(4) / std::pow(a, Scalar(0.75));
    return (x > Scalar(0) ? c : -c) * ctx.gradient;
  }
};

/// Analytic Γ for SGRLD with PotentialMetric: Γ = ∇(D √a) = (D/2) a^{-1/2} sign(x) ∇Ũ where
/// |x| > floor, else 0.
template <class Scalar>
struct PotentialMetricDivergence {
  PotentialMetric<Scalar> metric{};

  template <int Dim, class Ctx>
  Vector<Scalar, Dim> operator()(const Vector<Scalar, Dim>& theta, const Ctx& ctx) const noexcept {
    static_assert(!std::is_same_v<Ctx, NoContext>,
                  "sgmcmc: PotentialMetricDivergence needs the step's model and gradient");
    const Scalar x = detail::potential_at(ctx.model, theta) + metric.shift;
    const Scalar a = std::abs(x);
    if (!(a > metric.floor)) return Vector<Scalar, Dim>::Zero();
    const Scalar c = metric.scale / (Scalar(2) * std::sqrt(a));
    return (x > Scalar(0) ? c : -c) * ctx.gradient;
  }
};

/// The metric descriptor of the synthetic experiments (scalar shape: G⁻¹ = g(θ) I).
template <class Scalar>
using PotentialInverseMetric = InverseMetric<ScalarShape, PotentialMetric<Scalar>>;

/// Parameters of gSGRHMC with the synthetic metric.
template <class Scalar>
struct GSGRHMCParams {
  Scalar step_size{Scalar(1e-2)};    ///< h
  PotentialMetric<Scalar> metric{};  ///< D, C and the floor
};

/// gSGRHMC with the synthetic metric (MATH.md §5.1). Γ is analytic by default
/// (PotentialMetricSqrtDivergence, from the step's gradient); Divergence = AutoGamma
/// differentiates the model's potential instead (tested equal). The model's potential is the
/// minibatch value Ũ matching the gradient; for AutoGamma it must be a template over the Eigen
/// type of θ (or over the scalar: template <class T> T potential(const Vector<T, Dim>&) const).
/// Integrator: ExplicitEuler (Algorithm 1, the default here) or KickDrift. A metric with D ≤ 0,
/// floor ≤ 0 or a non-finite D, C or floor makes status() and every step InvalidParameter
/// (PotentialMetric::valid, checked by the recipe at configuration).
template <class Scalar, int Dim, class Divergence = PotentialMetricSqrtDivergence<Scalar>,
          class Integrator = ExplicitEuler>
class GSGRHMC
    : public RecipeSampler<
          GSGRHMC<Scalar, Dim, Divergence, Integrator>,
          SGRHMCRecipe<Scalar, Dim, PotentialInverseMetric<Scalar>, Divergence, Integrator>,
          GSGRHMCParams<Scalar>> {
  using Base = RecipeSampler<
      GSGRHMC<Scalar, Dim, Divergence, Integrator>,
      SGRHMCRecipe<Scalar, Dim, PotentialInverseMetric<Scalar>, Divergence, Integrator>,
      GSGRHMCParams<Scalar>>;

 public:
  using Params = GSGRHMCParams<Scalar>;
  explicit GSGRHMC(const Params& p = Params{}) noexcept : Base(p) {}

  static SGRHMCRecipe<Scalar, Dim, PotentialInverseMetric<Scalar>, Divergence, Integrator>
  make_recipe(const Params& p) noexcept {
    SGRHMCParams<Scalar, PotentialInverseMetric<Scalar>, Divergence> q;
    q.step_size = p.step_size;
    q.metric.fn = p.metric;
    if constexpr (std::is_same_v<Divergence, PotentialMetricSqrtDivergence<Scalar>>) {
      q.divergence.metric = p.metric;
    }
    return detail::sgrhmc_recipe<Scalar, Dim, PotentialInverseMetric<Scalar>, Divergence,
                                 Integrator>(q);
  }
};

}  // namespace sgmcmc
