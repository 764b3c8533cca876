// SPDX-License-Identifier: MIT
// The complete recipe (MATH.md §1.2) as a compile-time engine: a sampler is a Layout, an Energy
// (H's non-position terms), D and Q block structures and an integrator; this class turns them
// into an allocation-free step z' = z + h(-(D+Q)∇H̃ + Γ) + N(0, h(2D - hB̂)). Every structure is
// evaluated with a context (structure.hpp: ModelContext inside a step, NoContext outside), so that
// state-dependent blocks may also depend on the model, e.g. on the minibatch potential value.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include <Eigen/Core>
#include <unsupported/Eigen/AutoDiff>

#include "sgmcmc/core/kinetic.hpp"
#include "sgmcmc/core/layout.hpp"
#include "sgmcmc/core/linalg.hpp"
#include "sgmcmc/core/model.hpp"
#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/core/status.hpp"
#include "sgmcmc/core/structure.hpp"
#include "sgmcmc/core/types.hpp"

namespace sgmcmc {

// ---------------------------------------------------------------------------------------------
// Integrators (DESIGN §4, MATH.md §1.3).

/// Every block's drift from the old state z_t: the recipe's Euler–Maruyama rule and the oracle.
struct ExplicitEuler {};

/// Blocks updated in the given order, each from the newest values of the blocks before it.
/// Sweep<Momentum, Position> is kick–drift SGHMC; Sweep<Position, Momentum> drift–kick;
/// Sweep<Momentum, Position, Thermostat> SGNHT. Every ∇H block, D, Q and Γ is evaluated at the
/// sweep's current state. The model gradient is evaluated only where a block's row needs it
/// (D_θθ ≠ 0, or a skew pair joining the block to the position), at the current position: once
/// per step unless a block that needs it follows a position update that itself needed it.
template <int... Order>
struct Sweep {};

namespace detail {

template <class F, int... I>
constexpr void static_for_impl(F&& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}
/// Calls f(std::integral_constant<int, i>) for i = 0 .. N-1.
template <int N, class F>
constexpr void static_for(F&& f) {
  static_for_impl(f, std::make_integer_sequence<int, N>{});
}
template <class F, int... I>
constexpr void static_for_each(F&& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}

template <class Integrator>
struct IntegratorOrder;
template <int... Order>
struct IntegratorOrder<Sweep<Order...>> {
  using type = std::integer_sequence<int, Order...>;
};

template <int... Order>
constexpr bool is_permutation(int n, std::integer_sequence<int, Order...>) {
  if (static_cast<int>(sizeof...(Order)) != n) return false;
  for (int b = 0; b < n; ++b) {
    int seen = 0;
    ((seen += (Order == b) ? 1 : 0), ...);
    if (seen != 1) return false;
  }
  return true;
}

/// Structure used for P_B = (D+Q)_{B, position}: the columns that multiply ∇_θH, which carry
/// the gradient noise into block B (MATH.md §1.2). Found at compile time.
struct NoP {
  static constexpr bool is_zero = true;
  static constexpr bool state_dependent = false;
  static constexpr bool diagonal_like = true;
};

/// True for state-dependent structures whose Γ is declared zero (structure.hpp, ZeroGamma).
template <class S, class = void>
struct IsZeroGamma : std::false_type {};
template <class S>
struct IsZeroGamma<S, std::enable_if_t<S::zero_gamma>> : std::true_type {};

}  // namespace detail

/// The generic recipe sampler.
/// @tparam Scalar_     float or double
/// @tparam Layout_     Layout<d, ...>: block sizes, position first
/// @tparam Energy_     Energy<Terms...>: H's terms for blocks 1.. (block 0's is the model's U)
/// @tparam Diffusion_  Diffusion<S_0, S_1, ...>: D's diagonal blocks
/// @tparam Curl_       Curl<SkewPair<I, J, S>...>: Q's skew pairs
/// @tparam Integrator_ ExplicitEuler or Sweep<order...>
/// @tparam Cold_       true: zero temperature (no noise, no Γ): the optimiser limit (MATH.md §2.3)
/// Class invariant: status() is Ok iff the parameters are valid; step() returns it otherwise and
/// never touches the state.
template <class Scalar_, class Layout_, class Energy_, class Diffusion_, class Curl_,
          class Integrator_ = ExplicitEuler, bool Cold_ = false>
class Recipe {
 public:
  using Scalar = Scalar_;
  using LayoutType = Layout_;
  using EnergyType = Energy_;
  using DiffusionType = Diffusion_;
  using CurlType = Curl_;
  using Integrator = Integrator_;
  using StateType = State<Scalar, Layout_>;
  static constexpr int dim = Layout_::dim;
  static constexpr int blocks = Layout_::blocks;
  static constexpr bool cold = Cold_;
  using PositionVector = Vector<Scalar, dim>;
  template <int B>
  using BlockVector = Vector<Scalar, Layout_::block_size(B)>;

