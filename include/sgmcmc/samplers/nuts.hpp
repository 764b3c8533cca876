// SPDX-License-Identifier: MIT
// Exact NUTS for full-data models (MATH.md §4.3 option A): iterative multinomial tree building,
// generalised U-turn checks, biased progressive sampling, on the HMC recipe's leapfrog (the
// engine's values). Its workspace (trajectory ends, proposals, U-turn checkpoints:
// O(d · MaxDepth)) lives in the state's scratch vectors, so the stack use does not grow with d.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "sgmcmc/samplers/hmc.hpp"

namespace sgmcmc {

namespace detail {

/// The six dot products of one U-turn test of a span made of two halves, in one pass:
///   a·(s − p), c·(s − p)          the whole span (ends a, c; momentum sum s − p)
///   a·(m − p + e), e·(m − p + e)  the left half with the right half's first momentum e
///   f·(s − m + f), c·(s − m + f)  the right half with the left half's last momentum f
/// where p is the sum before the span and m at its middle. W partial sums per product (a fixed
/// order, so vectorised without reassociation). All six must be > 0 for no U-turn. The loops are
/// written out, not through a lambda as in no_u_turn_merge, and the final test of the six sums is
/// written in both: on the Cortex-M4F either folded moved GCC's choices for NUTS (the lambda: -Os
/// d = 32 +6.7 % instructions and +9 % stack, -O2 d = 32 +15 % stack; the final test shared alone:
/// -Os d = 8 +12 % stack; scripts/size-table, 2026-11-29).
template <class Scalar, int Dim>
bool no_u_turn_halves(const Scalar* a, const Scalar* c, const Scalar* s, const Scalar* p,
                      const Scalar* m, const Scalar* e, const Scalar* f) noexcept {
  // detail::wide_partials: a state narrower than 64 bytes keeps one partial per product, the same
  // sums and tests (the other partials held zeros, and 0 + x = x up to the sign of a zero, which
  // `> 0` does not see) without 6 (W − 1) additions of zeros per test and 6 W accumulators on the
  // stack: Cortex-M4F NUTS -O2 (scripts/size-table) d = 2 6 160 → 3 139 instructions per
  // transition and 784 → 416 bytes of stack, d = 8 11 757 → 7 944 and 808 → 440.
  constexpr int W = wide_partials<Scalar>(Dim);
  Scalar acc[6][W] = {};
  constexpr Index body = Dim / W * W;  // whole groups of W; the tail (if any) to partial 0
  for (Index i = 0; i < body; i += W) {
    for (int l = 0; l < W; ++l) {
      const Index k = i + l;
      const Scalar whole = s[k] - p[k];
      const Scalar left = m[k] - p[k] + e[k];
      const Scalar right = s[k] - m[k] + f[k];
      acc[0][l] += a[k] * whole;
      acc[1][l] += c[k] * whole;
      acc[2][l] += a[k] * left;
      acc[3][l] += e[k] * left;
      acc[4][l] += f[k] * right;
      acc[5][l] += c[k] * right;
    }
  }
  if constexpr (body < Dim) {
    for (Index i = body; i < Dim; ++i) {
      const Scalar whole = s[i] - p[i];
      const Scalar left = m[i] - p[i] + e[i];
      const Scalar right = s[i] - m[i] + f[i];
      acc[0][0] += a[i] * whole;
      acc[1][0] += c[i] * whole;
      acc[2][0] += a[i] * left;
      acc[3][0] += e[i] * left;
      acc[4][0] += f[i] * right;
      acc[5][0] += c[i] * right;
    }
  }
  for (int k = 0; k < 6; ++k) {
    Scalar sum(0);
    for (int l = 0; l < W; ++l) sum += acc[k][l];
    if (!(sum > Scalar(0))) return false;
  }
  return true;
}

/// The U-turn test of a doubling, in one pass: the old tree (momentum sum R, far end a, end next
/// to the new subtree f) merged with the new subtree (sum S, first momentum e, new end c):
///   a·(R + S), c·(R + S); a·(R + e), e·(R + e); f·(S + f), c·(S + f), all > 0.
/// The six products of no_u_turn_halves again, with other sums: one function for both, the sums
/// passed in, cost the Cortex-M4F 27 % more instructions per NUTS transition at -O2 d = 32, or
/// 45 % more stack with the lambdas forced inline (scripts/size-table, 2026-11-29).
template <class Scalar, int Dim>
bool no_u_turn_merge(const Scalar* a, const Scalar* c, const Scalar* r, const Scalar* s,
                     const Scalar* e, const Scalar* f) noexcept {
  constexpr int W = wide_partials<Scalar>(Dim);  // as in no_u_turn_halves
  Scalar acc[6][W] = {};
  auto add = [&](Index k, int l) noexcept {
    const Scalar whole = r[k] + s[k];
    const Scalar left = r[k] + e[k];
    const Scalar right = s[k] + f[k];
    acc[0][l] += a[k] * whole;
    acc[1][l] += c[k] * whole;
    acc[2][l] += a[k] * left;
    acc[3][l] += e[k] * left;
    acc[4][l] += f[k] * right;
    acc[5][l] += c[k] * right;
  };
  constexpr Index body = Dim / W * W;
  for (Index i = 0; i < body; i += W) {
    for (int l = 0; l < W; ++l) add(i + l, l);
  }
  if constexpr (body < Dim) {
    for (Index i = body; i < Dim; ++i) add(i, 0);
  }
  for (int k = 0; k < 6; ++k) {
    Scalar sum(0);
    for (int l = 0; l < W; ++l) sum += acc[k][l];
    if (!(sum > Scalar(0))) return false;
  }
  return true;
}

/// One leapfrog step of the HMC recipe (HMCRecipe) on q = θ, r with ∇U(θ) in g, as the engine
/// computes it (the same operations in the same order, so the same values): r ← r − (h/2)∇U,
/// θ ← θ + h (r/m), ∇U at θ, r ← r − (h/2)∇U, h signed by the direction. inv_mass = 1/m; r/m is
/// r exactly when m = 1 (UnitMass), which skips the multiplication. No finiteness check: a
/// non-finite ∇U makes r non-finite, a non-finite r makes θ non-finite at the next drift, and a
/// non-finite value stays so under every later update, so one check of θ and r after the last
/// step sees every failure. HMC's local trajectory (HMC::local_transition) runs the same four
/// operations in loops of its own: through this function the portable build's AVX2 copy of HMC
/// float d = 32 took 1.7 times the instructions per transition (2 709 against 1 568, callgrind).
template <int Dim, bool UnitMass, class Q, class R, class G, class Model, class Scalar>
SGMCMC_ENGINE_INLINE inline void leapfrog(Q& q, R& r, G& g, const Model& model, Scalar h,
                                          Scalar inv_mass) noexcept {
  const Scalar half = h * Scalar(1) / Scalar(2);
  r -= half * g;
  if constexpr (UnitMass) {
    static_cast<void>(inv_mass);
    q += h * r;
  } else {
    q += h * (r * inv_mass);
  }
  model_gradient<Scalar, Dim>(model, q.data(), g.data());
  r -= half * g;
}

/// A sum of weights e^x kept as e^m · w with m the largest x added (so w ∈ [1, count]): the
/// streaming multinomial choice needs one exponential per added weight and no logarithm.
template <class Scalar>
struct ScaledSum {
  Scalar m = -std::numeric_limits<Scalar>::infinity();
  Scalar w = Scalar(0);
  /// Adds e^x; returns e^x / (the new sum) — the probability that a streaming choice picks it.
  Scalar add(Scalar x) noexcept;
  /// log of the sum.
  Scalar log() const noexcept { return m + std::log(w); }
};

template <class Scalar>
Scalar ScaledSum<Scalar>::add(Scalar x) noexcept {
  if (w == Scalar(0)) {
    m = x;
    w = Scalar(1);
    return Scalar(1);
  }
  if (x <= m) {
    const Scalar e = exp_nonpositive(x - m);
    w += e;
    return e / w;
  }
  w = w * exp_nonpositive(m - x) + Scalar(1);
  m = x;
  return Scalar(1) / w;
}

}  // namespace detail

/// What the last NUTS transition of a chain did (the state's bookkeeping: z.extra()).
template <class Scalar>
struct NUTSInfo {
  int depth = 0;  ///< doublings kept (the trajectory has 2^depth states)
  /// Leapfrog steps, dropped subtree included: as many potential evaluations and gradient
  /// evaluations, plus one of each at the start (the gradient's not when reused_gradient).
  int leapfrog_steps = 0;
  bool divergent = false;        ///< a dropped subtree met a divergence
  bool max_depth = false;        ///< stopped by MaxDepth rather than by a U-turn or divergence
  bool reused_gradient = false;  ///< the start's ∇U was the kept one (StartGradient::Keep)
  /// Zero: the bytes that would be padding (see HMCInfo::reserved).
  unsigned char reserved[sizeof(Scalar) - 3] = {};
  Scalar accept_stat = 0;  ///< mean of min(1, e^{H₀ − H}) over the leapfrog states (for tuning h)
  Scalar energy = 0;       ///< H₀ after the momentum draw

