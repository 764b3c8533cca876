// SPDX-License-Identifier: MIT
// Shared checks of the on-target sampler suites (samplers*.cpp): determinism, bad input that
// must leave the state byte-identical, chains feeding batch means, and the exact stationary
// covariance of kick-drift SGHMC on a Gaussian coordinate.
#pragma once

#include <cmath>

#include <Eigen/Core>

#include "models.hpp"
#include "sgmcmc/core/status.hpp"
#include "sgmcmc/cortex_m/check.hpp"
#include "sgmcmc/cortex_m/console.hpp"
#include "sgmcmc/cortex_m/rng.hpp"
#include "sgmcmc/cortex_m/stack.hpp"
#include "stationarity.hpp"

namespace fw {

using sgmcmc::StatusCode;
using sgmcmc::cortex_m::Line;
using sgmcmc::cortex_m::Rng;

constexpr float kVar0 = Gaussian::kVar[0];
constexpr float kVar1 = Gaussian::kVar[1];

template <class S>
using StateOf = typename S::StateType;

/// A start away from the mode, so that every term of a step is non-trivial.
inline Vec start_position() {
  return Vec(0.7f, -1.3f);
}

/// Zero heap is not checked here: it is a property of the link (see the heap_control tests).
/// Same seed, same chain (bit for bit, every step); a different seed, a different chain.
template <class S, class Model = Gaussian>
void check_deterministic(const S& s, const StateOf<S>& z0, bool stochastic,
                         const Model& model = Model()) {
  Rng a(11), b(11), c(12);
  StateOf<S> za = z0, zb = z0, zc = z0;
  bool ok = true, same = true;
  for (int i = 0; i < 300; ++i) {
    ok = static_cast<bool>(s.step(za, model, a)) && ok;
    ok = static_cast<bool>(s.step(zb, model, b)) && ok;
    ok = static_cast<bool>(s.step(zc, model, c)) && ok;
    same = same && za == zb;
  }
  SGMCMC_CHECK(ok);
  SGMCMC_CHECK(same);
  if (stochastic) {
    SGMCMC_CHECK(za != zc);
  } else {
    SGMCMC_CHECK(za == zc);  // no noise: the seed must not matter
  }
}

/// A step that must fail with `expected` (or `alternative`) and leave the state bit-for-bit
/// unchanged: z and its bookkeeping (State's operator== is a memcmp of those; the other copy of z
/// and the scratch are the step's working memory, not part of the value).
template <class S, class Model>
void check_rejects(const char* what, const S& s, const Model& model, StateOf<S> z,
                   StatusCode expected, StatusCode alternative = StatusCode::Ok) {
  const StateOf<S> before = z;
  Rng rng(5);
  const sgmcmc::Status st = s.step(z, model, rng);
  Line() << "  bad input, " << what << ": " << st.message() << '\n';
  SGMCMC_CHECK(st == expected || (alternative != StatusCode::Ok && st == alternative));
  SGMCMC_CHECK(z == before);
}

/// A state whose position holds a NaN.
template <class S>
StateOf<S> nan_state(const S& s) {
  StateOf<S> z = s.start(start_position());
  z.position()[1] = std::nanf("");
  return z;
}

/// Stationary covariance of kick-drift SGHMC on one Gaussian coordinate with precision lam
/// (MATH.md §1.3): x = (θ, r), x' = A x + b ξ, Σ = A Σ Aᵀ + b bᵀ, solved by Smith doubling.
inline Eigen::Matrix2d sghmc_stationary(double h, double c, double m, double lam) {
  const double a = 1.0 - h * c / m;
  Eigen::Matrix2d A;
  A << 1.0 - h * h * lam / m, h / m * a, -h * lam, a;
  const Eigen::Vector2d b = std::sqrt(2.0 * c * h) * Eigen::Vector2d(h / m, 1.0);
  Eigen::Matrix2d sigma = b * b.transpose();
  Eigen::Matrix2d ak = A;
  for (int i = 0; i < 48; ++i) {
    sigma += ak * sigma * ak.transpose();
    ak = ak * ak;
  }
  return sigma;
}

/// Runs `steps_per_batch * 40` steps after `burn_in`, feeding Q quantities of each state to
/// batch means; returns false if a step failed.
template <int Q, class S, class Rng_, class Quantities, class Model = Gaussian>
bool run_chain(const S& s, StateOf<S>& z, Rng_& rng, long burn_in, BatchMeans<Q>& bm,
               Quantities quantities, const Model& model = Model()) {
  bool ok = true;
  for (long i = 0; i < burn_in; ++i) ok = static_cast<bool>(s.step(z, model, rng)) && ok;
  double x[Q];
  while (!bm.full()) {
    ok = static_cast<bool>(s.step(z, model, rng)) && ok;
    quantities(z, x);
    bm.add(x);
  }
  return ok;
}

/// Position moments: θ_0, θ_1, θ_0², θ_1².
template <class Z>
void position_moments(const Z& z, double (&x)[4]) {
  const double t0 = z.position()[0], t1 = z.position()[1];
  x[0] = t0;
  x[1] = t1;
  x[2] = t0 * t0;
  x[3] = t1 * t1;
}

/// Checks the four position moments against means 0 and variances v0, v1 (+ allowances).
inline bool position_ok(const BatchMeans<4>& bm, double v0, double v1, double bias0, double bias1) {
  bool ok = moment_ok("E theta_0  ", bm.mean(0), bm.standard_error(0), 0.0, 0.0);
  ok = moment_ok("E theta_1  ", bm.mean(1), bm.standard_error(1), 0.0, 0.0) && ok;
  ok = moment_ok("E theta_0^2", bm.mean(2), bm.standard_error(2), v0, bias0) && ok;
  ok = moment_ok("E theta_1^2", bm.mean(3), bm.standard_error(3), v1, bias1) && ok;
  return ok;
}

/// A suite firmware's main: banner, the suite, the stack high-water mark, and the harness's
/// verdict (non-zero if any check failed) as the exit status.
inline int run_suite(const char* name, void (&suite)()) {
  Line() << name << " on Cortex-M4F, float, d = " << kDim << '\n';
  suite();
  Line() << "stack high-water mark: "
         << static_cast<unsigned>(sgmcmc::cortex_m::stack::high_water()) << " bytes\n";
  return sgmcmc::cortex_m::check::finish();
}

}  // namespace fw
