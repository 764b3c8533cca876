// SPDX-License-Identifier: MIT
// Effective sample size per coordinate: streaming batch means, streaming Geyer over a fixed lag
// window, and offline versions of both for a stored chain. Fixed capacity, no heap.
#pragma once

// ESS = n / tau, tau = 1 + 2 sum_{k>=1} rho_k the integrated autocorrelation time.
//
// Batch means: with k batches of b consecutive draws, b * (sample variance of the batch means)
// estimates the asymptotic variance sigma^2 = tau * var(x), so ESS = n var(x) / sigma^2. It is
// consistent when b >> tau; its relative standard error is about sqrt(2 / (k - 1)), and for
// AR(1)-like chains it under-estimates sigma^2 (over-estimates ESS) by about 2 rho_1 / (b (1 -
// rho_1^2)).
//
// Geyer (1992) initial monotone sequence: Gamma_m = rho_2m + rho_2m+1 is summed while positive,
// each term clipped to the previous one, tau = 2 sum_m Gamma_m - 1. The autocorrelations are the
// standard biased estimates gamma_k / gamma_0 with gamma_k = (1/n) sum_t (x_t - mean)(x_t+k -
// mean). The offline function computes them exactly as an FFT estimator would (same formula, O(n)
// per lag, only the lags Geyer needs). The streaming accumulator computes the very same gamma_k, to
// rounding, but only for k < MaxLag: the approximation versus the offline/FFT estimator is the
// truncation of the sequence at MaxLag. When the positive sequence is still positive at the end
// of the window the result is flagged `truncated` (tau under-estimated, ESS over-estimated):
// choose MaxLag around 10 tau (for AR(1) with rho_1 = 0.99, tau = 199, the sequence at n = 1e5
// usually stops between lags 300 and 1000, occasionally later). The streaming values are kept
// shifted by the first draw, so a large common mean does not cancel catastrophically; Accum =
// double gives more headroom for float chains. Both Geyer versions floor tau at 1 / log10(n) (ESS
// at most n log10 n), as Stan does.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "sgmcmc/core/types.hpp"
#include "sgmcmc/diagnostics/welford.hpp"