  static_assert(std::is_floating_point_v<Scalar>, "Scalar must be float or double");
  static_assert(Energy_::count == blocks - 1,
                "Energy needs one term for each block after the position");
  static_assert(Diffusion_::count == blocks, "Diffusion needs one structure per state block");

 private:
  using DTuple = decltype(std::declval<Diffusion_>().blocks);
  using QTuple = decltype(std::declval<Curl_>().pairs);
  template <int B>
  using DBlock = std::tuple_element_t<B, DTuple>;
  template <int I>
  using QPair = std::tuple_element_t<I, QTuple>;

  template <int B>
  static constexpr bool diffusive() {
    return !cold && !DBlock<B>::is_zero;
  }
  static constexpr int noise_offset(int b) {
    int o = 0;
    detail::static_for<blocks>([&](auto i) {
      if (i < b && diffusive<i>()) o += Layout_::block_size(i);
    });
    return o;
  }

 public:
  /// Number of N(0,1) draws per step: the sizes of the blocks where D is not zero.
  static constexpr int noise_dim = noise_offset(blocks);
  /// The standard-normal vector one step consumes (size 1 and unused when noise_dim == 0).
  using NoiseVector = Vector<Scalar, (noise_dim > 0 ? noise_dim : 1)>;

  Recipe(const Energy_& energy, const Diffusion_& diffusion, const Curl_& curl,
         Scalar step_size) noexcept
      : energy_(energy), d_(diffusion), q_(curl), h_(step_size) {
    vhat_.setZero();
    static_cast<void>(configure());
  }

  /// Ok, or why the parameters are invalid (then step() returns this and changes nothing).
  Status status() const noexcept { return status_; }
  Scalar step_size() const noexcept { return h_; }
  /// Diagonal of the gradient-noise covariance estimate V̂ (zero: no correction).
  const PositionVector& gradient_noise() const noexcept { return vhat_; }
  const Energy_& energy() const noexcept { return energy_; }
  const Diffusion_& diffusion() const noexcept { return d_; }
  const Curl_& curl() const noexcept { return q_; }

  /// Changes h and re-validates; returns the new status.
  Status set_step_size(Scalar h) noexcept {
    h_ = h;
    return configure();
  }
  /// Sets V̂ = diag(v), the covariance of the minibatch gradient's noise (MATH.md §1.2
  /// convention: a gradient covariance, B̂ = P V̂ Pᵀ). Re-validates 2D - hB̂ ⪰ 0.
  Status set_gradient_noise(const PositionVector& v) noexcept {
    vhat_ = v;
    return configure();
  }
  /// Isotropic V̂ = v I.
  Status set_gradient_noise(Scalar v) noexcept {
    return set_gradient_noise(PositionVector::Constant(v));
  }

  /// One step: draws noise_dim standard normals from rng, then step_with_noise.
  template <class Model, class Rng>
  Status step(StateType& z, const Model& model, Rng& rng) const noexcept {
    check_rng<Rng>();
    if (!status_) return status_;
    NoiseVector zeta;
    if constexpr (noise_dim > 0) {
      fill_normal(rng, zeta);
    } else {
      zeta.setZero();  // unused: no diffusive block
    }
    return step_with_noise(z, model, zeta);
  }

