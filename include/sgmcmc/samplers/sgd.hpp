// SPDX-License-Identifier: MIT
// Optimisers as zero-temperature limits of the recipe (MATH.md §2.3): SGD = cold SGLD,
// SGD with momentum (heavy ball) = cold SGHMC. Same engine, no noise, no Γ.
#pragma once

#include <cmath>
#include <limits>

#include "sgmcmc/samplers/sghmc.hpp"
#include "sgmcmc/samplers/sgld.hpp"

namespace sgmcmc {

/// Parameters of SGD.
template <class Scalar, class DS>
struct SGDParams {
  Scalar learning_rate{Scalar(1e-3)};  ///< h
  DS preconditioner{};                 ///< D₀, default I
};

/// θ ← θ - h D₀ g.
template <class Scalar, int Dim, class DS = Scaled<Scalar>>
class SGD : public RecipeSampler<SGD<Scalar, Dim, DS>, SGLDRecipe<Scalar, Dim, DS, true>,
                                 SGDParams<Scalar, DS>> {
  using Base =
      RecipeSampler<SGD<Scalar, Dim, DS>, SGLDRecipe<Scalar, Dim, DS, true>, SGDParams<Scalar, DS>>;
  template <class, class, int, class, class, class>
  friend class SamplerBase;

 public:
  using Params = SGDParams<Scalar, DS>;
  explicit SGD(const Params& p = Params{}) noexcept : Base(p) {}

  static SGLDRecipe<Scalar, Dim, DS, true> make_recipe(const Params& p) noexcept {
    return {Energy<>{}, Diffusion<DS>{{p.preconditioner}}, Curl<>{}, p.learning_rate};
  }

 private:
  Scalar get_step_size() const noexcept { return this->params_.learning_rate; }
  static void put_step_size(Params& p, Scalar h) noexcept { p.learning_rate = h; }
};

/// Parameters of SGD with momentum.
template <class Scalar>
struct SGDMomentumParams {
  Scalar learning_rate{Scalar(1e-3)};  ///< η > 0
  Scalar momentum_decay{Scalar(0.1)};  ///< α in (0, 1]: momentum coefficient 1 - α
};

/// Heavy ball: v ← (1 - α)v - ηg; θ ← θ + v, as cold kick–drift SGHMC with m = 1, h = √η,
/// C = α/√η; the state's momentum is r = v/h. step_size() is that h (set_step_size(h) sets
/// η = h²). status() is InvalidParameter unless η > 0 and α ∈ (0, 1] (finite).
template <class Scalar, int Dim>
class SGDMomentum
    : public RecipeSampler<SGDMomentum<Scalar, Dim>, SGHMCRecipe<Scalar, Dim, KickDrift, true>,
                           SGDMomentumParams<Scalar>> {
  using Base = RecipeSampler<SGDMomentum<Scalar, Dim>, SGHMCRecipe<Scalar, Dim, KickDrift, true>,
                             SGDMomentumParams<Scalar>>;
  template <class, class, int, class, class, class>
  friend class SamplerBase;

 public:
  using Params = SGDMomentumParams<Scalar>;
  explicit SGDMomentum(const Params& p = Params{}) noexcept : Base(p) {}

  static SGHMCRecipe<Scalar, Dim, KickDrift, true> make_recipe(const Params& p) noexcept {
    return detail::sghmc_recipe<Scalar, Dim, KickDrift, true>(
        SGHMCParams<Scalar>::from_momentum_sgd(p.learning_rate, p.momentum_decay));
  }

 private:
  Status current_status() const noexcept {
    const Params& p = this->params_;
    if (!(p.learning_rate > Scalar(0)) || !std::isfinite(p.learning_rate)) {
      return StatusCode::InvalidStepSize;
    }
    if (!(p.momentum_decay > Scalar(0)) || !(p.momentum_decay <= Scalar(1))) {
      return StatusCode::InvalidParameter;
    }
    return this->recipe_.status();
  }
  template <class St, class Model, class Rng>
  Status step_state(St& z, const Model& model, Rng& rng) const noexcept {
    if (Status s = current_status(); !s) return s;
    return this->recipe_.step(z, model, rng);
  }
  Scalar get_step_size() const noexcept { return std::sqrt(this->params_.learning_rate); }
  /// η = h² for h > 0; anything else stores an invalid η (NaN), so that status() reports it.
  static void put_step_size(Params& p, Scalar h) noexcept {
    p.learning_rate = h > Scalar(0) ? h * h : std::numeric_limits<Scalar>::quiet_NaN();
  }
};

}  // namespace sgmcmc
