// SPDX-License-Identifier: MIT
// Helpers of the tests/mg suites: KS checks for autocorrelated chains (ESS-scaled), MC-tolerance
// checks written as functions returning the quantity compared, and RNG stream comparison.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/host/rng.hpp"
#include "stats.hpp"
#include "targets.hpp"

namespace sgmcmc::mgtest {

/// Kolmogorov critical value for √n_eff · D at level alpha: sqrt(−ln(alpha/2)/2)
/// (1.95 at alpha = 1e-3).
inline double kolmogorov_critical(double alpha) {
  return std::sqrt(-std::log(alpha / 2.0) / 2.0);
}

/// A KS comparison of a stored chain with a continuous CDF, scaled by the chain's ESS.
struct ChainKs {
  double d = 0.0;       ///< sup |F_n − F|
  double tau = 1.0;     ///< largest integrated autocorrelation time of the indicators 1{x ≤ q}
  double ess = 0.0;     ///< n / tau
  double scaled = 0.0;  ///< √ess · d: compared with kolmogorov_critical
};

/// KS of an autocorrelated chain x against cdf. For dependent draws √n (F_n − F)(q) has variance
/// τ(q) F(1 − F) with τ(q) the autocorrelation time of the indicator 1{x ≤ q}; using the largest
/// τ over the target's quartiles and deciles, √(n/τ) D is (approximately, conservatively for
/// the other q) Kolmogorov distributed. quantiles are the target's (from the truth).
/// Geyer's sums are cut at max_lag (default 2000 lags of the stored series): a longer τ is
/// under-estimated, which over-states the ESS and so only makes a passing check stricter.
inline ChainKs chain_ks(const std::vector<double>& x, const std::vector<double>& quantiles,
                        double (*cdf_fn)(double, const void*), const void* ctx,
                        std::size_t max_lag = 2000) {
  ChainKs out;
  out.d = test::ks_statistic(x, [&](double v) { return cdf_fn(v, ctx); });
  double tau = 1.0;
  std::vector<double> ind(x.size());
  for (double q : quantiles) {
    for (std::size_t i = 0; i < x.size(); ++i) ind[i] = x[i] <= q ? 1.0 : 0.0;
    tau = std::max(tau, test::iact_geyer(ind, max_lag).tau);
  }
  out.tau = tau;
  out.ess = static_cast<double>(x.size()) / tau;
  out.scaled = std::sqrt(out.ess) * out.d;
  return out;
}

/// chain_ks with any callable CDF.
template <class Cdf>
ChainKs chain_ks(const std::vector<double>& x, const std::vector<double>& quantiles,
                 const Cdf& cdf) {
  return chain_ks(
      x, quantiles, [](double v, const void* c) { return (*static_cast<const Cdf*>(c))(v); }, &cdf);
}

/// The target's deciles (and quartiles) from a grid density.
inline std::vector<double> check_quantiles(const test::GridDensity& g) {
  std::vector<double> q;
  for (double u : {0.1, 0.25, 0.5, 0.75, 0.9}) q.push_back(g.quantile(u));
  return q;
}

/// |estimate − truth| in units of the MC standard error of the estimate (Geyer ESS).
struct ZScore {
  double mean = 0.0;
  double se = 0.0;
  double ess = 0.0;
  double z = 0.0;
};
/// Geyer's sums are cut at max_lag, as in chain_ks (only stricter when it bites).
inline ZScore z_score(const std::vector<double>& f, double truth, std::size_t max_lag = 2000) {
  const test::McEstimate e = test::mc_estimate(f, max_lag);
  ZScore out;
  out.mean = e.mean;
  out.se = e.se;
  out.ess = e.ess;
  out.z = e.se > 0 ? std::fabs(e.mean - truth) / e.se : INFINITY;
  return out;
}

/// True iff two host RNGs are at the same point of all their streams (host::Rng draws words and
/// normals from disjoint sub-generators): compares the next word, double normal and float normal.
/// Advances both.
inline bool same_stream_position(host::Rng& a, host::Rng& b) {
  const bool words = a() == b();
  const bool doubles = normal<double>(a) == normal<double>(b);
  const bool floats = normal<float>(a) == normal<float>(b);
  return words && doubles && floats;
}

}  // namespace sgmcmc::mgtest