  /// One step with the given standard-normal draws (ordered as the diffusive blocks).
  /// On any failure z is left exactly as it was.
  template <class Model>
  Status step_with_noise(StateType& z, const Model& model, const NoiseVector& zeta) const noexcept {
    check_gradient_model<Model, Scalar, dim>();
    if (!status_) return status_;
    PositionVector g;
    StateType next = z;
    const ModelContext<Model, Scalar, dim> ctx{model, g};
    Status st;
    if constexpr (std::is_same_v<Integrator_, ExplicitEuler>) {
      model.gradient(z.position(), g);
      if (!detail::all_finite(g)) return StatusCode::NonFiniteGradient;
      detail::static_for<blocks>([&](auto b) {
        if (st) st = update_block<b>(z, g, zeta, ctx, next);
      });
    } else {
      using Order = typename detail::IntegratorOrder<Integrator_>::type;
      static_assert(detail::is_permutation(blocks, Order{}),
                    "a Sweep must list every block exactly once");
      // g is evaluated lazily at the current position and goes stale when the position moves.
      bool fresh = false;
      detail::static_for_each(
          [&](auto b) {
            if (!st) return;
            if constexpr (uses_gradient<b>()) {
              if (!fresh) {
                model.gradient(next.position(), g);
                if (!detail::all_finite(g)) {
                  st = StatusCode::NonFiniteGradient;
                  return;
                }
                fresh = true;
              }
            }
            st = update_block<b>(next, g, zeta, ctx, next);
            if constexpr (b == Position) fresh = false;
          },
          Order{});
    }
    if (!st) return st;
    if (!state_finite(next)) return StatusCode::NonFiniteState;
    z = next;
    return StatusCode::Ok;
  }

  /// The drift f(z) = -(D+Q)∇H̃ + Γ at z (MATH.md §1.1), with the model gradient at z.
  template <class Model>
  Status drift(const StateType& z, const Model& model, StateType& f) const noexcept {
    check_gradient_model<Model, Scalar, dim>();
    PositionVector g;
    model.gradient(z.position(), g);
    if (!detail::all_finite(g)) return StatusCode::NonFiniteGradient;
    const ModelContext<Model, Scalar, dim> ctx{model, g};
    Status st;
    detail::static_for<blocks>([&](auto b) {
      if (st) st = row_drift<b>(z, g, ctx, f.template block<b>());
    });
    return st;
  }

  /// Γ(z) alone (zero where every block is constant), for structures that do not need the model.
  StateType gamma(const StateType& z) const noexcept {
    StateType out;
    const NoContext ctx;
    detail::static_for<blocks>([&](auto b) { add_gamma<b>(z, ctx, out.template block<b>()); });
    return out;
  }

  /// Γ(z) with the model in the context (its gradient evaluated at z), for structures that read
  /// the model (structure.hpp, ModelContext).
  template <class Model>
  StateType gamma(const StateType& z, const Model& model) const noexcept {
    check_gradient_model<Model, Scalar, dim>();
    PositionVector g;
    model.gradient(z.position(), g);
    const ModelContext<Model, Scalar, dim> ctx{model, g};
    StateType out;
    detail::static_for<blocks>([&](auto b) { add_gamma<b>(z, ctx, out.template block<b>()); });
    return out;
  }

  /// ∇H̃(z) for the blocks after the position (block 0 is left to the caller's gradient).
  template <int B>
  BlockVector<B> energy_gradient(const StateType& z) const noexcept {
    static_assert(B > 0, "block 0's gradient is the model's");
    return std::get<B - 1>(energy_.terms).gradient(z.template block<B>());
  }

 private:
  /// Every block of z finite, with one test at the end (see detail::accumulate_nonfinite).
  static bool state_finite(const StateType& z) noexcept {
    detail::BitsOf<Scalar> acc = 0;
    detail::static_for<blocks>(
        [&](auto b) { detail::accumulate_nonfinite(z.template block<b>(), acc); });
    return detail::finite_bits(acc);
  }

  // ------------------------------------------------------------------------- drift pieces
  template <int J>
  decltype(auto) grad_h(const StateType& z, const PositionVector& g) const noexcept {
    if constexpr (J == 0) {
      return (g);
    } else {
      return std::get<J - 1>(energy_.terms).gradient(z.template block<J>());
    }
  }

  /// Is every entry of an evaluated block finite (vectorised for vector and matrix values)?
  template <class S>
  static bool eval_ok(const S& value) noexcept {
    return value_finite(value);
  }
  template <class V>
  static bool eval_ok(const DiagonalValue<V>& value) noexcept {
    return detail::all_finite(value.v);
  }
  template <class M>
  static bool eval_ok(const DenseValue<M>& value) noexcept {
    return detail::all_finite(value.m);
  }

