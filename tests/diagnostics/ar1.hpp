// SPDX-License-Identifier: MIT
// Test helper: D independent stationary AR(1) chains x_t = phi x_{t-1} + sqrt(1 - phi^2) e_t.
#pragma once

#include <cmath>

#include "local_rng.hpp"
#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/core/types.hpp"

namespace sgmcmc_test {

/// Stationary N(0, 1) AR(1) in D independent coordinates; the true ESS of n draws is
/// n (1 - phi) / (1 + phi) (integrated autocorrelation time (1 + phi) / (1 - phi)).
template <int D>
struct AR1 {
  using Vec = sgmcmc::Vector<double, D>;
  double phi;
  Vec x;
  AR1(double phi_, LocalRng& rng) : phi(phi_) { sgmcmc::fill_normal(rng, x); }
  const Vec& next(LocalRng& rng) {
    Vec e;
    sgmcmc::fill_normal(rng, e);
    x = phi * x + std::sqrt(1 - phi * phi) * e;
    return x;
  }
  static double true_ess(double phi, double n) { return n * (1 - phi) / (1 + phi); }
};

}  // namespace sgmcmc_test