namespace sgmcmc {

/// One coordinate's ESS estimate.
template <class Scalar>
struct ESSEstimate {
  Scalar ess;      ///< effective sample size n / tau (NaN for a constant or too short chain)
  Scalar tau;      ///< integrated autocorrelation time
  bool truncated;  ///< Geyer's positive sequence reached the end of the lag window
};

namespace detail {

// Geyer's initial monotone sequence over rho(k), k < n_lags, for a chain of n draws.
template <class Scalar, class Rho>
ESSEstimate<Scalar> geyer_from_rho(Rho&& rho, std::size_t n_lags, std::size_t n) noexcept {
  Scalar sum = 0;
  Scalar previous = std::numeric_limits<Scalar>::infinity();
  bool truncated = true;
  for (std::size_t k = 0; k + 1 < n_lags; k += 2) {
    Scalar pair = rho(k) + rho(k + 1);
    if (!(pair > 0)) {
      truncated = false;
      break;
    }
    pair = std::min(pair, previous);
    sum += pair;
    previous = pair;
  }
  const Scalar floor = Scalar(1) / std::log10(std::max(Scalar(n), Scalar(10)));
  const Scalar tau = std::max(Scalar(2) * sum - Scalar(1), floor);
  return {Scalar(n) / tau, tau, truncated};
}

template <class Scalar>
ESSEstimate<Scalar> invalid_estimate() noexcept {
  constexpr Scalar nan = std::numeric_limits<Scalar>::quiet_NaN();
  return {nan, nan, false};
}

}  // namespace detail

/// Offline Geyer ESS of the stored chain x[0], x[stride], ..., x[(n-1)*stride], using lags below
/// max_lag (default: all). Exact autocovariances, O(n) per lag actually used. NaN for n < 4 or a
/// constant chain.
template <class Scalar>
ESSEstimate<Scalar> ess_geyer(
    const Scalar* x, std::size_t n, std::size_t stride = 1,
    std::size_t max_lag = std::numeric_limits<std::size_t>::max()) noexcept {
  if (x == nullptr || n < 4) return detail::invalid_estimate<Scalar>();
  Scalar mean = 0;
  for (std::size_t t = 0; t < n; ++t) mean += x[t * stride];
  mean /= Scalar(n);
  auto autocov = [&](std::size_t k) {
    Scalar s = 0;
    for (std::size_t t = k; t < n; ++t) s += (x[t * stride] - mean) * (x[(t - k) * stride] - mean);
    return s / Scalar(n);
  };
  const Scalar gamma0 = autocov(0);
  if (!(gamma0 > 0)) return detail::invalid_estimate<Scalar>();
  return detail::geyer_from_rho<Scalar>([&](std::size_t k) { return autocov(k) / gamma0; },
                                        std::min(max_lag, n), n);
}

/// Offline batch-means ESS of a stored chain (layout as ess_geyer): `batches` batches of
/// floor(n / batches) draws from the start (a remainder at the end is left out of the batch
/// means, not of the variance). NaN unless 2 <= batches <= n / 2 and the chain varies.
template <class Scalar>
ESSEstimate<Scalar> ess_batch_means(const Scalar* x, std::size_t n, std::size_t stride = 1,
                                    std::size_t batches = 32) noexcept {
  if (x == nullptr || batches < 2 || n < 2 * batches) return detail::invalid_estimate<Scalar>();
  const std::size_t b = n / batches;
  Welford<Scalar, 1> all;
  Welford<Scalar, 1> means;
  for (std::size_t j = 0; j < batches; ++j) {
    Scalar s = 0;
    for (std::size_t t = j * b; t < (j + 1) * b; ++t) s += x[t * stride];
    means.push(Vector<Scalar, 1>(s / Scalar(b)));
  }
  for (std::size_t t = 0; t < n; ++t) all.push(Vector<Scalar, 1>(x[t * stride]));
  const Scalar sigma2 = Scalar(b) * means.variance()[0];
  const Scalar var = all.variance()[0];
  if (!(var > 0) || !(sigma2 > 0)) return detail::invalid_estimate<Scalar>();
  const Scalar tau = sigma2 / var;
  return {Scalar(n) / tau, tau, false};
}

/// Streaming batch-means ESS with at most Batches batches (even, >= 4). Batches start one draw
/// long; whenever all Batches are full, neighbours are merged and the batch length doubles, so
/// after n >= Batches draws there are between Batches/2 and Batches complete batches of length
/// b in [n / Batches, 2 n / Batches]. O(D) per push (amortised), (Batches + 4) D scalars.
/// Meaningful once b >> tau; relative standard error about sqrt(2 / (complete batches - 1)).
template <class Scalar, int D, int Batches = 64>
class BatchMeansESS {
 public:
  static_assert(D >= 1, "sgmcmc: BatchMeansESS needs a fixed dimension D >= 1");
  static_assert(Batches >= 4 && Batches % 2 == 0, "sgmcmc: BatchMeansESS needs even Batches >= 4");
  using Vec = Vector<Scalar, D>;

  BatchMeansESS() noexcept { reset(); }

  /// Forgets every draw.
  void reset() noexcept {
    all_.reset();
    current_.setZero();
    in_current_ = 0;
    batch_length_ = 1;
    full_ = 0;
  }

  /// Adds one draw.
  void push(const Vec& x) noexcept {
    all_.push(x);
    current_ += x;
    if (++in_current_ < batch_length_) return;
    sums_[full_++] = current_;
    current_.setZero();
    in_current_ = 0;
    if (full_ == std::size_t(Batches)) {
      for (std::size_t j = 0; j < std::size_t(Batches) / 2; ++j) {
        sums_[j] = sums_[2 * j] + sums_[2 * j + 1];
      }
      full_ = std::size_t(Batches) / 2;
      batch_length_ *= 2;
    }
  }

