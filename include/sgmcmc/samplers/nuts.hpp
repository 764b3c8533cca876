// SPDX-License-Identifier: MIT
// Exact NUTS for full-data models (MATH.md §4.3 option A): iterative multinomial tree building,
// generalised U-turn checks, biased progressive sampling, memory O(d · MaxDepth), no heap.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include "sgmcmc/core/kinetic.hpp"
#include "sgmcmc/core/layout.hpp"
#include "sgmcmc/core/model.hpp"
#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/core/status.hpp"

namespace sgmcmc {

namespace detail {

/// True when the span with end momenta a, b and momentum sum rho has not turned back:
/// a·ρ > 0 and b·ρ > 0 (the generalised criterion on velocities M⁻¹r = r/m, m > 0).
template <class V>
bool no_u_turn(const V& a, const V& b, const V& rho) noexcept {
  return a.dot(rho) > 0 && b.dot(rho) > 0;
}

/// The U-turn checks of one NUTS subtree of 2^depth leaves, fed one leaf momentum at a time in
/// build order. Leaf n completes the aligned sub-trees of size 2^k for every 2^k dividing n + 1;
/// for each (k ≥ 1) it checks, as current Stan does: the merged sub-tree (first and last
/// momentum, its momentum sum), its left half extended by the first state of the right half,
/// and the right half extended by the last state of the left half. One checkpoint per level
/// suffices: the first momentum of the open level-k block and the sum before it, and the last
/// momentum and sum at the end of its left half. Memory 4 · MaxDepth vectors.
template <class Scalar, int Dim, int MaxDepth>
class UTurnTracker {
 public:
  using V = Vector<Scalar, Dim>;

  /// Starts a subtree of 2^depth leaves, depth < MaxDepth.
  void reset(int depth) noexcept {
    depth_ = depth;
    n_ = 0;
    cum_.setZero();
  }
  /// Adds the next leaf's momentum; false when a sub-tree completed by it turns back.
  bool add(const V& r) noexcept {
    const std::uint32_t n = n_++;
    for (int k = 1; k <= depth_; ++k) {  // n ≡ 0 mod 2^k opens a level-k block
      if ((n & ((std::uint32_t(1) << k) - 1U)) != 0U) break;
      begin_r_[k] = r;
      rho_before_[k] = cum_;
    }
    begin_r_[0] = r;
    cum_ += r;
    int t = 0;  // levels 1..t close at leaf n: t = trailing zeros of n + 1
    while (t < depth_ && (((n + 1U) >> t) & 1U) == 0U) ++t;
    for (int k = 1; k <= t; ++k) {
      if (!no_u_turn(begin_r_[k], r, V(cum_ - rho_before_[k])) ||
          !no_u_turn(begin_r_[k], begin_r_[k - 1],
                     V(cum_mid_[k] - rho_before_[k] + begin_r_[k - 1])) ||
          !no_u_turn(left_end_r_[k], r, V(cum_ - cum_mid_[k] + left_end_r_[k]))) {
        return false;
      }
    }
    if (t + 1 <= depth_) {  // the level-t block just closed is the left half of level t + 1
      left_end_r_[t + 1] = r;
      cum_mid_[t + 1] = cum_;
    }
    return true;
  }
  /// Σ r over the leaves added so far.
  const V& sum() const noexcept { return cum_; }

 private:
  std::array<V, MaxDepth> begin_r_;
  std::array<V, MaxDepth> rho_before_;
  std::array<V, MaxDepth> left_end_r_;
  std::array<V, MaxDepth> cum_mid_;
  V cum_ = V::Zero();
  int depth_ = 0;
  std::uint32_t n_ = 0;
};

}  // namespace detail

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
/// Iteration: the leaves of a subtree are generated in order and checked by UTurnTracker (one
/// checkpoint per level): 4 · MaxDepth vectors of size d, plus the two trajectory ends, the
/// current and subtree proposals and a few sums.
/// Exact for exp(−U) for every step size (leapfrog is reversible and volume preserving and the
/// selection is symmetric over the orbit); it needs the full-data U and ∇U.
/// Cost: at most 2^MaxDepth − 1 gradient and potential evaluations per step.
/// Class invariant: status() is Ok iff step_size, mass, max_energy_error are finite and > 0.
template <class Scalar, int Dim, int MaxDepth = 10>
class NUTS {
 public:
  static_assert(Dim > 0, "Dim must be positive");
  static_assert(MaxDepth >= 1 && MaxDepth <= 30, "MaxDepth must be in [1, 30]");
  using StateType = State<Scalar, Layout<Dim, Dim>>;
  using PositionVector = Vector<Scalar, Dim>;
  static constexpr int max_depth = MaxDepth;

