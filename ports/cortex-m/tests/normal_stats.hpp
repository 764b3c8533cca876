// SPDX-License-Identifier: MIT
// Goodness-of-fit statistics for standard-normal draws, shared by the on-target test
// (tests/normal.cpp) and the host test (tests/host/test_rng.cpp): moments, a chi-square test on
// 34 bins, tail counts, and the Box-Muller pair reference of the documented bit layout.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace sgmcmc::test {

/// Accumulates N(0, 1) draws (in double). Bins: (-inf, -4), 32 bins of width 1/4 over [-4, 4),
/// [4, inf); every expected count is >= 31 at 10^6 draws.
struct NormalStats {
  static constexpr int kBins = 34;
  /// 0.999 quantile of chi-square with kBins - 1 = 33 degrees of freedom (mpmath): a correct
  /// generator fails with probability 10^-3 (fixed seeds make each run deterministic).
  static constexpr double kChiSquare999 = 63.870098522345;
  /// P(|z| > 4) under N(0, 1).
  static constexpr double kTail4 = 6.334248366623993e-05;

  double count[kBins] = {};
  double n = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, tail4 = 0, max_abs = 0;

  void add(double z) noexcept {
    const double z2 = z * z;
    n += 1;
    s1 += z;
    s2 += z2;
    s3 += z2 * z;
    s4 += z2 * z2;
    const double a = std::fabs(z);
    if (a > 4.0) tail4 += 1;
    if (a > max_abs || a != a) max_abs = a;  // a NaN sticks
    int bin = z < -4.0 ? 0 : (z >= 4.0 ? kBins - 1 : 1 + static_cast<int>((z + 4.0) * 4.0));
    if (bin > kBins - 2 && z < 4.0) bin = kBins - 2;  // rounding at the top edge
    count[bin] += 1;
  }

  /// Standard normal CDF.
  static double cdf(double x) noexcept { return 0.5 * std::erfc(-x * 0.70710678118654752440); }

  /// Probability of bin i under N(0, 1).
  static double bin_probability(int i) noexcept {
    const double lo = i == 0 ? 0.0 : cdf(-4.0 + 0.25 * (i - 1));
    const double hi = i == kBins - 1 ? 1.0 : cdf(-4.0 + 0.25 * i);
    return hi - lo;
  }

  /// Pearson's statistic sum (O - E)^2 / E over the bins.
  double chi_square() const noexcept {
    double x2 = 0;
    for (int i = 0; i < kBins; ++i) {
      const double e = n * bin_probability(i);
      x2 += (count[i] - e) * (count[i] - e) / e;
    }
    return x2;
  }

  /// Largest of the moment and tail deviations, in standard errors of each estimator under
  /// N(0, 1): mean sqrt(1/n), E z^2 sqrt(2/n), E z^3 sqrt(15/n), E z^4 sqrt(96/n),
  /// P(|z| > 4) sqrt(p (1 - p) / n).
  double worst_standard_error() const noexcept {
    const double d[5] = {
        std::fabs(s1 / n) / std::sqrt(1.0 / n), std::fabs(s2 / n - 1.0) / std::sqrt(2.0 / n),
        std::fabs(s3 / n) / std::sqrt(15.0 / n), std::fabs(s4 / n - 3.0) / std::sqrt(96.0 / n),
        std::fabs(tail4 / n - kTail4) / std::sqrt(kTail4 * (1 - kTail4) / n)};
    double w = 0;
    for (const double v : d) w = (v > w || v != v) ? v : w;
    return w;
  }
};

/// The float pair of sgmcmc::detail::normal_pair recomputed in double from its documented layout:
/// u = ((lo >> 1) + 1) 2^-31, r = sqrt(-2 ln u), theta = q pi/2 + (f - 1.5) pi/2 with q = hi >> 30
/// and f - 1 = ((hi >> 7) & 0x7fffff) 2^-23.
inline void reference_pair(std::uint32_t lo, std::uint32_t hi, double& z0, double& z1) noexcept {
  const double half_pi = 1.57079632679489661923;
  const double u = std::ldexp(static_cast<double>((lo >> 1) + 1u), -31);
  const double r = std::sqrt(-2.0 * std::log(u));
  const double a = (std::ldexp(static_cast<double>((hi >> 7) & 0x7fffffu), -23) - 0.5) * half_pi;
  const double theta = static_cast<double>(hi >> 30) * half_pi + a;
  z0 = r * std::cos(theta);
  z1 = r * std::sin(theta);
}

/// FNV-1a over the bit patterns of the first 10^5 float normals of Rng(1) in fills of 1000. The
/// Cortex-M4F firmware (-O2 and -Os, GCC 12 contracting a * b + c into VFMA) and an x86-64 host
/// build with FMA contraction (-march=native on an FMA machine) both give kFillHashFma; a host
/// build without FMA rounds a few products differently and gives another value.
inline constexpr std::uint64_t kFillHashFma = 6032288034582607910ull;
template <class Rng>
std::uint64_t fill_hash() noexcept {
  Rng rng(1);
  float z[1000];
  std::uint64_t h = 1469598103934665603ull;
  for (int k = 0; k < 100; ++k) {
    rng.fill_normal(z, 1000);
    for (const float v : z) {
      std::uint32_t b;
      std::memcpy(&b, &v, sizeof b);
      h = (h ^ b) * 1099511628211ull;
    }
  }
  return h;
}

/// Largest |z - ref| / (1 + |ref|) over `pairs` float pairs of rng.fill_normal against
/// reference_pair on the words of `words`, a generator in the same state as rng.
template <class Rng>
double max_pair_error(Rng& rng, Rng& words, int pairs) noexcept {
  double worst = 0;
  float z[2];
  for (int i = 0; i < pairs; ++i) {
    rng.fill_normal(z, 2);
    const std::uint64_t w = words();
    double r[2];
    reference_pair(static_cast<std::uint32_t>(w), static_cast<std::uint32_t>(w >> 32), r[0], r[1]);
    for (int k = 0; k < 2; ++k) {
      const double e = std::fabs(z[k] - r[k]) / (1.0 + std::fabs(r[k]));
      worst = (e > worst || e != e) ? e : worst;
    }
  }
  return worst;
}

}  // namespace sgmcmc::test