  /// Number of draws pushed.
  std::uint64_t count() const noexcept { return all_.count(); }
  /// Number of complete batches and their length.
  std::size_t batches() const noexcept { return full_; }
  std::uint64_t batch_length() const noexcept { return batch_length_; }

  /// Estimate for coordinate d (NaN for d outside [0, D), with fewer than 2 complete batches or
  /// for a constant chain).
  ESSEstimate<Scalar> estimate(Index d) const noexcept {
    if (d < 0 || d >= D || full_ < 2) return detail::invalid_estimate<Scalar>();
    Welford<Scalar, 1> means;
    for (std::size_t j = 0; j < full_; ++j) {
      means.push(Vector<Scalar, 1>(sums_[j][d] / Scalar(batch_length_)));
    }
    const Scalar sigma2 = Scalar(batch_length_) * means.variance()[0];
    const Scalar var = all_.variance()[d];
    if (!(var > 0) || !(sigma2 > 0)) return detail::invalid_estimate<Scalar>();
    const Scalar tau = sigma2 / var;
    return {Scalar(all_.count()) / tau, tau, false};
  }

  /// ESS of every coordinate.
  Vec ess() const noexcept {
    Vec out;
    for (Index d = 0; d < D; ++d) out[d] = estimate(d).ess;
    return out;
  }

 private:
  Welford<Scalar, D> all_;
  std::array<Vec, Batches> sums_;
  Vec current_;
  std::uint64_t in_current_;
  std::uint64_t batch_length_;
  std::size_t full_;
};

/// Streaming Geyer ESS over the lag window [0, MaxLag): keeps the last MaxLag draws in a ring
/// buffer, the first MaxLag draws, and the lag-k cross sums sum_t y_t y_{t-k}, from which the
/// exact centred autocovariances of every lag below MaxLag follow. O(MaxLag D) per push,
/// 3 MaxLag D + O(D) values of type Accum. See the header comment for the approximation.
template <class Scalar, int D, int MaxLag, class Accum = Scalar>
class GeyerESS {
 public:
  static_assert(D >= 1, "sgmcmc: GeyerESS needs a fixed dimension D >= 1");
  static_assert(MaxLag >= 2 && MaxLag % 2 == 0, "sgmcmc: GeyerESS needs an even MaxLag >= 2");
  using Vec = Vector<Scalar, D>;

  GeyerESS() noexcept { reset(); }

  /// Forgets every draw.
  void reset() noexcept {
    n_ = 0;
    shift_.fill(Accum(0));
    sum_.fill(Accum(0));
    cross_.fill(Accum(0));
  }

  /// Adds one draw.
  void push(const Vec& x) noexcept {
    constexpr std::size_t L = MaxLag;
    if (n_ == 0) {
      for (std::size_t d = 0; d < std::size_t(D); ++d) shift_[d] = Accum(x[Index(d)]);
    }
    const std::size_t pos = static_cast<std::size_t>(n_ % L);
    Accum* y = &ring_[pos * D];
    for (std::size_t d = 0; d < std::size_t(D); ++d) {
      y[d] = Accum(x[Index(d)]) - shift_[d];
      sum_[d] += y[d];
      if (n_ < L) first_[pos * D + d] = y[d];
    }
    const std::size_t lags = static_cast<std::size_t>(std::min<std::uint64_t>(n_ + 1, L));
    const std::size_t direct = std::min(lags, pos + 1);  // lags whose slot is pos - k >= 0
    for (std::size_t k = 0; k < direct; ++k) {
      const Accum* past = &ring_[(pos - k) * D];
      Accum* c = &cross_[k * D];
      for (std::size_t d = 0; d < std::size_t(D); ++d) c[d] += y[d] * past[d];
    }
    for (std::size_t k = direct; k < lags; ++k) {
      const Accum* past = &ring_[(pos + L - k) * D];
      Accum* c = &cross_[k * D];
      for (std::size_t d = 0; d < std::size_t(D); ++d) c[d] += y[d] * past[d];
    }
    ++n_;
  }

