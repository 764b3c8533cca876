// SPDX-License-Identifier: MIT
// Compile-time block structures for D (diffusion) and Q (curl): zero, identity, scaled,
// diagonal, dense and state-dependent blocks, and the products the recipe needs from them.
#pragma once

#include <type_traits>
#include <utility>

#include "sgmcmc/core/types.hpp"

namespace sgmcmc {

// ---------------------------------------------------------------------------------------------
// Context. State-dependent callables may need more than the state: the gSGRHMC metric
// G⁻¹ = D√|Ũ(θ) + C| needs the model's minibatch potential value (MATH.md §5.1). The engine
// therefore hands every structure evaluation a context as well as the state.

/// The context outside a step (validation, Recipe::gamma(z)): there is no model.
struct NoContext {};

/// The context inside a step: the model the step was called with, and the minibatch gradient
/// g = ∇Ũ(θ_t) the step uses (evaluated once, at the step's starting position θ_t).
/// A callable taking (z, ctx) may read ctx.model (e.g. a potential templated on the scalar, so
/// that Γ by automatic differentiation sees its dependence on θ) and, in an analytic Γ,
/// ctx.gradient. ctx.gradient is a plain constant: automatic differentiation does not see through
/// it, so a block callable differentiated by the engine must not read it.
template <class Model, class Scalar, int Dim>
struct ModelContext {
  const Model& model;
  const Vector<Scalar, Dim>& gradient;
};

namespace detail {
template <class F, class Z, class = void>
struct CallableWithStateOnly : std::false_type {};
template <class F, class Z>
struct CallableWithStateOnly<
    F, Z, std::void_t<decltype(std::declval<const F&>()(std::declval<const Z&>()))>>
    : std::true_type {};

/// f(z) when f takes the state alone, else f(z, ctx): the two calling conventions of every
/// callable the engine evaluates (block values, analytic Γ rows and columns).
template <class F, class Z, class Ctx>
decltype(auto) call_optional_context(const F& f, const Z& z, const Ctx& ctx) noexcept {
  if constexpr (CallableWithStateOnly<F, Z>::value) {
    static_cast<void>(ctx);
    return f(z);
  } else {
    return f(z, ctx);
  }
}

/// fn(z) or fn(z, ctx) for a block callable.
template <class Fn, class Z, class Ctx>
decltype(auto) call_block(const Fn& fn, const Z& z, const Ctx& ctx) noexcept {
  return call_optional_context(fn, z, ctx);
}
/// gamma.rows(z) or gamma.rows(z, ctx), whichever the analytic Γ provides.
template <class G, class Z, class Ctx>
decltype(auto) call_gamma_rows(const G& gamma, const Z& z, const Ctx& ctx) noexcept {
  return call_optional_context(
      [&gamma](const auto&... a) noexcept -> decltype(gamma.rows(a...)) {
        return gamma.rows(a...);
      },
      z, ctx);
}
/// gamma.cols(z) or gamma.cols(z, ctx).
template <class G, class Z, class Ctx>
decltype(auto) call_gamma_cols(const G& gamma, const Z& z, const Ctx& ctx) noexcept {
  return call_optional_context(
      [&gamma](const auto&... a) noexcept -> decltype(gamma.cols(a...)) {
        return gamma.cols(a...);
      },
      z, ctx);
}

template <class F, class = void>
struct HasValid : std::false_type {};
template <class F>
struct HasValid<F, std::void_t<decltype(bool(std::declval<const F&>().valid()))>> : std::true_type {
};

/// f.valid() when the callable declares its parameters' validity, else true: how the engine
/// checks the parameters of state-dependent structures once, at configuration.
template <class F>
bool params_valid(const F& f) noexcept {
  if constexpr (HasValid<F>::value) {
    return f.valid();
  } else {
    static_cast<void>(f);
    return true;
  }
}
}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Evaluated blocks. A structure evaluated at a state gives one of these values; the recipe only
// ever multiplies them by vectors, so each shape costs exactly what it is.

/// The zero block: contributes nothing and emits no code.
struct ZeroValue {};
/// The identity block.
struct IdentityValue {};
/// s * I.
template <class S>
struct ScalarValue {
  S s;
};
/// diag(v). V is a vector type or a const reference to one.
template <class V>
struct DiagonalValue {
  V v;
};
/// A general matrix. M is a matrix type or a const reference to one.
template <class M>
struct DenseValue {
  M m;
};

/// out += sign * A x for an evaluated block A (sign is +1 or -1, folded at compile time).
template <int Sign, class Out, class X>
void add_product(const IdentityValue&, const X& x, Out& out) noexcept {
  if constexpr (Sign > 0)
    out += x;
  else
    out -= x;
}
template <int Sign, class S, class Out, class X>
void add_product(const ScalarValue<S>& a, const X& x, Out& out) noexcept {
  if constexpr (Sign > 0)
    out += a.s * x;
  else
    out -= a.s * x;
}
template <int Sign, class V, class Out, class X>
void add_product(const DiagonalValue<V>& a, const X& x, Out& out) noexcept {
  if constexpr (Sign > 0)
    out += a.v.cwiseProduct(x);
  else
    out -= a.v.cwiseProduct(x);
}
template <int Sign, class M, class Out, class X>
void add_product(const DenseValue<M>& a, const X& x, Out& out) noexcept {
  if constexpr (Sign > 0)
    out.noalias() += a.m * x;
  else
    out.noalias() -= a.m * x;
}

/// out += sign * A^T x.
template <int Sign, class Out, class X>
void add_transpose_product(const IdentityValue& a, const X& x, Out& out) noexcept {
  add_product<Sign>(a, x, out);
}
template <int Sign, class S, class Out, class X>
void add_transpose_product(const ScalarValue<S>& a, const X& x, Out& out) noexcept {
  add_product<Sign>(a, x, out);
}
template <int Sign, class V, class Out, class X>
void add_transpose_product(const DiagonalValue<V>& a, const X& x, Out& out) noexcept {
  add_product<Sign>(a, x, out);
}
template <int Sign, class M, class Out, class X>
void add_transpose_product(const DenseValue<M>& a, const X& x, Out& out) noexcept {
  if constexpr (Sign > 0)
    out.noalias() += a.m.transpose() * x;
  else
    out.noalias() -= a.m.transpose() * x;
}

/// Is every entry of an evaluated block finite?
inline bool value_finite(const IdentityValue&) noexcept {
  return true;
}
template <class S>
bool value_finite(const ScalarValue<S>& a) noexcept {
  return (a.s - a.s) == (a.s - a.s);  // false for NaN and Inf, without <cmath> classification
}
template <class V>
bool value_finite(const DiagonalValue<V>& a) noexcept {
  return a.v.allFinite();
}
template <class M>
bool value_finite(const DenseValue<M>& a) noexcept {
  return a.m.allFinite();
}

/// The diagonal of a diagonal-like block as a vector of size N (identity and scalar expand).
template <class Scalar, int N>
Vector<Scalar, N> diagonal_of(const IdentityValue&) noexcept {
  return Vector<Scalar, N>::Ones();
}
template <class Scalar, int N, class S>
Vector<Scalar, N> diagonal_of(const ScalarValue<S>& a) noexcept {
  return Vector<Scalar, N>::Constant(Scalar(a.s));
}
template <class Scalar, int N, class V>
Vector<Scalar, N> diagonal_of(const DiagonalValue<V>& a) noexcept {
  return a.v;
}

/// Any evaluated block as an R x C matrix (used only on dense paths).
template <class Scalar, int R, int C>
Matrix<Scalar, R, C> dense_of(const IdentityValue&) noexcept {
  return Matrix<Scalar, R, C>::Identity();
}
template <class Scalar, int R, int C, class S>
Matrix<Scalar, R, C> dense_of(const ScalarValue<S>& a) noexcept {
  return Scalar(a.s) * Matrix<Scalar, R, C>::Identity();
}
template <class Scalar, int R, int C, class V>
Matrix<Scalar, R, C> dense_of(const DiagonalValue<V>& a) noexcept {
  return a.v.asDiagonal();
}
template <class Scalar, int R, int C, class M>
Matrix<Scalar, R, C> dense_of(const DenseValue<M>& a) noexcept {
  return a.m;
}

// ---------------------------------------------------------------------------------------------
// Structures: what a user places in D or Q. Constant ones hold their parameters; state-dependent
// ones hold a callable of the state, templated on the scalar type so that the engine can
// differentiate it (forward-mode AD) to obtain Gamma.

/// Shapes of a state-dependent block's value.
struct ScalarShape {};    ///< callable returns a scalar s(z): the block is s(z) I
struct DiagonalShape {};  ///< callable returns a vector v(z): the block is diag(v(z))
struct DenseShape {};     ///< callable returns a matrix M(z) of the block's size

// Every structure says whether it is `lanewise`: its value is diagonal (or, for a column joining a
// position-sized block to a one-scalar block, a column) and entry i depends on the state only
// through the entries i of its blocks. Recipes made of lanewise structures only run the fused
// engine: one pass over the coordinates per step, any d (recipe.hpp). `uniform` ones have the
// same value at every i. Constant lanewise structures give their entry i by lane(i).

/// The zero block. Placing it costs nothing at all.
struct Zero {
  static constexpr bool is_zero = true;
  static constexpr bool state_dependent = false;
  static constexpr bool diagonal_like = true;
  static constexpr bool lanewise = true;
  static constexpr bool uniform = true;
};

/// The identity block.
struct Identity {
  static constexpr bool is_zero = false;
  static constexpr bool state_dependent = false;
  static constexpr bool diagonal_like = true;
  static constexpr bool lanewise = true;
  static constexpr bool uniform = true;
  template <class Z, class Ctx = NoContext>
  IdentityValue eval(const Z&, const Ctx& = Ctx{}) const noexcept {
    return {};
  }
  static constexpr int lane(Index) noexcept { return 1; }
};

/// s * I with a runtime scalar s.
template <class Scalar>
struct Scaled {
  static constexpr bool is_zero = false;
  static constexpr bool state_dependent = false;
  static constexpr bool diagonal_like = true;
  static constexpr bool lanewise = true;
  static constexpr bool uniform = true;
  Scalar value{1};
  template <class Z, class Ctx = NoContext>
  ScalarValue<Scalar> eval(const Z&, const Ctx& = Ctx{}) const noexcept {
    return {value};
  }
  Scalar lane(Index) const noexcept { return value; }
};

/// diag(v) with a runtime vector v held in the structure (an Eigen fixed-size vector: N up to
/// Eigen's 128 KiB limit; for larger N use DiagonalMap).
template <class Scalar, int N>
struct Diagonal {
  static constexpr bool is_zero = false;
  static constexpr bool state_dependent = false;
  static constexpr bool diagonal_like = true;
  static constexpr bool lanewise = true;
  static constexpr bool uniform = false;
  Vector<Scalar, N> value = Vector<Scalar, N>::Ones();
  template <class Z, class Ctx = NoContext>
  DiagonalValue<const Vector<Scalar, N>&> eval(const Z&, const Ctx& = Ctx{}) const noexcept {
    return {value};
  }
  Scalar lane(Index i) const noexcept { return value[i]; }
};

/// diag(v) with v in caller-owned memory of N scalars (any N; the caller keeps it alive and
/// unchanged while a sampler uses it). Lanewise only: the fused engine reads v[i] in its pass.
template <class Scalar, int N>
struct DiagonalMap {
  static constexpr bool is_zero = false;
  static constexpr bool state_dependent = false;
  static constexpr bool diagonal_like = true;
  static constexpr bool lanewise = true;
  static constexpr bool uniform = false;
  const Scalar* values = nullptr;
  Scalar lane(Index i) const noexcept { return values[i]; }
  /// Non-null; the entries' finiteness and signs are checked by the recipe that uses it.
  bool valid() const noexcept { return values != nullptr; }
};

/// A general R x C block with runtime entries.
template <class Scalar, int R, int C>
struct Dense {
  static constexpr bool is_zero = false;
  static constexpr bool state_dependent = false;
  static constexpr bool diagonal_like = false;
  static constexpr bool lanewise = false;
  static constexpr bool uniform = false;
  Matrix<Scalar, R, C> value = Matrix<Scalar, R, C>::Identity();
  template <class Z, class Ctx = NoContext>
  DenseValue<const Matrix<Scalar, R, C>&> eval(const Z&, const Ctx& = Ctx{}) const noexcept {
    return {value};
  }
};

/// Marker: Gamma of a state-dependent block is computed by forward-mode automatic differentiation.
struct AutoGamma {};

/// Marker: the block contributes nothing to Gamma, because it does not depend on the blocks it is
/// differentiated against (e.g. SGRHMC's D_rr = G⁻¹(θ), differentiated against r). Placed on a
/// block that does depend on them it drops a correction: that is how the negative controls of
/// samplers/naive.hpp are built, and nothing else should do it.
struct ZeroGamma {};

/// A block that is a function of the state z: fn(z) returns the block's value in the given Shape.
/// fn must be callable with a State of any scalar type (plain or automatic-differentiation), e.g.
///   struct InverseMetric { template <class Z> auto operator()(const Z& z) const {...} };
/// A callable that needs the model takes (z, ctx) instead, ctx a ModelContext inside a step and
/// NoContext outside one (see ModelContext); fn(z) is preferred when both would compile.
/// Separable = true promises that entry i of the block depends on each block it is differentiated
/// against only through that block's entry i (e.g. diag(f(p_i)) or r/d): Gamma then costs one
/// directional derivative instead of a full Jacobian.
/// GammaFn = AutoGamma differentiates fn; ZeroGamma declares the block's Gamma zero; otherwise
/// GammaFn supplies Gamma analytically:
///   rows(z): the vector sum_k d A_ik / d z_{Col,k} (size of the block's rows), and for Q pairs
///   cols(z): the vector sum_k d A_ki / d z_{Row,k} (size of its columns); for D blocks only rows.
///   Either may instead take (z, ctx), like fn.
/// If fn has `bool valid() const`, the recipe checks it at configuration (InvalidParameter).
template <class Shape, class Fn, bool Separable = false, class GammaFn = AutoGamma>
struct StateDependent {
  static constexpr bool is_zero = false;
  static constexpr bool state_dependent = true;
  static constexpr bool diagonal_like = !std::is_same_v<Shape, DenseShape>;
  static constexpr bool lanewise = false;  // fn sees the whole state: see Elementwise
  static constexpr bool uniform = false;
  static constexpr bool separable = Separable;
  static constexpr bool auto_gamma = std::is_same_v<GammaFn, AutoGamma>;
  static constexpr bool zero_gamma = std::is_same_v<GammaFn, ZeroGamma>;
  static_assert(!(Separable && std::is_same_v<Shape, ScalarShape>),
                "a scalar block s(z) I depends on all of z: it cannot be separable");
  using ShapeType = Shape;
  Fn fn{};
  GammaFn gamma{};