  struct Params {
    Scalar step_size{Scalar(0.1)};          ///< h of the leapfrog
    Scalar mass{Scalar(1)};                 ///< m, M = m I
    Scalar max_energy_error{Scalar(1000)};  ///< a leaf with H − H₀ above this is a divergence
  };

  /// What one step did.
  struct Info {
    int depth = 0;           ///< doublings kept (the trajectory has 2^depth states)
    int leapfrog_steps = 0;  ///< gradient (and potential) evaluations, dropped subtree included
    bool divergent = false;  ///< a dropped subtree met a divergence
    bool max_depth = false;  ///< stopped by MaxDepth rather than by a U-turn or divergence
    Scalar accept_stat = 0;  ///< mean of min(1, e^{H₀ − H}) over the leapfrog states (for tuning h)
    Scalar energy = 0;       ///< H₀ after the momentum draw
  };

  explicit NUTS(const Params& p) noexcept : p_(p), kinetic_{p.mass} {
    if (!(p.step_size > Scalar(0)) || !std::isfinite(p.step_size)) {
      status_ = StatusCode::InvalidStepSize;
    } else if (!kinetic_.valid() || !(p.max_energy_error > Scalar(0)) ||
               !std::isfinite(p.max_energy_error)) {
      status_ = StatusCode::InvalidParameter;
    }
  }

  Status status() const noexcept { return status_; }
  const Params& params() const noexcept { return p_; }

  /// (θ₀, r = 0); r is redrawn at every step.
  StateType start(const PositionVector& theta0) const noexcept {
    StateType z;
    z.position() = theta0;
    return z;
  }

  /// One NUTS transition. z.position() becomes the selected state and z.momentum() its momentum.
  /// On failure (invalid parameters, non-finite θ, ∇U(θ) or U(θ) at the start) z is unchanged.
  /// Divergences inside the trajectory are not failures: that subtree is dropped (Info says so).
  template <class Model, class Rng>
  Status step(StateType& z, const Model& model, Rng& rng, Info* info = nullptr) const noexcept {
    check_potential_model<Model, Scalar, Dim>();
    check_rng<Rng>();
    if (!status_) return status_;
    if (!detail::all_finite(z.position())) return StatusCode::NonFiniteState;
    Point left;
    left.theta = z.position();
    model.gradient(left.theta, left.g);
    if (!detail::all_finite(left.g)) return StatusCode::NonFiniteGradient;
    left.u = Scalar(model.potential(left.theta));
    if (!std::isfinite(left.u)) return StatusCode::NonFinitePotential;
    kinetic_.sample(rng, left.r);
    Point right = left;

    Info local;
    const Scalar h0 = left.u + kinetic_.energy(left.r);
    local.energy = h0;
    PositionVector sample_theta = left.theta;
    PositionVector sample_r = left.r;
    PositionVector rho = left.r;
    Scalar log_weight = Scalar(0);  // log Σ e^{H₀ − H} over the kept tree (the start has weight 1)
    Scalar accept_sum = Scalar(0);
    local.max_depth = true;

    for (int depth = 0; depth < MaxDepth; ++depth) {
      const bool forward = uniform_open01<Scalar>(rng) < Scalar(0.5);
      Point& edge = forward ? right : left;
      const PositionVector near_r = edge.r;                     // old end next to the added subtree
      const PositionVector far_r = forward ? left.r : right.r;  // old end at the other side
      Subtree sub;
      build(edge, depth, forward ? p_.step_size : -p_.step_size, h0, model, rng, sub);
      local.leapfrog_steps += sub.leaves;
      accept_sum += sub.accept_sum;
      if (!sub.valid) {
        local.divergent = sub.divergent;
        local.max_depth = false;
        break;
      }
      local.depth = depth + 1;
      // Biased progressive sampling between doublings.
      if (sub.log_weight > log_weight ||
          std::log(uniform_open01<Scalar>(rng)) < sub.log_weight - log_weight) {
        sample_theta = sub.theta;
        sample_r = sub.r;
      }
      log_weight = log_add(log_weight, sub.log_weight);
      const PositionVector rho_old = rho;
      rho += sub.rho;
      bool persist = detail::no_u_turn(far_r, edge.r, rho);
      persist =
          persist && detail::no_u_turn(far_r, sub.first_r, PositionVector(rho_old + sub.first_r));
      persist = persist && detail::no_u_turn(near_r, edge.r, PositionVector(sub.rho + near_r));
      if (!persist) {
        local.max_depth = false;
        break;
      }
    }
    local.accept_stat =
        local.leapfrog_steps > 0 ? accept_sum / Scalar(local.leapfrog_steps) : Scalar(0);
    z.position() = sample_theta;
    z.momentum() = sample_r;
    if (info) *info = local;
    return StatusCode::Ok;
  }