  friend bool operator==(const NUTSInfo& a, const NUTSInfo& b) noexcept {
    return a.depth == b.depth && a.leapfrog_steps == b.leapfrog_steps &&
           a.divergent == b.divergent && a.max_depth == b.max_depth &&
           a.reused_gradient == b.reused_gradient &&
           detail::same_bits_of(a.accept_stat, b.accept_stat) &&
           detail::same_bits_of(a.energy, b.energy);
  }
};
static_assert(sizeof(NUTSInfo<float>) == 12 + 2 * sizeof(float) &&
                  sizeof(NUTSInfo<double>) == 16 + 2 * sizeof(double),
              "NUTSInfo has no padding");

/// Parameters of NUTS.
template <class Scalar>
struct NUTSParams {
  Scalar step_size{Scalar(0.1)};          ///< h of the leapfrog
  Scalar mass{Scalar(1)};                 ///< m, M = m I
  Scalar max_energy_error{Scalar(1000)};  ///< a leaf with H − H₀ above this is a divergence
};

/// The No-U-Turn Sampler (Hoffman & Gelman 2014) in its current multinomial form (Betancourt
/// 2017), built iteratively. One step:
///  1. r ~ N(0, mI); H₀ = U(θ) + rᵀr/(2m).
///  2. Doubling j = 0, 1, ..., MaxDepth − 1: pick a direction uniformly and grow a subtree of 2^j
///     leapfrog states from that end of the trajectory. Inside the subtree the proposal is drawn
///     with probability ∝ e^{H₀ − H} (streaming multinomial); the subtree is dropped if a leaf has
///     H − H₀ > max_energy_error or a non-finite value (divergence), or if any of its aligned
///     sub-trees makes a U-turn.
///  3. A kept subtree's proposal replaces the current one with probability min(1, w_new/w_old)
///     (biased progressive sampling); the trajectory stops at a U-turn of the whole tree.
/// U-turn (generalised, on velocities M⁻¹r ∝ r for scalar mass): a span with end momenta r⁻, r⁺
/// and momentum sum ρ turns when r⁻·ρ ≤ 0 or r⁺·ρ ≤ 0. As in current Stan it is tested on every
/// merged sub-tree, on each sub-tree extended by the first state of its sibling, and on the
/// sibling extended by the last state of the sub-tree.
/// Leapfrog: the HMC recipe's (HMCRecipe), one step at a time: Recipe::integrate_in_place, or
/// where the step runs wide vector loads (x86) detail::leapfrog, the same values (test_hmc
/// compares the two bit for bit) without the engine's pass machinery per step (−17 % per
/// leapfrog step at double d = 100: docs/PERFORMANCE.md). Exact for exp(−U) for every step size
/// (leapfrog is reversible and volume preserving and the selection is symmetric over the orbit);
/// it needs the full-data U and ∇U. Cost: at most 2^MaxDepth − 1 leapfrog steps per step, each
/// with one gradient and one potential evaluation, and one of each at the start (a control loop
/// budgets that: docs/REALTIME.md); with G = StartGradient::Keep the start's gradient is the one
/// the last transition computed at the position it returned (kept in the state's scratch with
/// the position's key, and taken only where the position is bit for bit that one).
/// Class invariant: status() is Ok iff step_size, mass, max_energy_error are finite and > 0.
template <class Scalar, int Dim, int MaxDepth = 10, StartGradient G = StartGradient::Evaluate>
class NUTS;

namespace detail {
/// Scratch vectors of a NUTS state: 0 gradient (left), then the named ones below, then the
/// U-turn tracker's 4 · MaxDepth checkpoints, then with StartGradient::Keep the three of
/// NUTSKept.
enum NUTSScratch : int {
  kLeftG = 0,
  kLeftTheta,
  kLeftR,
  kRightTheta,
  kRightR,
  kRightG,
  kSampleTheta,
  kSampleR,
  kRho,
  kSubTheta,
  kSubR,
  kSubFirstR,
  kNearR,
  kCum,
  kTracker  // begin_r[MaxDepth], rho_before[MaxDepth], left_end_r[MaxDepth], cum_mid[MaxDepth]
};
/// StartGradient::Keep's scratch vectors, after the tracker's: ∇U at the proposal (after a
/// transition at the position), ∇U at the subtree's proposal, and the key of the position the
/// first belongs to (detail::store_position_key).
enum NUTSKept : int { kSampleG = 0, kSubG, kKey, kKeptVectors };
template <int MaxDepth>
inline constexpr int kNUTSKeptBase = kTracker + 4 * MaxDepth;  // the first of NUTSKept
template <int MaxDepth, StartGradient G>
inline constexpr int kNUTSScratch = kNUTSKeptBase<MaxDepth> +
                                    (G == StartGradient::Keep ? kKeptVectors : 0);
}  // namespace detail

template <class Scalar, int Dim, int MaxDepth, StartGradient G>
class NUTS
    : public SamplerBase<
          NUTS<Scalar, Dim, MaxDepth, G>, Scalar, Dim,
          State<Scalar, Layout<Dim, Dim>, detail::kNUTSScratch<MaxDepth, G>, NUTSInfo<Scalar>>,
          StateMap<Scalar, Layout<Dim, Dim>, detail::kNUTSScratch<MaxDepth, G>, NUTSInfo<Scalar>>,
          NUTSParams<Scalar>> {
  template <class, class, int, class, class, class>
  friend class SamplerBase;

 public:
  static_assert(MaxDepth >= 1 && MaxDepth <= 30, "MaxDepth must be in [1, 30]");
  static constexpr int max_depth = MaxDepth;
  using Params = NUTSParams<Scalar>;
  using Info = NUTSInfo<Scalar>;
  using RecipeType = HMCRecipe<Scalar, Dim>;
  using Map = VectorMap<Scalar, Dim>;
  using CMap = ConstVectorMap<Scalar, Dim>;

  explicit NUTS(const Params& p = Params{}) noexcept
      : params_(p),
        recipe_(HMC<Scalar, Dim>::make_recipe({p.step_size, 1, p.mass, true})),
        inv_mass_(Scalar(1) / p.mass) {}

  /// The leapfrog recipe (read-only).
  const RecipeType& recipe() const noexcept { return recipe_; }

 private:
  /// A trajectory end: position, momentum and ∇U there (scratch vectors), and U.
  struct Point {
    Scalar* theta;
    Scalar* r;
    Scalar* g;
    Scalar u;
  };
  /// The outcome of growing one subtree (its vectors are scratch kSubTheta, kSubR, kSubFirstR
  /// and the tracker's sum).
  struct Subtree {
    bool valid = true;
    bool divergent = false;
    int leaves = 0;
    detail::ScaledSum<Scalar> weight;  ///< Σ e^{H₀ − H} over its leaves
    Scalar accept_sum = Scalar(0);
  };

  Status current_status() const noexcept {
    if (!(params_.step_size > Scalar(0)) || !std::isfinite(params_.step_size)) {
      return StatusCode::InvalidStepSize;
    }
    if (!recipe_.status() || !(params_.max_energy_error > Scalar(0)) ||
        !std::isfinite(params_.max_energy_error)) {
      return StatusCode::InvalidParameter;
    }
    return StatusCode::Ok;
  }
  Scalar get_step_size() const noexcept { return params_.step_size; }
  static void put_step_size(Params& p, Scalar h) noexcept { p.step_size = h; }
  Status apply_params(const Params& p) noexcept {
    params_ = p;
    recipe_ = HMC<Scalar, Dim>::make_recipe({p.step_size, 1, p.mass, true});
    inv_mass_ = Scalar(1) / p.mass;
    return current_status();
  }
  template <class St, class X>
  Status init_state(St&, const X&) const noexcept {
    return StatusCode::Ok;
  }

  /// K(r), the recipe's kinetic term (HMC's formula).
  Scalar kinetic(const Scalar* r) const noexcept {
    return std::get<0>(recipe_.energy().terms).energy(CMap(r));
  }

  /// One leapfrog step of the point, in place, signed by `direction`, and U at the new point;
  /// false on a non-finite θ, r (a non-finite ∇U makes r so) or U.
  template <class Model>
  bool leapfrog(Point& p, Scalar direction, const Model& model) const noexcept {
    if constexpr (kPlainLeapfrog) {
      Map q(p.theta), r(p.r), g(p.g);
      const Scalar h = direction < Scalar(0) ? -params_.step_size : params_.step_size;
      if (inv_mass_ == Scalar(1)) {
        detail::leapfrog<Dim, true>(q, r, g, model, h, inv_mass_);
      } else {
        detail::leapfrog<Dim, false>(q, r, g, model, h, inv_mass_);
      }
      if (!detail::all_finite_packets(q, r)) return false;
    } else {
      Scalar* const blocks[2] = {p.theta, p.r};
      if (!recipe_.template integrate_in_place<detail::PassChecks::None>(blocks, p.g, model, 1,
                                                                         direction)) {
        return false;
      }
    }
    p.u = detail::call_potential<Scalar, Dim>(model, p.theta);
    return std::isfinite(p.u);
  }

  /// One NUTS transition. z.position() becomes the selected state and z.momentum() its momentum.
  /// On failure (invalid parameters, non-finite θ, ∇U(θ) or U(θ) at the start) z is unchanged.
  /// Divergences inside the trajectory are not failures: that subtree is dropped (the state's
  /// extra() says so).
  template <class St, class Model, class Rng>
  Status step_state(St& z, const Model& model, Rng& rng) const noexcept {
    check_potential_model<Model, Scalar, Dim>();
    if (Status s = current_status(); !s) return s;
    if (!detail::all_finite(z.position())) return StatusCode::NonFiniteState;
    auto sv = [&z](int k) { return detail::StateAccess::scratch(z, k); };
    Point left{sv(detail::kLeftTheta), sv(detail::kLeftR), sv(detail::kLeftG), Scalar(0)};
    Map(left.theta) = z.position();
    bool reused = false;
    if constexpr (kKeep) {
      reused = detail::matches_position_key(left.theta, kept(z, detail::kKey), Dim);
      if (reused) Map(left.g) = CMap(kept(z, detail::kSampleG));  // finite, as a kept leaf's
    }
    if (!reused) {
      detail::call_gradient<Scalar, Dim>(model, left.theta, left.g);
      if (!detail::all_finite(left.g, Dim)) return StatusCode::NonFiniteGradient;
    }
    left.u = detail::call_potential<Scalar, Dim>(model, left.theta);
    if (!std::isfinite(left.u)) return StatusCode::NonFinitePotential;
    std::get<0>(recipe_.energy().terms).sample(rng, left.r, Dim);
    Point right{sv(detail::kRightTheta), sv(detail::kRightR), sv(detail::kRightG), left.u};
    Map(right.theta) = CMap(left.theta);
    Map(right.r) = CMap(left.r);
    Map(right.g) = CMap(left.g);

    Info info;
    info.reused_gradient = reused;
    const Scalar h0 = left.u + kinetic(left.r);
    info.energy = h0;
    Map sample_theta(sv(detail::kSampleTheta));
    Map sample_r(sv(detail::kSampleR));
    Map rho(sv(detail::kRho));
    Map near_r(sv(detail::kNearR));
    sample_theta = CMap(left.theta);
    sample_r = CMap(left.r);
    if constexpr (kKeep) {
      if (!reused) Map(kept(z, detail::kSampleG)) = CMap(left.g);  // reused: it is already
    }
    rho = CMap(left.r);
    detail::ScaledSum<Scalar> weight;          // Σ e^{H₀ − H} over the kept tree
    static_cast<void>(weight.add(Scalar(0)));  // the start has weight 1
    Scalar accept_sum = Scalar(0);
    info.max_depth = true;

    for (int depth = 0; depth < MaxDepth; ++depth) {
      const bool forward = uniform_open01<Scalar>(rng) < Scalar(0.5);
      Point& edge = forward ? right : left;
      near_r = CMap(edge.r);                         // old end next to the added subtree
      const CMap far_r(forward ? left.r : right.r);  // old end at the other side
      Subtree sub;
      build(z, edge, depth, forward ? Scalar(1) : Scalar(-1), h0, model, rng, sub);
      info.leapfrog_steps += sub.leaves;
      accept_sum += sub.accept_sum;
      if (!sub.valid) {
        info.divergent = sub.divergent;
        info.max_depth = false;
        break;
      }
      info.depth = depth + 1;
      const CMap sub_theta(sv(detail::kSubTheta));
      const CMap sub_r(sv(detail::kSubR));
      const CMap sub_first_r(sv(detail::kSubFirstR));
      const CMap sub_rho(sv(detail::kCum));
      // Biased progressive sampling between doublings: the subtree's proposal with probability
      // min(1, W_sub / W_old).
      const Scalar ratio =
          sub.weight.m > weight.m
              ? sub.weight.w / (weight.w * detail::exp_nonpositive(weight.m - sub.weight.m))
              : sub.weight.w * detail::exp_nonpositive(sub.weight.m - weight.m) / weight.w;
      if (ratio >= Scalar(1) || uniform_open01<Scalar>(rng) < ratio) {
        sample_theta = sub_theta;
        sample_r = sub_r;
        if constexpr (kKeep) Map(kept(z, detail::kSampleG)) = CMap(kept(z, detail::kSubG));
      }
      weight.w = sub.weight.m > weight.m
                     ? weight.w * detail::exp_nonpositive(weight.m - sub.weight.m) + sub.weight.w
                     : weight.w + sub.weight.w * detail::exp_nonpositive(sub.weight.m - weight.m);
      weight.m = sub.weight.m > weight.m ? sub.weight.m : weight.m;
      // The merged tree (ends far, edge; sum before it 0, middle rho_old, after rho_old + sub):
      // the same three checks as inside a subtree, in one pass; then rho += sub_rho.
      const bool persist = detail::no_u_turn_merge<Scalar, Dim>(
          far_r.data(), edge.r, rho.data(), sub_rho.data(), sub_first_r.data(), near_r.data());
      rho += sub_rho;
      if (!persist) {
        info.max_depth = false;
        break;
      }
    }
    info.accept_stat =
        info.leapfrog_steps > 0 ? accept_sum / Scalar(info.leapfrog_steps) : Scalar(0);
    z.position() = sample_theta;
    z.momentum() = sample_r;
    // kSampleG is ∇U at sample_theta (the start's, when no proposal replaced it); the key says
    // at which position.
    if constexpr (kKeep)
      detail::store_position_key(sample_theta.data(), kept(z, detail::kKey), Dim);
    z.set_extra(info);
    return StatusCode::Ok;
  }

  /// Grows 2^depth leaves from edge (moved to the new end): the subtree's proposal to kSubTheta,
  /// kSubR, its first momentum to kSubFirstR and Σ r to kCum. The U-turn checks of every aligned
  /// sub-tree are made leaf by leaf with one checkpoint per level (4 · MaxDepth vectors): leaf n
  /// completes the aligned sub-trees of size 2^k for every 2^k dividing n + 1.
  template <class St, class Model, class Rng>
  void build(St& z, Point& edge, int depth, Scalar direction, Scalar h0, const Model& model,
             Rng& rng, Subtree& out) const noexcept {
    auto sv = [&z](int k) { return detail::StateAccess::scratch(z, k); };
    auto begin_r = [&](int k) { return Map(sv(detail::kTracker + k)); };
    auto rho_before = [&](int k) { return Map(sv(detail::kTracker + MaxDepth + k)); };
    auto left_end_r = [&](int k) { return Map(sv(detail::kTracker + 2 * MaxDepth + k)); };
    auto cum_mid = [&](int k) { return Map(sv(detail::kTracker + 3 * MaxDepth + k)); };
    Map cum(sv(detail::kCum));
    Map sub_theta(sv(detail::kSubTheta));
    Map sub_r(sv(detail::kSubR));
    Map first_r(sv(detail::kSubFirstR));
    cum.setZero();
    const std::uint32_t n_leaves = std::uint32_t(1) << depth;
    for (std::uint32_t n = 0; n < n_leaves; ++n) {
      ++out.leaves;
      if (!leapfrog(edge, direction, model)) {
        out.valid = false;
        out.divergent = true;
        return;
      }
      const CMap r(edge.r);
      const Scalar delta = edge.u + kinetic(edge.r) - h0;  // energy error H − H₀
      if (!(delta <= params_.max_energy_error)) {
        out.valid = false;
        out.divergent = true;
        return;
      }
      // Streaming multinomial choice: leaf n with probability w_n / Σ_{i ≤ n} w_i.
      const Scalar pick = out.weight.add(-delta);
      // min(1, e^{−δ}) for the acceptance statistic, from the same exponential when the
      // largest weight so far is ≤ 1 (the common case), else one more.
      out.accept_sum += delta <= Scalar(0) ? Scalar(1)
                        : out.weight.m <= Scalar(0)
                            ? pick * out.weight.w * detail::exp_nonpositive(out.weight.m)
                            : detail::exp_nonpositive(-delta);
      if (n == 0 || uniform_open01<Scalar>(rng) < pick) {
        sub_theta = CMap(edge.theta);
        sub_r = r;
        if constexpr (kKeep) Map(kept(z, detail::kSubG)) = CMap(edge.g);
      }
      if (n == 0) first_r = r;
      // U-turn checks of the sub-trees leaf n completes.
      for (int k = 1; k <= depth; ++k) {  // n ≡ 0 mod 2^k opens a level-k block
        if ((n & ((std::uint32_t(1) << k) - 1U)) != 0U) break;
        begin_r(k - 1) = r;
        rho_before(k - 1) = cum;
      }
      cum += r;
      int t = 0;  // levels 1..t close at leaf n: t = trailing zeros of n + 1
      while (t < depth && (((n + 1U) >> t) & 1U) == 0U) ++t;
      for (int k = 1; k <= t; ++k) {
        // The whole level-k block, its left half plus the right half's first momentum, and the
        // right half plus the left half's last momentum, in one pass. The right half's first
        // momentum is the start of the level-(k − 1) block that began at the middle: this leaf's
        // for k = 1.
        const Scalar* right_first = k == 1 ? edge.r : begin_r(k - 2).data();
        if (!detail::no_u_turn_halves<Scalar, Dim>(begin_r(k - 1).data(), edge.r, cum.data(),
                                                   rho_before(k - 1).data(), cum_mid(k - 1).data(),
                                                   right_first, left_end_r(k - 1).data())) {
          out.valid = false;
          return;
        }
      }
      if (t + 1 <= depth) {  // the level-t block just closed is the left half of level t + 1
        left_end_r(t) = r;
        cum_mid(t) = cum;
      }
    }
  }

  /// Whether a leaf's step is detail::leapfrog or the engine's integrate_in_place (the same
  /// values). detail::leapfrog where the step runs wide vector loads (x86: the engine's per-call
  /// pass machinery was 8–17 % of a leaf there), in a portable build only for blocks up to
  /// kLocalTrajectoryBytes: its Eigen packets stay 16 bytes while the engine's loops run in the
  /// AVX2 copy, and double d = 100 took 13–16 % longer through Eigen. The engine's elsewhere: on
  /// the Cortex-M4F the plain step took 8–20 % more instructions at d = 8 and 32 (Eigen's three
  /// loops against the engine's fused passes).
  static constexpr bool kPlainLeapfrog =
      SGMCMC_WIDE_STEP &&
      (detail::kEigenAsWideAsStep || Dim * int(sizeof(Scalar)) <= detail::kLocalTrajectoryBytes);

  static constexpr bool kKeep = G == StartGradient::Keep;
  /// StartGradient::Keep's scratch vector k (detail::NUTSKept).
  template <class St>
  static Scalar* kept(St& z, int k) noexcept {
    return detail::StateAccess::scratch(z, detail::kNUTSKeptBase<MaxDepth> + k);
  }

  Params params_;
  RecipeType recipe_;
  Scalar inv_mass_;  // 1/m, the plain leapfrog's drift factor
};

template <int Dim, int MaxDepth = 10, StartGradient G = StartGradient::Evaluate>
using NUTSf = NUTS<float, Dim, MaxDepth, G>;
template <int Dim, int MaxDepth = 10, StartGradient G = StartGradient::Evaluate>
using NUTSd = NUTS<double, Dim, MaxDepth, G>;

}  // namespace sgmcmc