  /// fn's own parameter check, if it has one (detail::params_valid).
  bool valid() const noexcept { return detail::params_valid(fn); }

  template <class Z, class Ctx = NoContext>
  auto eval(const Z& z, const Ctx& ctx = Ctx{}) const noexcept {
    using T = typename Z::Scalar;
    using R = std::decay_t<decltype(detail::call_block(fn, z, ctx))>;
    // An `auto` return of an Eigen or AutoDiff expression would refer to the callable's
    // destroyed temporaries (silently wrong derivatives): require concrete value types.
    if constexpr (std::is_same_v<Shape, ScalarShape>) {
      static_assert(std::is_same_v<R, T> || std::is_arithmetic_v<R>,
                    "sgmcmc: a ScalarShape callable must return the state's scalar type "
                    "(typename Z::Scalar), not `auto`: AutoDiff expressions dangle");
      return ScalarValue<T>{T(detail::call_block(fn, z, ctx))};
    } else {
      static_assert(std::is_base_of_v<Eigen::PlainObjectBase<R>, R>,
                    "sgmcmc: a DiagonalShape or DenseShape callable must return a concrete "
                    "Eigen vector or matrix (Vector<T, n>, Matrix<T, r, c>), not an expression");
      if constexpr (std::is_same_v<Shape, DiagonalShape>) {
        return DiagonalValue<R>{detail::call_block(fn, z, ctx)};
      } else {
        return DenseValue<R>{detail::call_block(fn, z, ctx)};
      }
    }
  }
};

/// The values of every block at one coordinate i, in scalar type T: what an Elementwise callable
/// sees. A block of size 1 beside position-sized ones (a scalar thermostat) appears with its one
/// value at every i. T is the state's scalar, or an automatic-differentiation scalar when the
/// engine computes Γ.
template <class T, int Blocks>
struct Lane {
  using Scalar = T;
  T v[Blocks];
  template <int B>
  const T& block() const noexcept {
    static_assert(B >= 0 && B < Blocks, "no such block");
    return v[B];
  }
  const T& position() const noexcept { return v[0]; }
  template <int B = 1>
  const T& momentum() const noexcept {
    return block<B>();
  }
  template <int B = 2>
  const T& thermostat() const noexcept {
    return block<B>();
  }
};

namespace detail {
/// Lane i of a BlockState (blocks of size 1 give their one value at every i).
template <class Z, int... B>
Lane<typename Z::Scalar, Z::blocks> lane_of(const Z& z, Index i,
                                            std::integer_sequence<int, B...>) noexcept {
  return {{z.template block<B>()[Z::LayoutType::block_size(B) == 1 ? 0 : i]...}};
}
template <class Z>
Lane<typename Z::Scalar, Z::blocks> lane_of(const Z& z, Index i) noexcept {
  return lane_of(z, i, std::make_integer_sequence<int, Z::blocks>{});
}
}  // namespace detail

/// A diagonal block whose entry i is fn(x), x the Lane of coordinate i: e.g. SGMGT's
/// γ ∇K_c(p_i), or an SGRLD metric G⁻¹_ii(θ_i). fn is called as fn(x) with x a Lane of any
/// scalar type T, returning T:
///   struct Softplus { template <class X> auto operator()(const X& x) const {
///       using std::exp; using std::log1p; using T = typename X::Scalar;
///       return T(T(1) + log1p(exp(-x.position())));  // a concrete T, never an expression
///   } };
/// Γ: by forward automatic differentiation of fn along one direction (GammaFn = AutoGamma), or
/// declared zero (ZeroGamma), or supplied per coordinate: gamma.rows(x) = ∂A_ii/∂z_{col,i} and,
/// for a Q pair, gamma.cols(x) = ∂A_ii/∂z_{row,i}, both plain scalars at the Lane x; a GammaFn
/// may declare `static constexpr bool zero_rows = true` (zero_cols) when that part is 0 for
/// every state, and the fused pass leaves it out.
/// If fn has `bool valid() const`, the recipe checks it at configuration.
template <class Fn, class GammaFn = AutoGamma>
struct Elementwise {
  static constexpr bool is_zero = false;
  static constexpr bool state_dependent = true;
  static constexpr bool diagonal_like = true;
  static constexpr bool lanewise = true;
  static constexpr bool uniform = false;
  static constexpr bool separable = true;
  static constexpr bool column = false;
  static constexpr bool auto_gamma = std::is_same_v<GammaFn, AutoGamma>;
  static constexpr bool zero_gamma = std::is_same_v<GammaFn, ZeroGamma>;
  using ShapeType = DiagonalShape;
  Fn fn{};
  GammaFn gamma{};