  /// Number of draws pushed.
  std::uint64_t count() const noexcept { return n_; }

  /// Autocovariance gamma_k of coordinate d (the biased 1/n form); quiet NaN unless
  /// 0 <= d < D and k < min(count(), MaxLag), the lags the window holds.
  Scalar autocovariance(Index d, std::size_t k) const noexcept {
    if (d < 0 || d >= D || k >= std::min<std::uint64_t>(n_, MaxLag)) {
      return std::numeric_limits<Scalar>::quiet_NaN();
    }
    Accum head = 0;  // sum of the first k draws
    Accum tail = 0;  // sum of the last k draws
    for (std::size_t j = 0; j < k; ++j) {
      head += first_[j * D + std::size_t(d)];
      tail += ring_[slot_back(j) * D + std::size_t(d)];
    }
    return Scalar(gamma_from(std::size_t(d), k, head, tail));
  }

  /// Estimate for coordinate d (NaN for d outside [0, D), with fewer than 4 draws or for a
  /// constant chain).
  ESSEstimate<Scalar> estimate(Index d) const noexcept {
    if (d < 0 || d >= D || n_ < 4) return detail::invalid_estimate<Scalar>();
    const std::size_t dd = static_cast<std::size_t>(d);
    const Accum gamma0 = gamma_from(dd, 0, Accum(0), Accum(0));
    if (!(gamma0 > 0)) return detail::invalid_estimate<Scalar>();
    // Lags are visited in increasing order, so the head/tail sums grow by one draw per lag.
    std::size_t next_k = 0;
    Accum head = 0;
    Accum tail = 0;
    auto rho = [&](std::size_t k) {
      for (; next_k < k; ++next_k) {
        head += first_[next_k * D + dd];
        tail += ring_[slot_back(next_k) * D + dd];
      }
      return Scalar(gamma_from(dd, k, head, tail) / gamma0);
    };
    const std::size_t lags = static_cast<std::size_t>(std::min<std::uint64_t>(n_, MaxLag));
    return detail::geyer_from_rho<Scalar>(rho, lags, static_cast<std::size_t>(n_));
  }

  /// ESS of every coordinate.
  Vec ess() const noexcept {
    Vec out;
    for (Index d = 0; d < D; ++d) out[d] = estimate(d).ess;
    return out;
  }

 private:
  // Ring slot of the draw j places before the newest (j < min(n, MaxLag)).
  std::size_t slot_back(std::size_t j) const noexcept {
    const std::size_t newest = static_cast<std::size_t>((n_ - 1) % MaxLag);
    return j <= newest ? newest - j : newest + MaxLag - j;
  }

  // n gamma_k = C_k - m (A_k + B_k) + (n - k) m^2 with m the mean of the shifted draws,
  // A_k = sum_{t>=k} y_t = S - head, B_k = sum_{t<n-k} y_t = S - tail.
  Accum gamma_from(std::size_t d, std::size_t k, Accum head, Accum tail) const noexcept {
    const Accum n = Accum(n_);
    const Accum m = sum_[d] / n;
    const Accum a = sum_[d] - head;
    const Accum b = sum_[d] - tail;
    return (cross_[k * D + d] - m * (a + b) + (n - Accum(k)) * m * m) / n;
  }

  std::uint64_t n_;
  std::array<Accum, D> shift_;
  std::array<Accum, D> sum_;
  std::array<Accum, std::size_t(MaxLag) * D> ring_;
  std::array<Accum, std::size_t(MaxLag) * D> first_;
  std::array<Accum, std::size_t(MaxLag) * D> cross_;
};

}  // namespace sgmcmc
