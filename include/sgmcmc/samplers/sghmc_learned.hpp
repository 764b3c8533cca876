// SPDX-License-Identifier: MIT
// SGHMCLearnedRefresh (MATH.md §4.3 option C): kick–drift SGHMC whose momentum is redrawn after
// trajectory lengths learned by the U-turn criterion in warm-up and then frozen. Not SGNUTS.
#pragma once

#include <array>
#include <cstdint>

#include "sgmcmc/samplers/sghmc.hpp"

namespace sgmcmc {

/// A fixed-capacity set of trajectory lengths (in steps), learned in warm-up; a value the user
/// owns. Class invariant: 0 ≤ count ≤ Capacity and values[0..count) ≥ 1.
template <int Capacity>
struct LearnedLengths {
  static_assert(Capacity > 0, "Capacity must be positive");
  std::array<std::uint32_t, Capacity> values{};
  int count = 0;

  bool empty() const noexcept { return count == 0; }
  bool full() const noexcept { return count == Capacity; }
  /// Appends L ≥ 1 if there is room; returns whether it was stored.
  bool add(std::uint32_t length) noexcept {
    if (full() || length == 0) return false;
    values[static_cast<std::size_t>(count++)] = length;
    return true;
  }
  /// One length drawn uniformly from the stored ones, independently of any chain state
  /// (index = ⌊u · count⌋ from 32 random bits; bias below count / 2^32). Requires !empty().
  template <class Rng>
  std::uint32_t draw(Rng& rng) const noexcept {
    check_rng<Rng>();
    const std::uint64_t bits = rng() >> 32;
    const auto i = static_cast<std::size_t>((bits * static_cast<std::uint64_t>(count)) >> 32);
    return values[i];
  }
  /// Mean stored length (0 when empty).
  double mean() const noexcept {
    double s = 0.0;
    for (int i = 0; i < count; ++i) s += values[static_cast<std::size_t>(i)];
    return count > 0 ? s / count : 0.0;
  }
};

/// Warm-up bookkeeping of the length learning (a value the user owns, next to the state).
template <class Scalar, int Dim, int Capacity>
struct LengthLearner {
  LearnedLengths<Capacity> lengths;                          ///< filled by warmup_step
  Vector<Scalar, Dim> origin = Vector<Scalar, Dim>::Zero();  ///< θ at the last refresh
  std::uint32_t steps = 0;                                   ///< steps since that refresh
  bool running = false;                                      ///< a trajectory is being measured
};

/// The sampling-phase schedule (a value the user owns): steps left before the next refresh.
struct RefreshCountdown {
  std::uint32_t remaining = 0;  ///< 0: refresh before the next step
};

/// Parameters of SGHMCLearnedRefresh (independent of its capacity).
template <class Scalar>
struct SGHMCLearnedRefreshParams {
  Scalar step_size{Scalar(1e-2)};  ///< h
  Scalar friction{Scalar(1)};      ///< C ≥ 0
  Scalar mass{Scalar(1)};          ///< m > 0
  std::uint32_t max_length{1000};  ///< cap on a learned length (steps), ≥ 1
};

/// SGHMC with momentum refresh after U-turn-learned trajectory lengths (MATH.md §4.3 option C).
///
/// Warm-up (warmup_step): kick–drift SGHMC steps; after each refresh r ~ N(0, mI) it counts
/// steps until the first L with (θ_L − θ₀)·r_L < 0 (the U-turn of the trajectory seen from its
/// start; M = mI so M⁻¹r ∝ r), capped at max_length, stores L, and refreshes again, until the
/// fixed array holds Capacity lengths. Warm-up iterates are not samples.
/// Sampling (step): plain kick–drift SGHMC (MATH.md §2.2, correct noise N(0, h(2C − hV̂))), with
/// r ~ N(0, mI) redrawn before the first step and then after every L_k steps, L_k drawn
/// i.i.d. uniformly from the frozen array. Every iterate is kept.
///
/// What it guarantees. A momentum refresh is an exact Gibbs move for exp(−H), H = U + rᵀr/(2m);
/// the SGHMC step is a first-order discretisation of an exp(−H)-invariant diffusion; the refresh
/// times are drawn independently of the chain's state, so the composition has SGHMC's invariant
/// law: exp(−H) up to SGHMC's O(h) bias (and any error of V̂). The U-turn criterion only chooses
/// the schedule: it is never evaluated while sampling (a state-dependent stopping time would bias
/// the iterates), and nothing is accepted or rejected.
/// What it is not: the seed's SGNUTS (MATH.md §4.1–4.2). There is no trajectory tree, no
/// multinomial or progressive selection, no Ũ-based weights and no online U-turn test; it is
/// also not exact: for an exact sampler with full data use NUTS (nuts.hpp).
/// Class invariant: status() is Ok iff the SGHMC parameters are valid and max_length ≥ 1.
template <class Scalar, int Dim, int Capacity = 32>
class SGHMCLearnedRefresh {
 public:
  static_assert(Dim > 0, "Dim must be positive");
  using Inner = SGHMC<Scalar, Dim>;
  using StateType = typename Inner::StateType;
  using PositionVector = Vector<Scalar, Dim>;
  using Lengths = LearnedLengths<Capacity>;
  using Learner = LengthLearner<Scalar, Dim, Capacity>;