  bool valid() const noexcept { return detail::params_valid(fn); }

  /// Entry i at the lane x.
  template <class X>
  auto at(const X& x) const noexcept {
    using T = typename X::Scalar;
    return T(fn(x));
  }
  /// The whole diagonal at a BlockState (the engine's general path).
  template <class Z, class Ctx = NoContext>
  auto eval(const Z& z, const Ctx& = Ctx{}) const noexcept {
    using T = typename Z::Scalar;
    constexpr int n = Z::LayoutType::dim;
    Vector<T, n> v;
    for (Index i = 0; i < n; ++i) v[i] = at(detail::lane_of(z, i));
    return DiagonalValue<Vector<T, n>>{v};
  }
};

/// A column block of Q joining a position-sized block (rows) to a one-scalar block (column),
/// entry i = fn(x) at the Lane x of coordinate i: SGNHT's r/d. Row i of the big block gets
/// −fn(x_i) ∂H/∂ξ and the scalar block gets Σ_i fn(x_i) ∂H/∂z_i, a sum the fused engine forms
/// in its pass. Γ: AutoGamma, ZeroGamma, or gamma.rows(x) = ∂A_i/∂ξ and gamma.cols(x) =
/// ∂A_i/∂z_{row,i} per coordinate (the engine sums the columns). A GammaFn may declare
/// `static constexpr bool zero_rows = true` (or zero_cols) when that part is 0 for every state:
/// the fused pass then leaves it out rather than adding t·0.
template <class Fn, class GammaFn = AutoGamma>
struct ElementwiseColumn {
  static constexpr bool is_zero = false;
  static constexpr bool state_dependent = true;
  static constexpr bool diagonal_like = false;
  static constexpr bool lanewise = true;
  static constexpr bool uniform = false;
  static constexpr bool separable = true;
  static constexpr bool column = true;
  static constexpr bool auto_gamma = std::is_same_v<GammaFn, AutoGamma>;
  static constexpr bool zero_gamma = std::is_same_v<GammaFn, ZeroGamma>;
  using ShapeType = DenseShape;
  Fn fn{};
  GammaFn gamma{};

