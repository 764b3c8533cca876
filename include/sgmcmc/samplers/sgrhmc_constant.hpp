// SPDX-License-Identifier: MIT
// SGRHMC and SGRLD with a constant metric: G⁻¹ given by values (scalar, diagonal inline or in
// caller memory: the fused engine, any d; or dense), S = G^{-1/2} from them, Γ = 0 at compile
// time, no differentiation (docs/samplers/constant-metric.md).
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

#include "sgmcmc/core/linalg.hpp"
#include "sgmcmc/samplers/sampler.hpp"
#include "sgmcmc/samplers/sghmc.hpp"
#include "sgmcmc/samplers/sgld.hpp"

namespace sgmcmc {

namespace detail {
/// √x for x ≥ 0, NaN otherwise (a negative G⁻¹ entry is then refused by the recipe's check of
/// its Q block, without a std::sqrt domain error, which would set errno).
template <class Scalar>
Scalar sqrt_or_nan(Scalar x) noexcept {
  return x >= Scalar(0) ? std::sqrt(x) : std::numeric_limits<Scalar>::quiet_NaN();
}
}  // namespace detail

/// diag(√v) with v in caller-owned memory of N scalars: S = G^{-1/2} next to a DiagonalMap G⁻¹
/// over the same values (a DiagonalMap whose lane is the square root). Lanewise constant: the
/// fused engine takes one square root per coordinate and use; a negative or non-finite entry
/// makes the recipe's parameters invalid.
template <class Scalar, int N>
struct SqrtDiagonalMap : DiagonalMap<Scalar, N> {
  Scalar lane(Index i) const noexcept { return detail::sqrt_or_nan(this->values[i]); }
};

namespace detail {
/// The structure of S = G^{-1/2} for a constant G⁻¹ of structure DS, and how to build it.
template <class DS>
struct SqrtOfStructure;
template <class Scalar>
struct SqrtOfStructure<Scaled<Scalar>> {
  using type = Scaled<Scalar>;
  static type make(const Scaled<Scalar>& g) noexcept { return {sqrt_or_nan(g.value)}; }
};
template <class Scalar, int N>
struct SqrtOfStructure<Diagonal<Scalar, N>> {
  using type = Diagonal<Scalar, N>;
  static type make(const Diagonal<Scalar, N>& g) noexcept {
    type s;
    for (Index i = 0; i < N; ++i) s.value[i] = sqrt_or_nan(g.value[i]);
    return s;
  }
};
template <class Scalar, int N>
struct SqrtOfStructure<Dense<Scalar, N, N>> {
  using type = Dense<Scalar, N, N>;
  /// The principal square root by a Jacobi eigen-decomposition (core/linalg.hpp), negative
  /// eigenvalues mapped to 0 (a G⁻¹ that is not positive definite is refused by the D check) and
  /// a non-finite G⁻¹ passed through (refused alike).
  static type make(const Dense<Scalar, N, N>& g) noexcept {
    type s;
    if (!g.value.allFinite()) {
      s.value = g.value;
      return s;
    }
    Vector<Scalar, N> lambda;
    Matrix<Scalar, N, N> v;
    symmetric_eigen(g.value, lambda, v);
    s.value = v * lambda.cwiseMax(Scalar(0)).cwiseSqrt().asDiagonal() * v.transpose();
    return s;
  }
};
template <class Scalar, int N>
struct SqrtOfStructure<DiagonalMap<Scalar, N>> {
  using type = SqrtDiagonalMap<Scalar, N>;
  static type make(const DiagonalMap<Scalar, N>& g) noexcept { return {{g.values}}; }
};
}  // namespace detail

/// The recipe declaration behind constant-metric SGRHMC: z = (θ, r), H = U + rᵀr/2,
/// D = diag(0, G⁻¹), Q = [[0, −S], [S, 0]], S = G^{-1/2}, all constant: Γ = 0.
template <class Scalar, int Dim, class DS, class Integrator = KickDrift>
using ConstantMetricSGRHMCRecipe =
    Recipe<Scalar, Layout<Dim, Dim>, Energy<GaussianKinetic<Scalar>>, Diffusion<Zero, DS>,
           Curl<SkewPair<Momentum, Position, typename detail::SqrtOfStructure<DS>::type>>,
           Integrator>;

/// Parameters of constant-metric SGRHMC.
template <class Scalar, class DS>
struct ConstantMetricSGRHMCParams {
  Scalar step_size{Scalar(1e-2)};  ///< h > 0
  DS inverse_metric{};             ///< G⁻¹ ≥ 0 (default: identity; DiagonalMap: set values)
};

/// SGRHMC (MATH.md §2.1–2.2) with a constant metric, as a recipe of constant structures: a
/// diagonal one runs the fused engine (one pass per update, any d), and none pays for Γ, where
/// SGRHMC with a metric callable differentiates it (automatic differentiation, general path,
/// small d only) to find Γ = 0. Kick–drift (default, MATH.md §1.3):
///   r' = r − hSg − hG⁻¹r + N(0, h(2TG⁻¹ − hSV̂S));  θ' = θ + hSr'.
/// DS gives G⁻¹: Scaled<Scalar> (s I), Diagonal<Scalar, Dim> (values held, small d) or
/// DiagonalMap<Scalar, Dim> (values in caller memory, any d; S = √ per coordinate in the pass),
/// all on the fused engine; or Dense<Scalar, Dim, Dim> (symmetric positive definite; S computed
/// once, at construction; the engine's general path, small d, no differentiation).
/// Equivalently (p = G^{1/2} r): SGHMC with mass matrix M = G and friction C = I
/// (docs/samplers/constant-metric.md). Stability: the friction is G⁻¹, so kick–drift needs
/// h < 2/max G⁻¹_ii. A negative or non-finite G⁻¹ entry makes status() InvalidParameter.
template <class Scalar, int Dim, class DS = Diagonal<Scalar, Dim>, class Integrator = KickDrift>
class ConstantMetricSGRHMC
    : public RecipeSampler<ConstantMetricSGRHMC<Scalar, Dim, DS, Integrator>,
                           ConstantMetricSGRHMCRecipe<Scalar, Dim, DS, Integrator>,
                           ConstantMetricSGRHMCParams<Scalar, DS>> {
  using Base = RecipeSampler<ConstantMetricSGRHMC<Scalar, Dim, DS, Integrator>,
                             ConstantMetricSGRHMCRecipe<Scalar, Dim, DS, Integrator>,
                             ConstantMetricSGRHMCParams<Scalar, DS>>;

 public:
  using Params = ConstantMetricSGRHMCParams<Scalar, DS>;
  explicit ConstantMetricSGRHMC(const Params& p = Params{}) noexcept : Base(p) {}

  /// The recipe of parameters p.
  static ConstantMetricSGRHMCRecipe<Scalar, Dim, DS, Integrator> make_recipe(
      const Params& p) noexcept {
    using Pair = SkewPair<Momentum, Position, typename detail::SqrtOfStructure<DS>::type>;
    return {Energy<GaussianKinetic<Scalar>>{{GaussianKinetic<Scalar>{Scalar(1)}}},
            Diffusion<Zero, DS>{{Zero{}, p.inverse_metric}},
            Curl<Pair>{{Pair{detail::SqrtOfStructure<DS>::make(p.inverse_metric)}}}, p.step_size};
  }

  /// Redraws r ~ N(0, I): an exact Gibbs move. Returns status() (and draws nothing) if the
  /// parameters are invalid.
  template <class St, class Rng>
  Status refresh_momentum(St& z, Rng& rng) const noexcept {
    if (Status s = this->status(); !s) return s;
    fill_normal(rng, z.momentum());
    return StatusCode::Ok;
  }
};

/// SGRLD with a constant metric is SGLD with D₀ = G⁻¹ (MATH.md §2.1: Γ_i = Σ_j ∂_j G⁻¹_ij = 0):
/// this name only points there. DS: Scaled, Diagonal, DiagonalMap or Dense (SGLD's parameter
/// `diffusion` is G⁻¹).
template <class Scalar, int Dim, class DS = Diagonal<Scalar, Dim>>
using ConstantMetricSGRLD = SGLD<Scalar, Dim, DS>;

}  // namespace sgmcmc