  /// Does row B of -(D+Q)∇H read ∇_θH, the model gradient? (D_θθ ≠ 0 for the position, or a
  /// non-zero skew pair joining B and the position.)
  template <int B>
  static constexpr bool uses_gradient() {
    bool uses = B == Position && !DBlock<Position>::is_zero;
    detail::static_for<Curl_::count>([&](auto i) {
      using P = QPair<i>;
      if (!P::StructureType::is_zero &&
          ((P::row == B && P::col == Position) || (P::col == B && P::row == Position))) {
        uses = true;
      }
    });
    return uses;
  }

  /// Does row B involve a state-dependent block (so that Γ_B may be non-zero)?
  template <int B>
  static constexpr bool row_state_dependent() {
    bool dep = DBlock<B>::state_dependent;
    detail::static_for<Curl_::count>([&](auto i) {
      using P = QPair<i>;
      if (P::StructureType::state_dependent && (P::row == B || P::col == B)) dep = true;
    });
    return dep;
  }

  /// out = f_B(z), row block B of -(D+Q)∇H + Γ.
  template <int B, class Ctx, class Out>
  Status row_drift(const StateType& z, const PositionVector& g, const Ctx& ctx,
                   Out&& out) const noexcept {
    out.setZero();
    bool ok = true;
    if constexpr (!DBlock<B>::is_zero) {
      const auto dv = std::get<B>(d_.blocks).eval(z, ctx);
      if constexpr (DBlock<B>::state_dependent) ok = ok && eval_ok(dv);
      add_product<-1>(dv, grad_h<B>(z, g), out);
    }
    detail::static_for<Curl_::count>([&](auto i) {
      using P = QPair<i>;
      if constexpr (!P::StructureType::is_zero && (P::row == B || P::col == B)) {
        const auto av = std::get<i>(q_.pairs).a.eval(z, ctx);
        if constexpr (P::StructureType::state_dependent) ok = ok && eval_ok(av);
        if constexpr (P::row == B) {
          add_product<-1>(av, grad_h<P::col>(z, g), out);  // -Q_{B,col} ∇H_col, Q_{B,col} = A
        } else {
          add_transpose_product<+1>(av, grad_h<P::row>(z, g), out);  // Q_{B,row} = -Aᵀ
        }
      }
    });
    if (!ok) return StatusCode::NonFiniteMetric;
    if constexpr (!cold && row_state_dependent<B>()) {
      Vector<Scalar, Layout_::block_size(B)> gamma_b =
          Vector<Scalar, Layout_::block_size(B)>::Zero();
      add_gamma<B>(z, ctx, gamma_b);
      if (!detail::all_finite(gamma_b)) return StatusCode::NonFiniteMetric;
      out += gamma_b;
    }
    // Finite blocks with a non-finite product: the state or gradient overflowed.
    if (!detail::all_finite(out)) return StatusCode::NonFiniteState;
    return StatusCode::Ok;
  }

  // ------------------------------------------------------------------------- Γ by forward AD
  template <int K>
  using ADScalar = Eigen::AutoDiffScalar<Vector<Scalar, K>>;

  /// A copy of z in AD scalars with derivative directions seeded on block J: unit vectors
  /// (K = size of J), or one all-ones direction (K = 1, separable structures).
  template <int J, int K>
  static State<ADScalar<K>, Layout_> seed(const StateType& z) noexcept {
    using AD = ADScalar<K>;
    State<AD, Layout_> out;
    detail::static_for<blocks>([&](auto b) {
      auto& ob = out.template block<b>();
      const auto& zb = z.template block<b>();
      for (Index i = 0; i < zb.size(); ++i) {
        ob[i] = AD(zb[i], Vector<Scalar, K>::Zero());
        if constexpr (b == J) {
          if constexpr (K == 1) {
            ob[i].derivatives()[0] = Scalar(1);
          } else {
            ob[i].derivatives()[i] = Scalar(1);
          }
        }
      }
    });
    return out;
  }

