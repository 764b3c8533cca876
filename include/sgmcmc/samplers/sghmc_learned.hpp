// SPDX-License-Identifier: MIT
// SGHMCLearnedRefresh (MATH.md §4.3 option C): kick–drift SGHMC whose momentum is redrawn after
// trajectory lengths learned by the U-turn criterion in warm-up and then frozen. Not SGNUTS.
#pragma once

#include <array>
#include <cstdint>

#include "sgmcmc/samplers/sghmc.hpp"

namespace sgmcmc {

/// A fixed-capacity set of trajectory lengths (in steps), a value. Class invariant (checked by
/// valid()): 0 ≤ count ≤ Capacity and values[0..count) ≥ 1.
template <int Capacity>
struct LearnedLengths {
  static_assert(Capacity > 0, "Capacity must be positive");
  std::array<std::uint32_t, Capacity> values{};
  std::int32_t count = 0;

  bool empty() const noexcept { return count == 0; }
  bool full() const noexcept { return count == Capacity; }
  /// The class invariant.
  bool valid() const noexcept {
    if (count < 0 || count > Capacity) return false;
    for (std::int32_t i = 0; i < count; ++i) {
      if (values[static_cast<std::size_t>(i)] == 0) return false;
    }
    return true;
  }
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
    for (std::int32_t i = 0; i < count; ++i) s += values[static_cast<std::size_t>(i)];
    return count > 0 ? s / count : 0.0;
  }
};

/// The per-chain bookkeeping of the learned refresh (the state's extra()).
template <int Capacity>
struct LearnedRefreshExtra {
  LearnedLengths<Capacity> lengths;  ///< learned in warm-up (or set by the user), then frozen
  std::uint32_t steps = 0;           ///< warm-up: steps of the trajectory being measured
  std::uint32_t remaining = 0;       ///< sampling: steps left before the next refresh
  bool running = false;              ///< warm-up: a trajectory is being measured
  unsigned char reserved[3] = {};    ///< zero: the bytes that would be padding (HMCInfo)

  friend bool operator==(const LearnedRefreshExtra& a, const LearnedRefreshExtra& b) noexcept {
    return a.lengths.count == b.lengths.count && a.lengths.values == b.lengths.values &&
           a.steps == b.steps && a.remaining == b.remaining && a.running == b.running;
  }
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
/// Warm-up (while the state's lengths are not full): kick–drift SGHMC steps; after each refresh
/// r ~ N(0, mI) it counts steps until the first L with (θ_L − θ₀)·r_L < 0 (the U-turn of the
/// trajectory seen from its start; M = mI so M⁻¹r ∝ r), capped at max_length, stores L, and
/// refreshes again. Warm-up iterates are not samples (z.extra().lengths.full() says when it ends).
/// Sampling: plain kick–drift SGHMC (MATH.md §2.2, correct noise N(0, h(2C − hV̂))), with
/// r ~ N(0, mI) redrawn before the first step and then after every L_k steps, L_k drawn
/// i.i.d. uniformly from the frozen lengths. Every iterate is kept.
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
/// State: scratch 0 the gradient, 1 θ at the last warm-up refresh, 2 the momentum before a
/// refresh (restored if the step then fails).
template <class Scalar, int Dim, int Capacity = 32>
class SGHMCLearnedRefresh
    : public RecipeSampler<SGHMCLearnedRefresh<Scalar, Dim, Capacity>, SGHMCRecipe<Scalar, Dim>,
                           SGHMCLearnedRefreshParams<Scalar>, 3, LearnedRefreshExtra<Capacity>> {
  using Base = RecipeSampler<SGHMCLearnedRefresh<Scalar, Dim, Capacity>, SGHMCRecipe<Scalar, Dim>,
                             SGHMCLearnedRefreshParams<Scalar>, 3, LearnedRefreshExtra<Capacity>>;
  template <class, class, int, class, class, class>
  friend class SamplerBase;

 public:
  using Params = SGHMCLearnedRefreshParams<Scalar>;
  /// step also learns lengths and refreshes p: no step_with_noise.
  static constexpr bool has_noise_tick = false;
  using Lengths = LearnedLengths<Capacity>;
  using Extra = LearnedRefreshExtra<Capacity>;

  explicit SGHMCLearnedRefresh(const Params& p = Params{}) noexcept : Base(p) {}

  static SGHMCRecipe<Scalar, Dim> make_recipe(const Params& p) noexcept {
    return detail::sghmc_recipe<Scalar, Dim, KickDrift, false>(
        SGHMCParams<Scalar>{p.step_size, p.friction, p.mass});
  }

  /// Replaces the lengths of z (e.g. learned by another chain) and ends its warm-up if they are
  /// full; InvalidParameter (z unchanged) unless lengths.valid() and non-empty.
  template <class St>
  Status set_lengths(St& z, const Lengths& lengths) const noexcept {
    if (!lengths.valid() || lengths.empty()) return StatusCode::InvalidParameter;
    Extra e = z.extra();
    e.lengths = lengths;
    e.running = false;
    e.remaining = 0;
    z.set_extra(e);
    return StatusCode::Ok;
  }

 private:
  Status current_status() const noexcept {
    if (!this->recipe_.status()) return this->recipe_.status();
    return this->params_.max_length >= 1 ? Status(StatusCode::Ok)
                                         : Status(StatusCode::InvalidParameter);
  }

  template <class St, class Model, class Rng>
  Status step_state(St& z, const Model& model, Rng& rng) const noexcept {
    if (Status s = current_status(); !s) return s;
    Extra e = z.extra();
    if (!e.lengths.valid()) return StatusCode::InvalidParameter;
    const bool learning = !e.lengths.full();
    const bool refresh = learning ? !e.running : e.remaining == 0;
    Scalar* backup = detail::StateAccess::scratch(z, 2);
    if (refresh) {
      VectorMap<Scalar, Dim> saved(backup);
      saved = z.momentum();
      std::get<0>(this->recipe_.energy().terms).sample(rng, z.momentum());
      if (learning) {
        VectorMap<Scalar, Dim> origin(detail::StateAccess::scratch(z, 1));
        origin = z.position();
        e.steps = 0;
        e.running = true;
      } else {
        e.remaining = e.lengths.draw(rng);
      }
    }
    if (Status s = this->recipe_.step(z, model, rng); !s) {
      if (refresh) z.momentum() = ConstVectorMap<Scalar, Dim>(backup);
      return s;
    }
    if (learning) {
      ++e.steps;
      const ConstVectorMap<Scalar, Dim> origin(detail::StateAccess::scratch(z, 1));
      const bool turned = (z.position() - origin).dot(z.momentum()) < Scalar(0);
      if (turned || e.steps >= this->params_.max_length) {
        e.lengths.add(e.steps);
        e.running = false;
      }
    } else {
      --e.remaining;
    }
    z.set_extra(e);
    return StatusCode::Ok;
  }
};

template <int Dim, int Capacity = 32>
using SGHMCLearnedRefreshf = SGHMCLearnedRefresh<float, Dim, Capacity>;
template <int Dim, int Capacity = 32>
using SGHMCLearnedRefreshd = SGHMCLearnedRefresh<double, Dim, Capacity>;

}  // namespace sgmcmc
