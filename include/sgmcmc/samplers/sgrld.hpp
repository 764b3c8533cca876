// SPDX-License-Identifier: MIT
// SGRLD (MATH.md §2.1–2.2): z = θ, H = U, D = G⁻¹(θ), Q = 0, Γ_i = Σ_j ∂_j G⁻¹_ij, and the
// Riemannian metric descriptors (G⁻¹ or G; scalar, diagonal or dense) that SGRHMC shares.
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

#include "sgmcmc/core/linalg.hpp"
#include "sgmcmc/samplers/sampler.hpp"

namespace sgmcmc {

namespace detail {
/// The plain floating-point type under T (T itself, or an AutoDiffScalar's value type).
template <class T>
struct PlainScalar {
  using type = T;
};
template <class D>
struct PlainScalar<Eigen::AutoDiffScalar<D>> {
  using type = typename Eigen::internal::remove_all<D>::type::Scalar;
};
}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Riemannian metrics.

/// Form tags: the user's callable returns G⁻¹(θ) (the diffusion itself), or G(θ), which the
/// sampler inverts (scalar and diagonal: reciprocal; dense: fixed-size Cholesky).
struct GivesInverse {};
struct GivesMetric {};

/// A metric G(θ) given by a callable fn, in the shape of a structure (structure.hpp):
/// ScalarShape (fn returns a scalar g: the matrix is g I), DiagonalShape (a vector: diag(v)) or
/// DenseShape (a symmetric Dim x Dim matrix). fn is called as fn(θ) or, when it needs the model
/// (e.g. the minibatch potential value), fn(θ, ctx) with ctx a ModelContext (structure.hpp). It
/// must accept θ of any scalar type (plain or Eigen AutoDiffScalar), so write it as a template:
///   struct SimplexMetric {  // G⁻¹ = diag(θ): the expanded-mean simplex metric (MATH.md §2.2)
///     template <class T, int N> Vector<T, N> operator()(const Vector<T, N>& th) const {
///       return th;
///     }
///   };
/// Separable = true (diagonal shape only) promises that entry i depends on θ only through θ_i,
/// so that Γ by automatic differentiation costs one direction instead of Dim.
/// Class invariant: none; a metric that is not finite, or (G⁻¹ form) not positive semi-definite,
/// or (G form) not positive definite, makes the step fail with the state unchanged.
template <class Shape, class Fn, class Form = GivesInverse, bool Separable = false>
struct RiemannMetric {
  using ShapeType = Shape;
  using FnType = Fn;
  static constexpr bool separable = Separable;
  static constexpr bool gives_inverse = std::is_same_v<Form, GivesInverse>;
  static_assert(std::is_same_v<Form, GivesInverse> || std::is_same_v<Form, GivesMetric>,
                "the metric form is GivesInverse or GivesMetric");
  static_assert(!Separable || std::is_same_v<Shape, DiagonalShape>,
                "only a diagonal metric can be separable");

  Fn fn{};

  /// fn's own parameter check, if it declares one (e.g. PotentialMetric), else true.
  bool valid() const noexcept { return detail::params_valid(fn); }

  /// G⁻¹(θ): a scalar, a vector (diagonal) or a matrix (dense), in θ's scalar type.
  /// G form, dense: a G whose Cholesky factorisation fails gives a NaN matrix (the engine then
  /// reports NonFiniteMetric).
  template <class T, int Dim, class Ctx>
  auto inverse(const Vector<T, Dim>& theta, const Ctx& ctx) const noexcept {
    if constexpr (std::is_same_v<Shape, ScalarShape>) {
      const T g = T(detail::call_block(fn, theta, ctx));
      if constexpr (gives_inverse) {
        return g;
      } else {
        return T(T(1) / g);
      }
    } else if constexpr (std::is_same_v<Shape, DiagonalShape>) {
      const Vector<T, Dim> g = detail::call_block(fn, theta, ctx);
      if constexpr (gives_inverse) {
        return g;
      } else {
        return Vector<T, Dim>(g.cwiseInverse());
      }
    } else {
      const Matrix<T, Dim, Dim> g = detail::call_block(fn, theta, ctx);
      if constexpr (gives_inverse) {
        return g;
      } else {
        Matrix<T, Dim, Dim> inv;
        if (!detail::cholesky_inverse(g, inv)) {
          using P = typename detail::PlainScalar<T>::type;
          return Matrix<T, Dim, Dim>(
              Matrix<T, Dim, Dim>::Constant(T(std::numeric_limits<P>::quiet_NaN())));
        }
        return inv;
      }
    }
  }