  /// out += sign * (divergence of structure s): Sign = +1 gives Σ_k ∂A_ik/∂z_{J,k} (rows),
  /// Sign = -1 with Transposed gives -Σ_k ∂A_ki/∂z_{J,k} (the -Aᵀ block of a skew pair).
  /// A ZeroGamma block (structure.hpp) adds nothing and emits no code.
  template <int J, bool Transposed, class S, class Ctx, class Out>
  void add_divergence(const S& s, const StateType& z, const Ctx& ctx, Out& out) const noexcept {
    if constexpr (detail::IsZeroGamma<S>::value) {
      static_cast<void>(s);
      static_cast<void>(z);
      static_cast<void>(ctx);
    } else if constexpr (!S::auto_gamma) {
      if constexpr (Transposed) {
        out -= detail::call_gamma_cols(s.gamma, z, ctx);
      } else {
        out += detail::call_gamma_rows(s.gamma, z, ctx);
      }
    } else {
      constexpr bool sep = S::separable;
      constexpr int K = sep ? 1 : Layout_::block_size(J);
      const auto zad = seed<J, K>(z);
      const auto v = s.eval(zad, ctx);
      const Scalar sign = Transposed ? Scalar(-1) : Scalar(1);
      if constexpr (std::is_same_v<typename S::ShapeType, ScalarShape>) {
        static_assert(std::decay_t<Out>::RowsAtCompileTime == K,
                      "a scalar block s(z) I is square: its rows and the block it multiplies "
                      "must have the same size");
        out += sign * v.s.derivatives();
      } else if constexpr (std::is_same_v<typename S::ShapeType, DiagonalShape>) {
        for (Index i = 0; i < out.size(); ++i) out[i] += sign * v.v[i].derivatives()[sep ? 0 : i];
      } else {
        const auto& m = v.m;
        for (Index i = 0; i < out.size(); ++i) {
          Scalar acc(0);
          if constexpr (Transposed) {
            for (Index k = 0; k < m.rows(); ++k) acc += m(k, i).derivatives()[sep ? 0 : k];
          } else {
            for (Index k = 0; k < m.cols(); ++k) acc += m(i, k).derivatives()[sep ? 0 : k];
          }
          out[i] += sign * acc;
        }
      }
    }
  }

  /// out += Γ_B(z) = Σ_j ∂(D+Q)_{B,j}/∂z_j over the state-dependent blocks touching row B.
  template <int B, class Ctx, class Out>
  void add_gamma(const StateType& z, const Ctx& ctx, Out& out) const noexcept {
    if constexpr (DBlock<B>::state_dependent) {
      add_divergence<B, false>(std::get<B>(d_.blocks), z, ctx, out);
    }
    detail::static_for<Curl_::count>([&](auto i) {
      using P = QPair<i>;
      if constexpr (P::StructureType::state_dependent) {
        if constexpr (P::row == B) {
          add_divergence<P::col, false>(std::get<i>(q_.pairs).a, z, ctx, out);
        }
        if constexpr (P::col == B) {
          add_divergence<P::row, true>(std::get<i>(q_.pairs).a, z, ctx, out);
        }
      }
    });
  }

  // ------------------------------------------------------------------------- noise
  /// Index of the skew pair joining block B and the position, or -1.
  template <int B>
  static constexpr int p_pair() {
    int found = -1;
    int count = 0;
    detail::static_for<Curl_::count>([&](auto i) {
      using P = QPair<i>;
      if ((P::row == B && P::col == 0) || (P::row == 0 && P::col == B)) {
        found = i;
        ++count;
      }
    });
    return count > 1 ? -2 : found;
  }

  template <int B, int Pair>
  struct PLookup {
    using Structure = typename QPair<Pair>::StructureType;
    static constexpr bool transposed = QPair<Pair>::row == 0;  // P_B = -Aᵀ
  };
  template <int B>
  struct PLookup<B, -1> {
    using Structure = std::conditional_t<B == 0, DBlock<0>, detail::NoP>;
    static constexpr bool transposed = false;
  };
  template <int B>
  struct PInfo : PLookup<B, (B == 0 ? -1 : p_pair<B>())> {
    static constexpr int pair = B == 0 ? -1 : p_pair<B>();
    static_assert(pair != -2, "two skew pairs join the same blocks: merge them into one");
  };

  template <int B>
  static constexpr bool diag_noise() {
    return DBlock<B>::diagonal_like && PInfo<B>::Structure::diagonal_like;
  }
  template <int B>
  static constexpr bool constant_noise() {
    return !DBlock<B>::state_dependent && !PInfo<B>::Structure::state_dependent;
  }

