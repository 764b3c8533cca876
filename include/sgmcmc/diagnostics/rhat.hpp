// SPDX-License-Identifier: MIT
// Split R-hat (Gelman et al., BDA3 §11.4) over a fixed number of chains, from streaming
// per-half-chain Welford statistics. Fixed capacity, no heap.
#pragma once

// Each chain of n draws is split into its first and second half, giving m = 2 K sequences of
// length h = n / 2. With sequence means mean_j, variances s_j^2 (n-1 denominator) and
//   B / h = 1/(m-1) sum_j (mean_j - mean)^2,   W = 1/m sum_j s_j^2,
//   var+ = (h-1)/h W + B/h,                     R-hat = sqrt(var+ / W).
// Splitting makes R-hat see drift within a chain as well as disagreement between chains. This is
// the classic BDA3 form, not the rank-normalised R-hat of Vehtari et al. (2021), which needs the
// stored draws; it can miss chains that differ only in their tails. Values above 1.01 (strict) or
// 1.1 (lenient) signal non-convergence.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "sgmcmc/core/types.hpp"
#include "sgmcmc/diagnostics/welford.hpp"

namespace sgmcmc {

/// R-hat per coordinate from m >= 2 sequences' statistics (BDA3 formula above, with h the
/// shortest sequence's length when they differ). NaN when m < 2, h < 2 or W = 0.
template <class Scalar, int D>
Vector<Scalar, D> rhat_from_sequences(const Welford<Scalar, D>* sequences, std::size_t m) noexcept {
  using Vec = Vector<Scalar, D>;
  const Vec nan = Vec::Constant(std::numeric_limits<Scalar>::quiet_NaN());
  if (sequences == nullptr || m < 2) return nan;
  std::uint64_t h = sequences[0].count();
  Vec grand = Vec::Zero();
  Vec w = Vec::Zero();
  for (std::size_t j = 0; j < m; ++j) {
    h = sequences[j].count() < h ? sequences[j].count() : h;
    grand += sequences[j].mean();
  }
  if (h < 2) return nan;
  grand /= Scalar(m);
  Vec b_over_h = Vec::Zero();
  for (std::size_t j = 0; j < m; ++j) {
    const Vec dev = sequences[j].mean() - grand;
    b_over_h += dev.cwiseProduct(dev);
    w += sequences[j].variance();
  }
  b_over_h /= Scalar(m - 1);
  w /= Scalar(m);
  const Scalar hh = Scalar(h);
  Vec out;
  for (Index d = 0; d < D; ++d) {
    const Scalar var_plus = (hh - Scalar(1)) / hh * w[d] + b_over_h[d];
    out[d] =
        w[d] > Scalar(0) ? std::sqrt(var_plus / w[d]) : std::numeric_limits<Scalar>::quiet_NaN();
  }
  return out;
}

/// Streaming split R-hat over Chains chains of a planned length: draws [0, h) of a chain go to
/// its first half, [h, 2h) to its second, h = draws_per_chain / 2; later draws are ignored.
/// Storage 2 Chains Welford accumulators (4 Chains D + O(Chains) scalars).
template <class Scalar, int D, int Chains>
class SplitRhat {
 public:
  static_assert(Chains >= 1, "sgmcmc: SplitRhat needs at least one chain");
  using Vec = Vector<Scalar, D>;

  /// Plans draws_per_chain draws for every chain (an odd last draw is ignored).
  explicit SplitRhat(std::uint64_t draws_per_chain) noexcept : half_(draws_per_chain / 2) {}

  /// Forgets every draw.
  void reset() noexcept {
    for (auto& s : halves_) s.reset();
    for (auto& s : seen_) s = 0;
  }

  /// Adds the next draw of chain `chain` (< Chains; other values are ignored).
  void push(std::size_t chain, const Vec& x) noexcept {
    if (chain >= std::size_t(Chains)) return;
    const std::uint64_t t = seen_[chain]++;
    if (t < half_) {
      halves_[2 * chain].push(x);
    } else if (t < 2 * half_) {
      halves_[2 * chain + 1].push(x);
    }
  }

  /// True once every chain has delivered its planned draws.
  bool complete() const noexcept {
    for (std::size_t j = 0; j < 2 * std::size_t(Chains); ++j) {
      if (halves_[j].count() < half_) return false;
    }
    return true;
  }

  /// Split R-hat per coordinate from the draws so far (NaN before each half holds 2 draws).
  Vec rhat() const noexcept { return rhat_from_sequences(halves_, 2 * std::size_t(Chains)); }

  /// Statistics of half `j` (chain j / 2, first half when j is even), by value; an empty
  /// accumulator (count 0) for j >= 2 Chains.
  Welford<Scalar, D> half(std::size_t j) const noexcept {
    return j < 2 * std::size_t(Chains) ? halves_[j] : Welford<Scalar, D>();
  }

 private:
  std::uint64_t half_;
  Welford<Scalar, D> halves_[2 * Chains];
  std::uint64_t seen_[Chains] = {};
};

}  // namespace sgmcmc
