// SPDX-License-Identifier: MIT
// Statistical helpers for the test suites (test code: std::vector allowed, everything in double):
// streaming moments, IACT/ESS of a stored chain, histogram KL, KS statistic, Gaussian tails.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include <Eigen/Core>

namespace sgmcmc::test {

// ---------------------------------------------------------------------------------------------
// Streaming moments (Welford), accumulated in double whatever the chain's scalar.

/// Mean and variance of a stream of numbers (Welford's update; numerically stable).
class RunningMoments {
 public:
  /// Adds one observation.
  void add(double x) noexcept {
    ++n_;
    const double d = x - mean_;
    mean_ += d / static_cast<double>(n_);
    m2_ += d * (x - mean_);
  }
  std::int64_t count() const noexcept { return n_; }
  double mean() const noexcept { return mean_; }
  /// Unbiased sample variance (n - 1 in the denominator).
  double variance() const noexcept { return n_ > 1 ? m2_ / static_cast<double>(n_ - 1) : 0.0; }

 private:
  std::int64_t n_ = 0;
  double mean_ = 0.0;
  double m2_ = 0.0;
};

/// Mean vector and covariance matrix of a stream of N-vectors (multivariate Welford).
template <int N>
class RunningCovariance {
 public:
  using Vec = Eigen::Matrix<double, N, 1>;
  using Mat = Eigen::Matrix<double, N, N>;

  RunningCovariance() noexcept {
    mean_.setZero();
    m2_.setZero();
  }
  /// Adds one observation (any scalar type; converted to double).
  template <class V>
  void add(const V& x_in) noexcept {
    const Vec x = x_in.template cast<double>();
    ++n_;
    const Vec d = x - mean_;
    mean_ += d / static_cast<double>(n_);
    m2_.noalias() += d * (x - mean_).transpose();
  }
  std::int64_t count() const noexcept { return n_; }
  const Vec& mean() const noexcept { return mean_; }
  /// Unbiased sample covariance.
  Mat covariance() const noexcept {
    return n_ > 1 ? Mat(m2_ / static_cast<double>(n_ - 1)) : Mat(Mat::Zero());
  }

