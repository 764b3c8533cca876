// SPDX-License-Identifier: MIT
// Step-size adaptation by dual averaging (Nesterov 2009; Hoffman & Gelman 2014, Algorithm 5), as
// Stan runs it during warm-up: drives a sampler's acceptance statistic to a target.
#pragma once

// After warm-up transition t with acceptance statistic a_t ∈ [0, 1] (HMC: min(1, e^{−ΔH}); NUTS:
// the mean over the tree's leaves, NUTSInfo::accept_stat):
//   s̄_t = (1 − 1/(t + t₀)) s̄_{t−1} + (δ − a_t)/(t + t₀)
//   x_t = μ − √t s̄_t / γ,                     h_t = e^{x_t}      (used by the next transition)
//   x̄_t = t^{−κ} x_t + (1 − t^{−κ}) x̄_{t−1},  h̄ = e^{x̄_t}       (the step size after warm-up)
// with μ = log(10 h₀) set by restart(h₀): the iterates are shrunk toward ten times the start, which
// favours larger steps early. Stan's defaults: δ = 0.8, γ = 0.05, t₀ = 10, κ = 0.75. Stan restarts
// the averaging (from the current h) whenever its metric changes (adapt/windowed.hpp).

#include <cmath>
#include <cstdint>

#include "sgmcmc/core/status.hpp"

namespace sgmcmc {

/// Parameters of DualAveraging (Stan's names in brackets).
template <class Scalar>
struct DualAveragingParams {
  Scalar target{Scalar(0.8)};  ///< δ ∈ (0, 1): the acceptance statistic aimed at [adapt_delta]
  Scalar gamma{Scalar(0.05)};  ///< γ > 0: regularisation scale [adapt_gamma]
  Scalar t0{Scalar(10)};       ///< t₀ ≥ 0: damps the first iterations [adapt_t0]
  Scalar kappa{Scalar(0.75)};  ///< κ ∈ (0.5, 1]: decay of the averaging weights [adapt_kappa]
};

/// Dual-averaging step-size adaptation. No heap, O(1) per update.
/// Class invariant: valid() iff the parameters are in range; an invalid adaptor never changes its
/// step size (update returns the current one).
template <class Scalar>
class DualAveraging {
 public:
  using Params = DualAveragingParams<Scalar>;

  explicit DualAveraging(const Params& p = Params{}) noexcept : p_(p) {
    valid_ = p.target > Scalar(0) && p.target < Scalar(1) && p.gamma > Scalar(0) &&
             std::isfinite(p.gamma) && p.t0 >= Scalar(0) && std::isfinite(p.t0) &&
             p.kappa > Scalar(0.5) && p.kappa <= Scalar(1);
  }

  /// See the class invariant.
  bool valid() const noexcept { return valid_; }
  const Params& params() const noexcept { return p_; }

  /// Starts a new adaptation from h₀ (μ = log(10 h₀), counters and averages reset).
  /// InvalidStepSize (nothing changed) unless h₀ is finite and > 0; InvalidParameter if !valid().
  Status restart(Scalar h0) noexcept {
    if (!(h0 > Scalar(0)) || !std::isfinite(h0)) return StatusCode::InvalidStepSize;
    if (!valid_) return StatusCode::InvalidParameter;
    mu_ = std::log(Scalar(10) * h0);
    x_ = std::log(h0);
    x_bar_ = Scalar(0);
    s_bar_ = Scalar(0);
    count_ = 0;
    return StatusCode::Ok;
  }

  /// Folds in the acceptance statistic of the transition just made (clipped to [0, 1]; a NaN
  /// counts as 0, a divergent transition's value) and returns the next step size e^{x_t}.
  Scalar update(Scalar accept_stat) noexcept {
    if (!valid_) return step_size();
    const Scalar a =
        accept_stat > Scalar(1) ? Scalar(1) : (accept_stat > Scalar(0) ? accept_stat : Scalar(0));
    ++count_;
    const Scalar t = Scalar(count_);
    const Scalar eta = Scalar(1) / (t + p_.t0);
    s_bar_ = (Scalar(1) - eta) * s_bar_ + eta * (p_.target - a);
    x_ = mu_ - std::sqrt(t) / p_.gamma * s_bar_;
    const Scalar w = std::pow(t, -p_.kappa);
    x_bar_ = w * x_ + (Scalar(1) - w) * x_bar_;
    return step_size();
  }

  /// The step size for the next warm-up transition, e^{x_t} (h₀ before the first update).
  Scalar step_size() const noexcept { return std::exp(x_); }
  /// The averaged step size e^{x̄_t} to freeze after warm-up (h₀ before the first update).
  Scalar averaged_step_size() const noexcept { return count_ > 0 ? std::exp(x_bar_) : step_size(); }
  /// Updates since the last restart.
  std::uint64_t count() const noexcept { return count_; }

 private:
  Params p_;
  bool valid_ = false;
  Scalar mu_ = Scalar(0);
  Scalar x_ = Scalar(0);
  Scalar x_bar_ = Scalar(0);
  Scalar s_bar_ = Scalar(0);
  std::uint64_t count_ = 0;
};

}  // namespace sgmcmc
