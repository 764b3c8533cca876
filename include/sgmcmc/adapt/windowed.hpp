// SPDX-License-Identifier: MIT
// Windowed warm-up as Stan runs it: an initial buffer, slow windows that double in length (each
// ends with a new variance or covariance estimate of the position, by Welford), a terminal
// buffer. Fixed size, no heap.
#pragma once

// Schedule for W warm-up iterations (Stan's defaults: init buffer 75, term buffer 50, base
// window 25). Iterations [0, init) adapt the step size only; the slow windows cover
// [init, W − term) with lengths 25, 50, 100, ...; a window that would leave less than twice its
// length before the terminal buffer is stretched to reach it. At the end of each slow window the
// position's sample variance (or covariance) over that window becomes the new metric,
// regularised toward 10⁻³ as Stan does:
//   Σ ← n/(n + 5) Σ + 10⁻³ · 5/(n + 5) I        (n draws in the window),
// and the caller restarts its step-size adaptation (Stan: dual averaging from the current h). The
// terminal buffer adapts the step size to the final metric. With W < 20 nothing is adapted; when
// init + base + term > W the three become 15 %, 75 % and 10 % of W (Stan's fallback).

#include <cstdint>
#include <type_traits>

#include "sgmcmc/core/types.hpp"
#include "sgmcmc/diagnostics/welford.hpp"

namespace sgmcmc {

/// Lengths of Stan's warm-up phases (iterations).
struct WindowParams {
  std::uint64_t init_buffer = 75;  ///< step size only, before the first slow window
  std::uint64_t term_buffer = 50;  ///< step size only, after the last slow window
  std::uint64_t base_window = 25;  ///< length of the first slow window (the next ones double)
};

/// Where each warm-up iteration falls (Stan's windowed adaptation schedule).
class WindowSchedule {
 public:
  /// W = warmup iterations; see the header comment for short warm-ups.
  explicit WindowSchedule(std::uint64_t warmup, const WindowParams& p = WindowParams{}) noexcept
      : warmup_(warmup), p_(p) {
    if (warmup < 20) {
      active_ = false;
    } else if (p.init_buffer + p.base_window + p.term_buffer > warmup) {
      p_.init_buffer = std::uint64_t(0.15 * double(warmup));
      p_.term_buffer = std::uint64_t(0.1 * double(warmup));
      p_.base_window = warmup - (p_.init_buffer + p_.term_buffer);
    }
    restart();
  }

  /// Back to iteration 0.
  void restart() noexcept {
    counter_ = 0;
    window_size_ = p_.base_window;
    next_end_ = p_.init_buffer + window_size_ - 1;
  }

  /// False when W < 20: no metric adaptation at all (the step size may still adapt).
  bool active() const noexcept { return active_; }
  /// The current iteration's index in the warm-up.
  std::uint64_t iteration() const noexcept { return counter_; }
  /// The phases actually used (after the short-warm-up fallback).
  const WindowParams& params() const noexcept { return p_; }

  /// True iff the current iteration's draw belongs to a slow window.
  bool in_window() const noexcept {
    return active_ && counter_ >= p_.init_buffer && counter_ + p_.term_buffer < warmup_ &&
           counter_ != warmup_;
  }
  /// True iff the current iteration closes a slow window.
  bool window_ends() const noexcept {
    return active_ && counter_ == next_end_ && counter_ != warmup_;
  }

  /// Moves to the next iteration (after the current one's draw was handled); computes the next
  /// window when the current one ended.
  void advance() noexcept {
    if (window_ends()) next_window();
    ++counter_;
  }

 private:
  void next_window() noexcept {
    const std::uint64_t last = warmup_ - p_.term_buffer - 1;
    if (next_end_ == last) return;
    window_size_ *= 2;
    next_end_ = counter_ + window_size_;
    if (next_end_ != last && next_end_ + 2 * window_size_ >= warmup_ - p_.term_buffer) {
      next_end_ = last;
    }
  }

  std::uint64_t warmup_;
  WindowParams p_;
  bool active_ = true;
  std::uint64_t counter_ = 0;
  std::uint64_t window_size_ = 0;
  std::uint64_t next_end_ = 0;
};

/// Stan's regularisation of a window's estimate from n draws: n/(n + 5) x + 10⁻³ · 5/(n + 5).
template <class Scalar>
Scalar regularisation_weight(std::uint64_t n) noexcept {
  return Scalar(n) / (Scalar(n) + Scalar(5));
}

/// A windowed estimate of the position's variance (Dense = false) or covariance (Dense = true):
/// add(θ) after every warm-up iteration; it returns true when a slow window just ended, with the
/// regularised estimate in `out` (Vector<Scalar, Dim> of variances, or the Dim × Dim covariance).
/// Stack size: Dim² scalars for the dense form.
template <class Scalar, int Dim, bool Dense>
class WindowedMetric {
 public:
  static_assert(Dim > 0, "Dim must be positive");
  using Estimate = std::conditional_t<Dense, Matrix<Scalar, Dim, Dim>, Vector<Scalar, Dim>>;

  explicit WindowedMetric(std::uint64_t warmup, const WindowParams& p = WindowParams{}) noexcept
      : schedule_(warmup, p) {}

  /// The schedule (which phase the next add() falls in).
  const WindowSchedule& schedule() const noexcept { return schedule_; }

  /// Folds in the draw of the current warm-up iteration and advances. True iff a slow window
  /// ended here: `out` then holds its regularised estimate and the window's sums are reset.
  template <class X>
  bool add(const Eigen::MatrixBase<X>& theta, Estimate& out) noexcept {
    const bool in = schedule_.in_window();
    const bool ends = schedule_.window_ends();
    if (in) welford_.push(theta);
    bool updated = false;
    if (ends && welford_.count() >= 2) {
      const std::uint64_t n = welford_.count();
      const Scalar w = regularisation_weight<Scalar>(n);
      const Scalar shrink = Scalar(1e-3) * (Scalar(1) - w);
      if constexpr (Dense) {
        out = w * welford_.covariance();
        out.diagonal().array() += shrink;
      } else {
        out = (w * welford_.variance().array() + shrink).matrix();
      }
      welford_.reset();
      updated = true;
    }
    schedule_.advance();
    return updated;
  }

 private:
  using Accumulator =
      std::conditional_t<Dense, WelfordCovariance<Scalar, Dim>, Welford<Scalar, Dim>>;
  WindowSchedule schedule_;
  Accumulator welford_;
};

}  // namespace sgmcmc