 private:
  std::int64_t n_ = 0;
  Vec mean_;
  Mat m2_;
};

// ---------------------------------------------------------------------------------------------
// Integrated autocorrelation time of a stored chain.

/// Mean of a stored series.
inline double mean_of(const std::vector<double>& x) noexcept {
  double s = 0.0;
  for (double v : x) s += v;
  return x.empty() ? 0.0 : s / static_cast<double>(x.size());
}

/// Biased (1/n) sample variance of a stored series.
inline double variance_of(const std::vector<double>& x) noexcept {
  const double m = mean_of(x);
  double s = 0.0;
  for (double v : x) s += (v - m) * (v - m);
  return x.empty() ? 0.0 : s / static_cast<double>(x.size());
}

/// Result of an integrated-autocorrelation-time estimate.
struct IactEstimate {
  double tau = 1.0;        ///< τ = 1 + 2 Σ_{k≥1} ρ_k, so ESS = n / τ
  std::size_t lags = 0;    ///< lags actually summed
  bool converged = false;  ///< false: the sequence was cut at max_lag (τ under-estimated)
};

/// τ by Geyer's (1992) initial monotone sequence estimator: Γ_m = γ(2m) + γ(2m+1) is summed
/// while positive and clipped to be non-increasing; τ = (2 Σ_m Γ_m − γ(0)) / γ(0) with the
/// standard biased autocovariances γ(k) = (1/n) Σ_t (x_t − x̄)(x_{t+k} − x̄). The lag sums are
/// computed directly, O(n) per lag pair, and only the lags the sequence needs (≈ 2–3 τ).
inline IactEstimate iact_geyer(const std::vector<double>& x, std::size_t max_lag = 100000) {
  IactEstimate out;
  const std::size_t n = x.size();
  if (n < 4) return out;
  const double m = mean_of(x);
  std::vector<double> c(n + 1, 0.0);  // c[n] = 0 pads the last product of an odd lag
  for (std::size_t i = 0; i < n; ++i) c[i] = x[i] - m;
  // (γ(k), γ(k + 1)) in one pass, with four partial sums per lag so that the loop has no
  // serial dependency (it vectorises); the order of the additions is the only difference from
  // two plain loops.
  auto gamma_pair = [&](std::size_t k, double& ga, double& gb) {
    double a[4] = {0, 0, 0, 0}, b[4] = {0, 0, 0, 0};
    const std::size_t len = n - k;  // terms of γ(k); γ(k + 1) has len − 1, and c[n] = 0
    const double* p = c.data();
    const double* q = c.data() + k;
    std::size_t t = 0;
    for (; t + 4 <= len; t += 4) {
      for (int j = 0; j < 4; ++j) {
        a[j] += p[t + j] * q[t + j];
        b[j] += p[t + j] * q[t + j + 1];
      }
    }
    for (; t < len; ++t) {
      a[0] += p[t] * q[t];
      b[0] += p[t] * q[t + 1];
    }
    ga = ((a[0] + a[1]) + (a[2] + a[3])) / static_cast<double>(n);
    gb = ((b[0] + b[1]) + (b[2] + b[3])) / static_cast<double>(n);
  };
  double g0 = 0.0, g1 = 0.0;
  gamma_pair(0, g0, g1);
  if (!(g0 > 0.0)) return out;
  double sum = 0.0;
  double prev = std::numeric_limits<double>::infinity();
  std::size_t k = 0;
  for (; 2 * k + 1 < n && 2 * k + 1 <= max_lag; ++k) {
    double even = g0, odd = g1;
    if (k > 0) gamma_pair(2 * k, even, odd);
    double pair = even + odd;
    if (!(pair > 0.0)) {
      out.converged = true;
      break;
    }
    pair = std::min(pair, prev);
    prev = pair;
    sum += pair;
  }
  out.lags = 2 * k + 1;
  out.tau = std::max((2.0 * sum - g0) / g0, 1.0 / std::log10(static_cast<double>(n)));
  return out;
}

/// τ by non-overlapping batch means: with b batches of length L = n / b,
/// τ ≈ L · Var(batch means) / Var(x). Consistent when L ≫ τ; relative error ≈ sqrt(2 / (b − 1)).
inline double iact_batch_means(const std::vector<double>& x, std::size_t batches = 100) {
  const std::size_t len = x.size() / batches;
  if (len < 1 || batches < 2) return 1.0;
  std::vector<double> means(batches);
  for (std::size_t b = 0; b < batches; ++b) {
    double s = 0.0;
    for (std::size_t t = 0; t < len; ++t) s += x[b * len + t];
    means[b] = s / static_cast<double>(len);
  }
  const double vx = variance_of(x);
  const double vm = variance_of(means) * static_cast<double>(batches) /
                    static_cast<double>(batches - 1);  // unbiased between-batch variance
  return vx > 0.0 ? static_cast<double>(len) * vm / vx : 1.0;
}

/// A Monte-Carlo estimate of E f from a stored series f(x_t), with its standard error.
struct McEstimate {
  double mean = 0.0;      ///< sample mean of the series
  double variance = 0.0;  ///< sample variance of the series (the marginal variance of f)
  double tau = 1.0;       ///< estimated integrated autocorrelation time (Geyer)
  double ess = 0.0;       ///< n / τ
  double se = 0.0;        ///< sqrt(variance · τ / n): the MC standard error of mean
  bool converged = false;
};

/// Mean, IACT (Geyer initial monotone sequence) and MC standard error of a stored series.
inline McEstimate mc_estimate(const std::vector<double>& f, std::size_t max_lag = 100000) {
  McEstimate e;
  e.mean = mean_of(f);
  e.variance = variance_of(f);
  const IactEstimate t = iact_geyer(f, max_lag);
  e.tau = t.tau;
  e.converged = t.converged;
  e.ess = static_cast<double>(f.size()) / e.tau;
  e.se = std::sqrt(e.variance * e.tau / static_cast<double>(f.size()));
  return e;
}

/// (x_t − centre)(y_t − centre_y) for two stored series: the series whose mean is a covariance.
inline std::vector<double> centred_product(const std::vector<double>& x, double cx,
                                           const std::vector<double>& y, double cy) {
  std::vector<double> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = (x[i] - cx) * (y[i] - cy);
  return out;
}

/// Every k-th element of a series, starting at element k − 1.
inline std::vector<double> thin(const std::vector<double>& x, std::size_t k) {
  std::vector<double> out;
  out.reserve(x.size() / k + 1);
  for (std::size_t i = k - 1; i < x.size(); i += k) out.push_back(x[i]);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Gaussian tails.

/// P(Z > z) for Z ~ N(0, 1).
inline double normal_upper_tail(double z) noexcept {
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

/// Φ(z) = P(Z ≤ z).
inline double normal_cdf(double z) noexcept {
  return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

/// Φ^{-1}(p) for p in (0, 1): Acklam's rational approximation (relative error < 1.2e-9) polished
/// by one Halley step on erfc, which brings it to double rounding.
inline double normal_quantile(double p) noexcept {
  if (!(p > 0.0)) return -std::numeric_limits<double>::infinity();
  if (!(p < 1.0)) return std::numeric_limits<double>::infinity();
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                 -2.759285104469687e+02, 1.383577518672690e+02,
                                 -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                 -1.556989798598866e+02, 6.680131188771972e+01,
                                 -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                 -2.400758277161838e+00, -2.549732539343734e+00,
                                 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                 2.445134137142996e+00, 3.754408661907416e+00};
  const double plow = 0.02425;
  double x;
  if (p < plow) {
    const double q = std::sqrt(-2.0 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  } else if (p <= 1.0 - plow) {
    const double q = p - 0.5;
    const double r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
  } else {
    const double q = std::sqrt(-2.0 * std::log(1.0 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  }
  const double e = normal_cdf(x) - p;
  const double u = e * std::sqrt(2.0 * 3.14159265358979323846) * std::exp(x * x / 2.0);
  return x - u / (1.0 + x * u / 2.0);
}

/// The z such that m two-sided checks at |Z| ≤ z all pass with probability ≥ 1 − alpha under
/// the null (Bonferroni): z = Φ^{-1}(1 − alpha / (2m)).
inline double bonferroni_z(double alpha, int m) noexcept {
  return normal_quantile(1.0 - alpha / (2.0 * static_cast<double>(m)));
}

// ---------------------------------------------------------------------------------------------
// Histograms, KL and KS.

/// Fixed-bin histogram on [lo, hi); values outside are counted separately.
class Histogram {
 public:
  Histogram(double lo, double hi, int bins) : lo_(lo), hi_(hi), counts_(bins, 0) {}
  /// Adds one value.
  void add(double x) noexcept {
    ++total_;
    if (!(x >= lo_) || !(x < hi_)) {
      ++outside_;
      return;
    }
    auto i = static_cast<std::size_t>((x - lo_) / (hi_ - lo_) * static_cast<double>(bins()));
    if (i >= counts_.size()) i = counts_.size() - 1;
    ++counts_[i];
  }
  int bins() const noexcept { return static_cast<int>(counts_.size()); }
  double lo() const noexcept { return lo_; }
  double hi() const noexcept { return hi_; }
  std::int64_t total() const noexcept { return total_; }
  std::int64_t outside() const noexcept { return outside_; }
  const std::vector<std::int64_t>& counts() const noexcept { return counts_; }

 private:
  double lo_;
  double hi_;
  std::vector<std::int64_t> counts_;
  std::int64_t total_ = 0;
  std::int64_t outside_ = 0;
};

/// KL(p ‖ q̂) = Σ_i p_i log(p_i / q̂_i) over the bins, with q̂_i = max(count_i, floor_count) /
/// total: the floor (default half a count) keeps empty bins finite. p are the true bin masses
/// (from quadrature). Mass outside the histogram's range is ignored on both sides; the targets
/// used here put < 1e-20 of their mass there.
inline double kl_true_to_sample(const std::vector<double>& p, const Histogram& h,
                                double floor_count = 0.5) {
  const double n = static_cast<double>(h.total());
  double kl = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i] <= 0.0) continue;
    const double q = std::max(static_cast<double>(h.counts()[i]), floor_count) / n;
    kl += p[i] * std::log(p[i] / q);
  }
  return kl;
}

/// The Monte-Carlo floor of the KL protocol (MATH.md §5.3): KL(p ‖ q̂) of `reps` independent sets
/// of n exact i.i.d. draws (draw() returns one), binned like `like`.
struct KlFloor {
  double mean = 0.0;  ///< average KL over the replicates
  double sd = 0.0;    ///< their standard deviation
  double max = 0.0;   ///< the largest replicate
};
template <class Draw>
KlFloor kl_iid_floor(const std::vector<double>& p, const Histogram& like, std::int64_t n, int reps,
                     Draw&& draw) {
  RunningMoments m;
  KlFloor out;
  for (int r = 0; r < reps; ++r) {
    Histogram h(like.lo(), like.hi(), like.bins());
    for (std::int64_t i = 0; i < n; ++i) h.add(draw());
    const double kl = kl_true_to_sample(p, h);
    m.add(kl);
    out.max = std::max(out.max, kl);
  }
  out.mean = m.mean();
  out.sd = std::sqrt(m.variance());
  return out;
}

/// Kolmogorov–Smirnov statistic sup_x |F_n(x) − F(x)| of a sample against a continuous CDF F.
template <class Cdf>
double ks_statistic(std::vector<double> sample, const Cdf& cdf) {
  std::sort(sample.begin(), sample.end());
  const double n = static_cast<double>(sample.size());
  double d = 0.0;
  for (std::size_t i = 0; i < sample.size(); ++i) {
    const double f = cdf(sample[i]);
    d = std::max(d, std::max(static_cast<double>(i + 1) / n - f, f - static_cast<double>(i) / n));
  }
  return d;
}

/// Asymptotic critical value of the KS statistic for n independent draws at level alpha:
/// P(sqrt(n) D > c) ≈ 2 exp(−2 c²), so c = sqrt(−ln(alpha / 2) / 2) / sqrt(n).
inline double ks_critical(double n, double alpha) noexcept {
  return std::sqrt(-std::log(alpha / 2.0) / 2.0) / std::sqrt(n);
}

}  // namespace sgmcmc::test