  /// S = G^{-1/2}(θ), the principal square root of G⁻¹ (MATH.md §2.1). Scalar and diagonal:
  /// element-wise square root (any scalar type); dense: fixed-size symmetric eigen-decomposition
  /// (plain scalars only; Jacobi rotations, core/linalg.hpp: no heap, not even a reference to one).
  /// Negative eigenvalues of a non-PSD G⁻¹ are mapped to 0 here, so that the noise covariance
  /// check on the same G⁻¹ is what reports it (NoiseNotPSD).
  template <class T, int Dim, class Ctx>
  auto sqrt_inverse(const Vector<T, Dim>& theta, const Ctx& ctx) const noexcept {
    if constexpr (std::is_same_v<Shape, ScalarShape>) {
      return root(T(inverse(theta, ctx)));
    } else if constexpr (std::is_same_v<Shape, DiagonalShape>) {
      const Vector<T, Dim> g = inverse(theta, ctx);
      Vector<T, Dim> s;
      for (Index i = 0; i < Dim; ++i) s[i] = root(g[i]);
      return s;
    } else {
      static_assert(std::is_floating_point_v<T>,
                    "the dense S = G^{-1/2} is formed in plain scalars; its Γ comes from "
                    "SqrtMetricDivergence (sgrhmc.hpp), not from differentiating S");
      return sqrtm_psd(inverse(theta, ctx));
    }
  }

  /// √x for x > 0, 0 for x ≤ 0 (with a zero derivative: no infinite slope at 0), NaN for NaN.
  template <class T>
  static T root(const T& x) noexcept {
    using std::sqrt;
    if (x > T(0)) return T(sqrt(x));
    if (x <= T(0)) return T(0);
    return x;
  }