  struct NoFactor {};
  template <int B>
  using Factor = std::conditional_t<
      !diffusive<B>(), NoFactor,
      std::conditional_t<diag_noise<B>(), BlockVector<B>,
                         Matrix<Scalar, Layout_::block_size(B), Layout_::block_size(B)>>>;

  template <class Seq>
  struct FactorTuple;
  template <int... B>
  struct FactorTuple<std::integer_sequence<int, B...>> {
    using type = std::tuple<Factor<B>...>;
  };
  using Factors = typename FactorTuple<std::make_integer_sequence<int, blocks>>::type;

  /// Evaluates P_B at z (as a value), for B̂_B = P V̂ Pᵀ.
  template <int B, class Ctx>
  auto p_value(const StateType& z, const Ctx& ctx) const noexcept {
    if constexpr (B == 0) {
      return std::get<0>(d_.blocks).eval(z, ctx);
    } else {
      return std::get<PInfo<B>::pair>(q_.pairs).a.eval(z, ctx);
    }
  }

  /// The noise factor of diffusive block B at z: σ with Σ = diag(σ²), or lower L with Σ = LLᵀ,
  /// where Σ = h(2 D_BB - h B̂_BB).
  template <int B, class Ctx>
  Status compute_factor(const StateType& z, const Ctx& ctx, Factor<B>& out) const noexcept {
    constexpr int n = Layout_::block_size(B);
    using PS = typename PInfo<B>::Structure;
    const bool correct = !PS::is_zero && has_vhat_;
    const auto dv = std::get<B>(d_.blocks).eval(z, ctx);
    if (!eval_ok(dv)) return StatusCode::NonFiniteMetric;
    if constexpr (diag_noise<B>()) {
      BlockVector<B> var = Scalar(2) * diagonal_of<Scalar, n>(dv);
      if constexpr (!PS::is_zero) {
        static_assert(n == dim, "a diagonal P_B needs block B the size of the position");
        if (correct) {
          const auto pv = p_value<B>(z, ctx);
          if (!eval_ok(pv)) return StatusCode::NonFiniteMetric;
          var -= h_ * diagonal_of<Scalar, n>(pv).cwiseAbs2().cwiseProduct(vhat_);
        }
      }
      var *= h_;
      if (!detail::all_finite(var)) return StatusCode::NonFiniteMetric;
      if ((var.array() < Scalar(0)).any()) return StatusCode::NoiseNotPSD;
      out = var.cwiseSqrt();
    } else {
      Matrix<Scalar, n, n> sigma = Scalar(2) * dense_of<Scalar, n, n>(dv);
      if constexpr (!PS::is_zero) {
        if (correct) {
          const auto pv = p_value<B>(z, ctx);
          if (!eval_ok(pv)) return StatusCode::NonFiniteMetric;
          Matrix<Scalar, n, dim> pm;
          if constexpr (PInfo<B>::transposed) {
            pm = dense_of<Scalar, dim, n>(pv).transpose();
          } else {
            pm = dense_of<Scalar, n, dim>(pv);
          }
          sigma.noalias() -= h_ * pm * vhat_.asDiagonal() * pm.transpose();
        }
      }
      sigma *= h_;
      if (!detail::all_finite(sigma)) return StatusCode::NonFiniteMetric;
      if (!detail::cholesky_lower(sigma, out)) return StatusCode::NoiseNotPSD;
    }
    return StatusCode::Ok;
  }

  /// out = (out + h f) + noise_B: drift and noise in one pass over the block, with the operations
  /// in the order of two passes (out += h f; out += noise), hence the same results.
  template <int B, class Out>
  void add_drift_and_noise(const BlockVector<B>& f, const Factor<B>& factor,
                           const NoiseVector& zeta, Out& out) const noexcept {
    constexpr int n = Layout_::block_size(B);
    const auto seg = zeta.template segment<n>(noise_offset(B));
    if constexpr (diag_noise<B>()) {
      out = (out + h_ * f) + factor.cwiseProduct(seg);
    } else {
      out += h_ * f;
      out.noalias() += factor.template triangularView<Eigen::Lower>() * seg;
    }
  }