 private:
  /// A trajectory end: position, momentum, and the cached ∇U and U there.
  struct Point {
    PositionVector theta;
    PositionVector r;
    PositionVector g;
    Scalar u = Scalar(0);
  };

  /// The outcome of growing one subtree.
  struct Subtree {
    bool valid = true;
    bool divergent = false;
    int leaves = 0;
    Scalar log_weight = -std::numeric_limits<Scalar>::infinity();
    Scalar accept_sum = Scalar(0);
    PositionVector theta = PositionVector::Zero();  ///< the subtree's proposal
    PositionVector r = PositionVector::Zero();
    PositionVector rho = PositionVector::Zero();      ///< Σ r over its leaves
    PositionVector first_r = PositionVector::Zero();  ///< momentum of its first leaf
  };

  static Scalar log_add(Scalar a, Scalar b) noexcept {
    if (a < b) {
      const Scalar t = a;
      a = b;
      b = t;
    }
    if (b == -std::numeric_limits<Scalar>::infinity()) return a;
    return a + std::log1p(std::exp(b - a));
  }

  /// One leapfrog step of signed size eps from p, in place. False on a non-finite value.
  template <class Model>
  bool leapfrog(Point& p, Scalar eps, const Model& model) const noexcept {
    p.r -= (eps / Scalar(2)) * p.g;
    p.theta += (eps / kinetic_.mass) * p.r;
    model.gradient(p.theta, p.g);
    if (!detail::all_finite(p.g)) return false;
    p.u = Scalar(model.potential(p.theta));
    p.r -= (eps / Scalar(2)) * p.g;
    return std::isfinite(p.u) && detail::all_finite(p.r) && detail::all_finite(p.theta);
  }

  /// Grows 2^depth leaves from edge (moved to the new end) and fills out.
  template <class Model, class Rng>
  void build(Point& edge, int depth, Scalar eps, Scalar h0, const Model& model, Rng& rng,
             Subtree& out) const noexcept {
    detail::UTurnTracker<Scalar, Dim, MaxDepth> turns;
    turns.reset(depth);
    const std::uint32_t n_leaves = std::uint32_t(1) << depth;
    for (std::uint32_t n = 0; n < n_leaves; ++n) {
      ++out.leaves;
      if (!leapfrog(edge, eps, model)) {
        out.valid = false;
        out.divergent = true;
        return;
      }
      const Scalar delta = edge.u + kinetic_.energy(edge.r) - h0;  // energy error H − H₀
      if (!(delta <= p_.max_energy_error)) {
        out.valid = false;
        out.divergent = true;
        return;
      }
      out.accept_sum += delta > Scalar(0) ? std::exp(-delta) : Scalar(1);
      // Streaming multinomial choice: leaf n with probability w_n / Σ_{i ≤ n} w_i.
      out.log_weight = log_add(out.log_weight, -delta);
      if (n == 0 || std::log(uniform_open01<Scalar>(rng)) < -delta - out.log_weight) {
        out.theta = edge.theta;
        out.r = edge.r;
      }
      if (n == 0) out.first_r = edge.r;
      if (!turns.add(edge.r)) {
        out.valid = false;
        return;
      }
    }
    out.rho = turns.sum();
  }

  Params p_;
  GaussianKinetic<Scalar> kinetic_;
  Status status_;
};

template <int Dim, int MaxDepth = 10>
using NUTSf = NUTS<float, Dim, MaxDepth>;
template <int Dim, int MaxDepth = 10>
using NUTSd = NUTS<double, Dim, MaxDepth>;

}  // namespace sgmcmc
