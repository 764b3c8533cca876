// SPDX-License-Identifier: MIT
// Batch-means Monte Carlo error for the on-target stationarity checks: a chain's averages are
// compared with their expected values within k standard errors estimated from the chain itself.
#pragma once

#include <cmath>

#include "sgmcmc/cortex_m/check.hpp"

namespace fw {

/// Batch means of Q quantities over kBatches consecutive batches of a chain. With batches much
/// longer than the autocorrelation time, the batch means are nearly independent, so the
/// standard error of the overall mean is sd(batch means) / sqrt(kBatches).
template <int Q>
class BatchMeans {
 public:
  static constexpr int kBatches = 40;

  explicit BatchMeans(long batch_length) noexcept : length_(batch_length) {}

  /// Adds one draw of the Q quantities; ignored once every batch is full.
  void add(const double (&x)[Q]) noexcept {
    if (batch_ == kBatches) return;
    for (int q = 0; q < Q; ++q) acc_[q] += x[q];
    if (++count_ == length_) {
      for (int q = 0; q < Q; ++q) {
        means_[batch_][q] = acc_[q] / static_cast<double>(length_);
        acc_[q] = 0.0;
      }
      count_ = 0;
      ++batch_;
    }
  }
  bool full() const noexcept { return batch_ == kBatches; }
  long draws() const noexcept { return length_ * kBatches; }

  /// Overall mean of quantity q.
  double mean(int q) const noexcept {
    double s = 0.0;
    for (int b = 0; b < kBatches; ++b) s += means_[b][q];
    return s / kBatches;
  }
  /// Batch-means standard error of mean(q).
  double standard_error(int q) const noexcept {
    const double m = mean(q);
    double ss = 0.0;
    for (int b = 0; b < kBatches; ++b) ss += (means_[b][q] - m) * (means_[b][q] - m);
    return std::sqrt(ss / (kBatches - 1) / kBatches);
  }

 private:
  long length_;
  long count_ = 0;
  int batch_ = 0;
  double acc_[Q] = {};
  double means_[kBatches][Q] = {};
};

/// Standard errors allowed: with 40 batches the error/SE ratio is Student-t with 39 degrees of
/// freedom, and P(|t_39| > 5) is about 1.3e-5 per check.
inline constexpr double kSigmas = 5.0;

/// Whether |estimate - expected| <= kSigmas * se + allowance (allowance: a known bound on the
/// discretisation bias, 0 for exact samplers); prints one line either way.
inline bool moment_ok(const char* name, double estimate, double se, double expected,
                      double allowance) noexcept {
  const double tol = kSigmas * se + allowance;
  const double err = std::fabs(estimate - expected);
  const bool ok = err <= tol;
  sgmcmc::cortex_m::Line().decimals(4)
      << "  " << name << ": " << estimate << " (expected " << expected << ", |err| " << err
      << " <= " << tol << " = 5 SE " << kSigmas * se << " + bias " << allowance << ")"
      << (ok ? "" : "  <-- outside") << '\n';
  return ok;
}

}  // namespace fw