  /// next_B = (from_B) + h f_B(from) + noise_B(from). For explicit Euler from = z_t and
  /// next = a copy of z_t; for a sweep from and next are the same state.
  template <int B, class Ctx>
  Status update_block(const StateType& from, const PositionVector& g, const NoiseVector& zeta,
                      const Ctx& ctx, StateType& next) const noexcept {
    BlockVector<B> f;
    if (Status st = row_drift<B>(from, g, ctx, f); !st) return st;
    auto& nb = next.template block<B>();
    if constexpr (diffusive<B>()) {
      if constexpr (constant_noise<B>()) {
        add_drift_and_noise<B>(f, std::get<B>(factors_), zeta, nb);
      } else {
        Factor<B> factor;
        if (Status st = compute_factor<B>(from, ctx, factor); !st) return st;
        add_drift_and_noise<B>(f, factor, zeta, nb);
      }
    } else {
      nb += h_ * f;
    }
    return StatusCode::Ok;
  }

  /// Validates h and V̂, precomputes the noise factors of constant blocks.
  Status configure() noexcept {
    status_ = StatusCode::Ok;
    if (!(h_ > Scalar(0)) || !std::isfinite(h_)) return status_ = StatusCode::InvalidStepSize;
    if (!vhat_.allFinite() || (vhat_.array() < Scalar(0)).any()) {
      return status_ = StatusCode::InvalidParameter;
    }
    if (!energy_valid(std::make_index_sequence<Energy_::count>{}) || !structures_valid()) {
      return status_ = StatusCode::InvalidParameter;
    }
    has_vhat_ = (vhat_.array() > Scalar(0)).any();
    if (has_vhat_ && !cold) {
      // B̂ couples two diffusive blocks when both have a non-zero P: not implemented.
      int carriers = 0;
      detail::static_for<blocks>([&](auto b) {
        if (diffusive<b>() && !PInfo<b>::Structure::is_zero) ++carriers;
      });
      if (carriers > 1) return status_ = StatusCode::Unsupported;
    }
    const StateType origin;  // constant blocks ignore the state
    detail::static_for<blocks>([&](auto b) {
      // State-dependent blocks compute their factor per step; zeroing the stored one keeps
      // copies of the sampler free of uninitialised reads.
      if constexpr (diffusive<b>() && !constant_noise<b>()) std::get<b>(factors_).setZero();
      if constexpr (diffusive<b>() && constant_noise<b>()) {
        if (status_) status_ = compute_factor<b>(origin, NoContext{}, std::get<b>(factors_));
      }
    });
    return status_;
  }

  template <std::size_t... I>
  bool energy_valid(std::index_sequence<I...>) const noexcept {
    return (std::get<I>(energy_.terms).valid() && ...);
  }

  /// Constant D blocks must be PSD with finite entries (dense ones are checked by the Cholesky
  /// of the noise covariance); constant Q blocks must be finite; state-dependent blocks must pass
  /// their callable's own parameter check (StateDependent::valid).
  template <class S>
  static bool d_block_valid(const S& s) noexcept {
    if constexpr (S::is_zero) {
      return true;
    } else if constexpr (S::state_dependent) {
      return s.valid();
    } else {
      const auto v = s.eval(StateType{});
      if constexpr (std::is_same_v<std::decay_t<decltype(v)>, IdentityValue>) {
        return true;
      } else if constexpr (S::diagonal_like) {
        return value_finite(v) && nonnegative(v);
      } else {
        return value_finite(v);
      }
    }
  }
  template <class S>
  static bool nonnegative(const ScalarValue<S>& v) noexcept {
    return v.s >= S(0);
  }
  template <class V>
  static bool nonnegative(const DiagonalValue<V>& v) noexcept {
    return (v.v.array() >= Scalar(0)).all();
  }
  template <class S>
  static bool q_block_valid(const S& s) noexcept {
    if constexpr (S::is_zero) {
      return true;
    } else if constexpr (S::state_dependent) {
      return s.valid();
    } else {
      return value_finite(s.eval(StateType{}));
    }
  }
  bool structures_valid() const noexcept {
    bool ok = true;
    detail::static_for<blocks>([&](auto b) { ok = ok && d_block_valid(std::get<b>(d_.blocks)); });
    detail::static_for<Curl_::count>(
        [&](auto i) { ok = ok && q_block_valid(std::get<i>(q_.pairs).a); });
    return ok;
  }

  Energy_ energy_;
  Diffusion_ d_;
  Curl_ q_;
  Scalar h_;
  PositionVector vhat_;
  bool has_vhat_ = false;
  Factors factors_{};
  Status status_;
};

}  // namespace sgmcmc
