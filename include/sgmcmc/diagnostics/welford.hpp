// SPDX-License-Identifier: MIT
// Streaming per-coordinate mean and variance (Welford), and the full covariance, fixed size.
#pragma once

#include <cstdint>
#include <limits>

#include "sgmcmc/core/types.hpp"

namespace sgmcmc {

/// Running mean and variance of each coordinate of a stream of Vector<Scalar, D>, by Welford's
/// update (Welford 1962): one pass, O(D) per push, no cancellation of large sums.
template <class Scalar, int D>
class Welford {
 public:
  static_assert(D >= 1, "sgmcmc: Welford needs a fixed dimension D >= 1");
  using Vec = Vector<Scalar, D>;

  Welford() noexcept { reset(); }

  /// Forgets every sample.
  void reset() noexcept {
    count_ = 0;
    mean_.setZero();
    m2_.setZero();
  }

  /// Adds one sample.
  void push(const Vec& x) noexcept {
    ++count_;
    const Vec delta = x - mean_;
    mean_ += delta / Scalar(count_);
    m2_ += delta.cwiseProduct(x - mean_);
  }

  /// Adds every sample of `other` (Chan, Golub & LeVeque's pairwise combination).
  void merge(const Welford& other) noexcept {
    if (other.count_ == 0) return;
    if (count_ == 0) {
      *this = other;
      return;
    }
    const Scalar n_a = Scalar(count_);
    const Scalar n_b = Scalar(other.count_);
    const Scalar n = n_a + n_b;
    const Vec delta = other.mean_ - mean_;
    mean_ += delta * (n_b / n);
    m2_ += other.m2_ + delta.cwiseProduct(delta) * (n_a * n_b / n);
    count_ += other.count_;
  }

  /// Number of samples pushed.
  std::uint64_t count() const noexcept { return count_; }
  /// Sample mean (zero before the first sample).
  const Vec& mean() const noexcept { return mean_; }
  /// Sum of squared deviations from the mean, per coordinate.
  const Vec& sum_squares() const noexcept { return m2_; }
  /// Unbiased sample variance (n-1 denominator); NaN with fewer than 2 samples.
  Vec variance() const noexcept {
    if (count_ < 2) return Vec::Constant(std::numeric_limits<Scalar>::quiet_NaN());
    return m2_ / Scalar(count_ - 1);
  }
  /// Population variance (n denominator); NaN with no samples.
  Vec variance_population() const noexcept {
    if (count_ < 1) return Vec::Constant(std::numeric_limits<Scalar>::quiet_NaN());
    return m2_ / Scalar(count_);
  }

 private:
  std::uint64_t count_;
  Vec mean_;
  Vec m2_;
};

/// Running mean and full covariance matrix of a stream of Vector<Scalar, D>: Welford's update
/// with an outer product, O(D^2) per push and D*(D+1) scalars of storage.
template <class Scalar, int D>
class WelfordCovariance {
 public:
  static_assert(D >= 1, "sgmcmc: WelfordCovariance needs a fixed dimension D >= 1");
  using Vec = Vector<Scalar, D>;
  using Mat = Matrix<Scalar, D, D>;

  WelfordCovariance() noexcept { reset(); }

  /// Forgets every sample.
  void reset() noexcept {
    count_ = 0;
    mean_.setZero();
    c_.setZero();
  }

  /// Adds one sample.
  void push(const Vec& x) noexcept {
    ++count_;
    const Vec delta = x - mean_;
    mean_ += delta / Scalar(count_);
    c_.noalias() += delta * (x - mean_).transpose();
  }

  /// Number of samples pushed.
  std::uint64_t count() const noexcept { return count_; }
  /// Sample mean.
  const Vec& mean() const noexcept { return mean_; }
  /// Unbiased sample covariance (n-1 denominator), symmetrised; NaN with fewer than 2 samples.
  Mat covariance() const noexcept {
    if (count_ < 2) return Mat::Constant(std::numeric_limits<Scalar>::quiet_NaN());
    const Mat c = c_ / Scalar(count_ - 1);
    return (c + c.transpose()) * Scalar(0.5);
  }

 private:
  std::uint64_t count_;
  Vec mean_;
  Mat c_;
};

}  // namespace sgmcmc
