// SPDX-License-Identifier: MIT
// Shared machinery of the stationarity suites: chain runners, Monte-Carlo estimates with their
// standard errors, and checks that return bool so a negative control can be CHECK_FALSE'd.
#pragma once

#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "stats.hpp"
#include "targets.hpp"

namespace sgmcmc::test {

/// Every moment check is |estimate − target| ≤ kZ · SE (+ a stated discretisation allowance).
/// kZ = 4.5 ≥ bonferroni_z(0.002, 200) = 4.42: if all ~200 moment checks of the stationarity
/// suites were exact null tests with the stated SE, all would pass together with probability
/// ≥ 0.998 for any seed (asserted in support_test.cpp). The seeds are fixed, so the outcome is
/// deterministic; the rule only says how unlucky a seed would have to be to trip a correct sampler.
inline constexpr double kZ = 4.5;

/// KL checks pass when KL ≤ τ̂ (m + kKlSd · s), m and s the mean and standard deviation of the
/// KL of n exact i.i.d. draws (the Monte-Carlo floor, MATH.md §5.3) and τ̂ the integrated
/// autocorrelation time of the recorded chain (its KL behaves like that of n / τ̂ i.i.d. draws).
/// 2n·KL is close to χ² with (bins − 1) degrees of freedom (≈ 40 occupied bins here), whose
/// mean + 5 sd has upper-tail probability ≈ 5e-5.
inline constexpr double kKlSd = 5.0;

/// A Monte-Carlo estimate of E f from a recorded series.
struct Estimate {
  double mean = 0.0;  ///< the sample mean of f
  double se = 0.0;    ///< sqrt(Var f · τ / n)
  double tau = 1.0;   ///< the integrated autocorrelation time used (exact, or Geyer's estimate)
  double tau_geyer = 1.0;  ///< Geyer's estimate, always computed (logged next to an exact τ)
};

/// E f with its standard error. tau_exact > 0: use that τ (linear chains, where it is known
/// exactly from targets.hpp's LinearChain); otherwise Geyer's initial monotone sequence estimate.
inline Estimate estimate(const std::vector<double>& f, double tau_exact = 0.0) {
  const McEstimate m = mc_estimate(f);
  Estimate e;
  e.mean = m.mean;
  e.tau_geyer = m.tau;
  e.tau = tau_exact > 0.0 ? tau_exact : m.tau;
  e.se = std::sqrt(m.variance * e.tau / static_cast<double>(f.size()));
  return e;
}

/// Logs one printf-style line through doctest (shown with -s, and with a failing assertion).
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
inline void
log_line(const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  MESSAGE(doctest::String(buf));
}

/// The check itself: logs one line (estimate, target, tolerance, |error| / tolerance) and
/// returns |estimate − target| ≤ tol.
inline bool within(const std::string& what, double estimate, double target, double tol) {
  const bool ok = std::abs(estimate - target) <= tol;
  log_line("%s: %.6g vs %.6g, tol %.3g, |err|/tol = %.3f%s", what.c_str(), estimate, target, tol,
           std::abs(estimate - target) / tol, ok ? "" : "  (OUTSIDE)");
  return ok;
}

/// The KL check of MATH.md §5.3: logs and returns kl ≤ threshold.
inline bool kl_within(const std::string& what, double kl, double threshold, double floor_mean) {
  const bool ok = kl <= threshold;
  log_line("%s: KL %.3g = %.2f x i.i.d. floor, threshold %.3g, KL/threshold = %.3f%s", what.c_str(),
           kl, kl / floor_mean, threshold, kl / threshold, ok ? "" : "  (ABOVE)");
  return ok;
}

/// Runs `steps` steps, calling record(z) after every `thin`-th. False if any step fails (the
/// chain then stops where it was).
template <class Sampler, class State, class Model, class Rng, class Record>
bool run_chain(const Sampler& sampler, State& z, const Model& model, Rng& rng, std::int64_t steps,
               std::int64_t thin, Record&& record) {
  for (std::int64_t i = 1; i <= steps; ++i) {
    if (!sampler.step(z, model, rng)) return false;
    if (i % thin == 0) record(z);
  }
  return true;
}

/// Runs `steps` steps and records nothing (burn-in).
template <class Sampler, class State, class Model, class Rng>
bool burn_in(const Sampler& sampler, State& z, const Model& model, Rng& rng, std::int64_t steps) {
  return run_chain(sampler, z, model, rng, steps, steps + 1, [](const State&) {});
}

/// f(x_t) for every t.
template <class F>
std::vector<double> map_series(const std::vector<double>& x, F&& f) {
  std::vector<double> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = f(x[i]);
  return out;
}

/// τ̂ used by the KL checks: the largest Geyer estimate over sign θ (the slow barrier-crossing
/// mode of a double well), θ and θ², at least 1.
inline double kl_tau(const std::vector<double>& theta) {
  double tau = 1.0;
  tau =
      std::max(tau, iact_geyer(map_series(theta, [](double x) { return x > 0 ? 1.0 : -1.0; })).tau);
  tau = std::max(tau, iact_geyer(theta).tau);
  tau = std::max(tau, iact_geyer(map_series(theta, [](double x) { return x * x; })).tau);
  return tau;
}

/// KL(true ‖ histogram of theta) on `like`'s bins.
inline double kl_of(const std::vector<double>& p, const std::vector<double>& theta,
                    const Histogram& like) {
  Histogram h(like.lo(), like.hi(), like.bins());
  for (double x : theta) h.add(x);
  return kl_true_to_sample(p, h);
}

/// SGNHT's Γ of the column r/d written out per coordinate (a Lane x, core/structure.hpp):
/// rows(x) = ∂(r_i/d)/∂ξ = 0 and cols(x) = Sign · ∂(r_i/d)/∂r_i = Sign/d, which the engine sums
/// over i and subtracts. Sign = +1 is SGNHT's own Γ_ξ = −1; Sign = −1 flips it to the recipe
/// paper's Eq. (6) sign (MATH.md §1.4 row 1). For SGNHT<..>::make_recipe<G>.
template <class S, int D, int Sign>
struct SgnhtHandGamma {
  template <class X>
  S rows(const X&) const noexcept {
    return S(0);
  }
  template <class X>
  S cols(const X&) const noexcept {
    return S(Sign) / S(D);
  }
};

/// SGNHT's Γ (SgnhtHandGamma's columns) with rows() = 1/2, declared zero_rows or not: the fused
/// pass must leave out rows declared zero, and add them otherwise.
template <class S, int D, bool DeclaredZero>
struct SgnhtRowsGamma : SgnhtHandGamma<S, D, 1> {
  static constexpr bool zero_rows = DeclaredZero;
  template <class X>
  S rows(const X&) const noexcept {
    return S(0.5);
  }
};

}  // namespace sgmcmc::test