  /// Principal square root of a symmetric matrix, negative eigenvalues mapped to 0.
  template <class T, int Dim>
  static Matrix<T, Dim, Dim> sqrtm_psd(const Matrix<T, Dim, Dim>& a) noexcept {
    if (!a.allFinite()) return a;  // NaN in, NaN out: the engine reports NonFiniteMetric
    Vector<T, Dim> lambda;
    Matrix<T, Dim, Dim> v;
    detail::symmetric_eigen(a, lambda, v);
    const Vector<T, Dim> s = lambda.cwiseMax(T(0)).cwiseSqrt();
    return v * s.asDiagonal() * v.transpose();
  }
};

/// The user supplies G⁻¹(θ).
template <class Shape, class Fn, bool Separable = false>
using InverseMetric = RiemannMetric<Shape, Fn, GivesInverse, Separable>;
/// The user supplies G(θ); the sampler inverts it.
template <class Shape, class Fn, bool Separable = false>
using Metric = RiemannMetric<Shape, Fn, GivesMetric, Separable>;

namespace detail {

/// D or Q block callable: G⁻¹ at the state's position.
template <class MetricT>
struct InverseMetricBlock {
  MetricT metric{};
  bool valid() const noexcept { return metric.valid(); }
  template <class Z, class Ctx>
  auto operator()(const Z& z, const Ctx& ctx) const noexcept {
    return metric.inverse(z.position(), ctx);
  }
};

/// Q block callable: S = G^{-1/2} at the state's position.
template <class MetricT>
struct SqrtInverseMetricBlock {
  MetricT metric{};
  bool valid() const noexcept { return metric.valid(); }
  template <class Z, class Ctx>
  auto operator()(const Z& z, const Ctx& ctx) const noexcept {
    return metric.sqrt_inverse(z.position(), ctx);
  }
};

/// An analytic divergence the user supplies, called as div(θ) or div(θ, ctx), returning a
/// Vector<Scalar, Dim>; as a GammaFn its rows are that vector and its columns (the Q pair's
/// transposed side, differentiated against a block the metric does not read) are zero.
template <class Scalar, int Dim, class Div>
struct UserDivergence {
  Div div{};
  template <class Z, class Ctx>
  Vector<Scalar, Dim> rows(const Z& z, const Ctx& ctx) const noexcept {
    return call_block(div, z.position(), ctx);
  }
  template <class Z, class Ctx>
  Vector<Scalar, Dim> cols(const Z&, const Ctx&) const noexcept {
    return Vector<Scalar, Dim>::Zero();
  }
};

template <class Scalar, int Dim, class MetricT, class Divergence>
using SGRLDBlock =
    std::conditional_t<std::is_same_v<Divergence, AutoGamma> ||
                           std::is_same_v<Divergence, ZeroGamma>,
                       StateDependent<typename MetricT::ShapeType, InverseMetricBlock<MetricT>,
                                      MetricT::separable, Divergence>,
                       StateDependent<typename MetricT::ShapeType, InverseMetricBlock<MetricT>,
                                      false, UserDivergence<Scalar, Dim, Divergence>>>;
}  // namespace detail

// ---------------------------------------------------------------------------------------------
// SGRLD.

/// The recipe declaration behind SGRLD. Divergence: AutoGamma (Γ by the engine's forward-mode
/// automatic differentiation of G⁻¹), a user type div(θ[, ctx]) returning Γ_i = Σ_j ∂_j G⁻¹_ij,
/// or ZeroGamma (Γ dropped: the biased negative control of naive.hpp).
template <class Scalar, int Dim, class MetricT, class Divergence = AutoGamma>
using SGRLDRecipe =
    Recipe<Scalar, Layout<Dim>, Energy<>,
           Diffusion<detail::SGRLDBlock<Scalar, Dim, MetricT, Divergence>>, Curl<>, ExplicitEuler>;

/// Parameters of SGRLD.
template <class Scalar, class MetricT, class Divergence>
struct SGRLDParams {
  Scalar step_size{Scalar(1e-3)};  ///< h
  MetricT metric{};                ///< G(θ) or G⁻¹(θ)
  Divergence divergence{};         ///< analytic Γ, or the AutoGamma / ZeroGamma marker
};

/// Stochastic-gradient Riemannian Langevin dynamics (Patterson & Teh 2013) in recipe form
/// (MATH.md §2.2), everything at θ_t:
///   θ ← θ + h[−G⁻¹(θ)g + TΓ(θ)] + N(0, h(2TG⁻¹ − hG⁻¹V̂G⁻¹)),  Γ_i = Σ_j ∂_j G⁻¹_ij.
/// Per step: one model gradient; G⁻¹ evaluated twice (drift, noise), plus Γ (one evaluation in
/// automatic-differentiation scalars with Dim directions, or 1 if separable, or the user's Γ).
/// A non-finite G⁻¹ gives NonFiniteMetric, a G⁻¹ that is not PSD NoiseNotPSD (dense: not PD),
/// both with the state unchanged. A metric that does not depend on θ is SGLD with
/// D₀ = G⁻¹ (Diagonal, DiagonalMap or Dense): use SGLD, which pays no Γ (docs/samplers/sgrld.md).
template <class Scalar, int Dim, class MetricT, class Divergence = AutoGamma>
class SGRLD : public RecipeSampler<SGRLD<Scalar, Dim, MetricT, Divergence>,
                                   SGRLDRecipe<Scalar, Dim, MetricT, Divergence>,
                                   SGRLDParams<Scalar, MetricT, Divergence>> {
  using Base = RecipeSampler<SGRLD<Scalar, Dim, MetricT, Divergence>,
                             SGRLDRecipe<Scalar, Dim, MetricT, Divergence>,
                             SGRLDParams<Scalar, MetricT, Divergence>>;
  using Block = detail::SGRLDBlock<Scalar, Dim, MetricT, Divergence>;

 public:
  using Params = SGRLDParams<Scalar, MetricT, Divergence>;
  explicit SGRLD(const Params& p = Params{}) noexcept : Base(p) {}

  static SGRLDRecipe<Scalar, Dim, MetricT, Divergence> make_recipe(const Params& p) noexcept {
    Block b;
    b.fn.metric = p.metric;
    if constexpr (!std::is_same_v<Divergence, AutoGamma> &&
                  !std::is_same_v<Divergence, ZeroGamma>) {
      b.gamma.div = p.divergence;
    }
    return {Energy<>{}, Diffusion<Block>{{b}}, Curl<>{}, p.step_size};
  }
};

}  // namespace sgmcmc
