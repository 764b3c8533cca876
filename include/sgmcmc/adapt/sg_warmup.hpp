// SPDX-License-Identifier: MIT
// The warm-up of a stochastic-gradient sampler's step size (docs/adaptation.md): doubling windows,
// after each the window's configurational temperature — pooled over every chain that shares the
// step size — moves h by adapt_sg_step, and at the end h is frozen at the geometric mean of the
// h's set after the later half of the windows. Fixed size, no heap, no loop without a bound.
#pragma once

#include <cmath>
#include <cstddef>

#include "sgmcmc/adapt/sg_step_size.hpp"

namespace sgmcmc {

/// The step-size warm-up of an SG sampler over `warmup` steps, in windows of first_window,
/// 2·first_window, 4·first_window, ... steps (a window that would leave less than twice its
/// successor's length is stretched to the end, so no window is shorter than first_window).
///
/// Use: run window() with step_size() for window_length() steps on every chain, collecting a
/// ConfigurationalTemperature per chain (TemperatureProbe); then end_window(T̄), T̄ the mean over
/// the chains of their windows' mean temperatures, returns the h of the next window; after the
/// last window it returns the frozen h (done() is then true). Pooling the chains' temperatures
/// makes one chain's excursion in a non-Gaussian direction unable to collapse or inflate the
/// common h on its own; averaging log h over the later half of the windows (weighted by their
/// lengths) damps the noise of each window's verdict (docs/stan-comparison.md measures both).
/// Class invariant: valid() iff warmup ≥ first_window ≥ 1, h0 > 0 finite and order > 0 finite;
/// an invalid warm-up is done() at once and keeps h0.
template <class Scalar>
class SGStepSizeWarmup {
 public:
  /// Windows are capped at kMaxWindows (doubling: 64 covers any std::size_t warm-up).
  static constexpr std::size_t kMaxWindows = 64;

  /// @param warmup       warm-up steps per chain
  /// @param first_window length of the first window (250 in the experiment)
  /// @param h0           the starting h (sghmc_initial_step / sgld_initial_step)
  /// @param order        the power of h in the excess temperature: 2 SGHMC/SGNHT, 1 SGLD
  /// @param params       tolerance ε and the clamps (SGStepSizeParams)
  /// @param average      false: keep the h set after the last window instead of the average
  /// @param validated    true: in the average, a window whose verdict grew h counts with the h
  ///                     it ran with (each averaged h was run and found within the tolerance,
  ///                     or is a shrink): no untested growth survives into the frozen h. For
  ///                     posteriors whose excess grows faster with h than the power law says
  ///                     (docs/stan-comparison.md, Caravan); the plain average otherwise.
  SGStepSizeWarmup(std::size_t warmup, std::size_t first_window, Scalar h0, Scalar order,
                   const SGStepSizeParams<Scalar>& params = {}, bool average = true,
                   bool validated = false) noexcept
      : params_(params), order_(order), h_(h0), average_(average), validated_(validated) {
    const bool valid = first_window >= 1 && warmup >= first_window && h0 > Scalar(0) &&
                       std::isfinite(h0) && order > Scalar(0) && std::isfinite(order);
    if (!valid) return;  // no windows
    std::size_t used = 0;
    std::size_t len = first_window;
    while (used < warmup && count_ < kMaxWindows) {
      std::size_t take = len < warmup - used ? len : warmup - used;
      // Stretch this window to the end if the rest could not hold a window of twice its length.
      if (warmup - used - take < 2 * len || count_ + 1 == kMaxWindows) take = warmup - used;
      lengths_[count_++] = take;
      used += take;
      len = 2 * len > len ? 2 * len : len;  // no wrap-around
    }
  }

  /// See the class invariant (a valid warm-up has at least one window).
  bool valid() const noexcept { return count_ > 0; }
  /// Number of windows.
  std::size_t window_count() const noexcept { return count_; }
  /// The current window's index (window_count() once done).
  std::size_t window() const noexcept { return current_; }
  /// The current window's length in steps (0 once done).
  std::size_t window_length() const noexcept { return window_length(current_); }
  /// Length of window k (0 for k ≥ window_count()).
  std::size_t window_length(std::size_t k) const noexcept { return k < count_ ? lengths_[k] : 0; }
  /// True after the last window's end_window (at once for an invalid warm-up).
  bool done() const noexcept { return current_ >= count_; }
  /// The h to run the current window with; once done, the frozen h.
  Scalar step_size() const noexcept { return h_; }

  /// Ends the current window with the chains' pooled mean temperature (a non-finite one shrinks
  /// h by the clamp, as adapt_sg_step does) and returns the next window's h, or after the last
  /// window the frozen h. Once done, changes nothing and returns the frozen h.
  Scalar end_window(Scalar pooled_temperature) noexcept {
    if (done()) return h_;
    const Scalar ran = h_;
    h_ = adapt_sg_step(h_, pooled_temperature, order_, params_);
    if (average_ && 2 * (current_ + 1) > count_) {
      const Scalar w = Scalar(lengths_[current_]);
      log_sum_ += w * std::log(validated_ && ran < h_ ? ran : h_);
      weight_ += w;
    }
    ++current_;
    if (done() && weight_ > Scalar(0)) h_ = std::exp(log_sum_ / weight_);
    return h_;
  }

 private:
  SGStepSizeParams<Scalar> params_;
  Scalar order_;
  Scalar h_;
  bool average_;
  bool validated_;
  std::size_t lengths_[kMaxWindows] = {};
  std::size_t count_ = 0;
  std::size_t current_ = 0;
  Scalar log_sum_ = 0;
  Scalar weight_ = 0;
};

}  // namespace sgmcmc