  using Params = SGHMCLearnedRefreshParams<Scalar>;

  explicit SGHMCLearnedRefresh(const Params& p) noexcept
      : p_(p), inner_(typename Inner::Params{p.step_size, p.friction, p.mass}) {}

  Status status() const noexcept {
    if (!inner_.status()) return inner_.status();
    return p_.max_length >= 1 ? Status(StatusCode::Ok) : Status(StatusCode::InvalidParameter);
  }
  const Params& params() const noexcept { return p_; }
  /// The SGHMC stepper (e.g. for drift()).
  const Inner& sghmc() const noexcept { return inner_; }
  /// V̂ = diag(v), as for SGHMC: the momentum noise becomes N(0, h(2C − hV̂)).
  Status set_gradient_noise(const PositionVector& v) noexcept {
    return inner_.set_gradient_noise(v);
  }
  Status set_gradient_noise(Scalar v) noexcept { return inner_.set_gradient_noise(v); }

  /// (θ₀, r = 0).
  StateType start(const PositionVector& theta0) const noexcept { return inner_.start(theta0); }

  /// One warm-up step: refresh and start a measured trajectory if none is running, one SGHMC
  /// step, then record L when the U-turn (or the cap) is reached. Once learner.lengths is full
  /// it only steps. On failure z and learner are unchanged.
  template <class Model, class Rng>
  Status warmup_step(StateType& z, const Model& model, Rng& rng, Learner& learner) const noexcept {
    if (Status s = status(); !s) return s;
    StateType w = z;
    Learner next = learner;
    if (!next.running && !next.lengths.full()) {
      inner_.refresh_momentum(w, rng);
      next.origin = w.position();
      next.steps = 0;
      next.running = true;
    }
    if (Status s = inner_.step(w, model, rng); !s) return s;
    if (next.running) {
      ++next.steps;
      const bool turned = (w.position() - next.origin).dot(w.momentum()) < Scalar(0);
      if (turned || next.steps >= p_.max_length) {
        next.lengths.add(next.steps);
        next.running = false;
      }
    }
    z = w;
    learner = next;
    return StatusCode::Ok;
  }

  /// One sampling step: if the countdown is 0, r ~ N(0, mI) and a new length L ~ Uniform(lengths)
  /// starts the countdown; then one SGHMC step and the countdown decreases. InvalidParameter if
  /// lengths is empty. On failure z and countdown are unchanged.
  template <class Model, class Rng>
  Status step(StateType& z, const Model& model, Rng& rng, const Lengths& lengths,
              RefreshCountdown& countdown) const noexcept {
    if (Status s = status(); !s) return s;
    if (lengths.empty()) return StatusCode::InvalidParameter;
    StateType w = z;
    RefreshCountdown next = countdown;
    if (next.remaining == 0) {
      inner_.refresh_momentum(w, rng);
      next.remaining = lengths.draw(rng);
    }
    if (Status s = inner_.step(w, model, rng); !s) return s;
    --next.remaining;
    z = w;
    countdown = next;
    return StatusCode::Ok;
  }

 private:
  Params p_;
  Inner inner_;
};

template <int Dim, int Capacity = 32>
using SGHMCLearnedRefreshf = SGHMCLearnedRefresh<float, Dim, Capacity>;
template <int Dim, int Capacity = 32>
using SGHMCLearnedRefreshd = SGHMCLearnedRefresh<double, Dim, Capacity>;

}  // namespace sgmcmc