  bool valid() const noexcept { return detail::params_valid(fn); }

  template <class X>
  auto at(const X& x) const noexcept {
    using T = typename X::Scalar;
    return T(fn(x));
  }
  /// The column at a BlockState (general path).
  template <class Z, class Ctx = NoContext>
  auto eval(const Z& z, const Ctx& = Ctx{}) const noexcept {
    using T = typename Z::Scalar;
    constexpr int n = Z::LayoutType::dim;
    Matrix<T, n, 1> m;
    for (Index i = 0; i < n; ++i) m(i, 0) = at(detail::lane_of(z, i));
    return DenseValue<Matrix<T, n, 1>>{m};
  }
};

/// Helper for lambdas: state_dependent<DiagonalShape>([](const auto& z) { ... }).
template <class Shape, bool Separable = false, class Fn>
constexpr StateDependent<Shape, Fn, Separable> state_dependent(Fn fn) noexcept {
  return {fn, {}};
}

// ---------------------------------------------------------------------------------------------
// Placement of structures in D and Q.

/// D = blockdiag(S_0, S_1, ...): one structure per state block. D is block diagonal by
/// construction (every named sampler's D is); off-diagonal diffusion is not supported.
template <class... S>
struct Diffusion {
  std::tuple<S...> blocks;
  static constexpr int count = static_cast<int>(sizeof...(S));
};

/// One skew-symmetric pair of Q: Q_{Row,Col} = A and Q_{Col,Row} = -A^T, A given by structure S.
/// E.g. every momentum sampler has SkewPair<Momentum, Position, Identity> (Q = [[0,-I],[I,0]]).
template <int Row, int Col, class S>
struct SkewPair {
  static_assert(Row != Col, "a skew pair joins two different blocks");
  static constexpr int row = Row;
  static constexpr int col = Col;
  using StructureType = S;
  S a{};
};

/// Q as a list of skew pairs.
template <class... Pairs>
struct Curl {
  std::tuple<Pairs...> pairs;
  static constexpr int count = static_cast<int>(sizeof...(Pairs));
};

}  // namespace sgmcmc
