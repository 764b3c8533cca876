// mean_with_error (diagnostics/mcse.hpp): on chains with a known autocorrelation time the
// standard error is √(var τ / n), and it refuses too short or constant chains.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/diagnostics/mcse.hpp"
#include "sgmcmc/host/rng.hpp"

// AR(1) x_t = ρ x_{t−1} + √(1 − ρ²) ζ_t has unit variance and τ = (1 + ρ)/(1 − ρ). With n = 4·10⁵
// the Geyer ESS has a relative error of a few per cent, so the standard error
// is checked to 10%; ρ = 0 is the i.i.d. case, and the naive σ/√n is far off for ρ = 0.9.
TEST_CASE("mean_with_error matches sqrt(tau var / n) on AR(1) chains") {
  const std::size_t n = 400000;
  std::vector<double> x(n);
  for (double rho : {0.0, 0.5, 0.9}) {
    sgmcmc::host::Rng rng(21);
    std::vector<double> z(n);
    sgmcmc::fill_normal(rng, z.data(), static_cast<sgmcmc::Index>(n));
    double prev = z[0];
    for (std::size_t t = 0; t < n; ++t) {
      prev = t == 0 ? z[0] : rho * prev + std::sqrt(1 - rho * rho) * z[t];
      x[t] = prev;
    }
    const auto m = sgmcmc::mean_with_error(x.data(), n);
    const double tau = (1 + rho) / (1 - rho);
    const double expected = std::sqrt(tau / n);
    CAPTURE(rho);
    CHECK(std::fabs(m.se / expected - 1) < 0.1);
    CHECK(std::fabs(m.mean) < 4 * expected);
    CHECK(std::fabs(m.ess / (n / tau) - 1) < 0.2);
    if (rho == 0.9) CHECK(m.se > 3 / std::sqrt(double(n)));  // the naive σ/√n is 4.4× too small
  }
  // Every other draw (stride 2) of the ρ = 0.9 chain: τ = (1 + ρ²)/(1 − ρ²) over n/2 draws.
  const auto half = sgmcmc::mean_with_error(x.data(), n / 2, 2);
  const double tau2 = (1 + 0.81) / (1 - 0.81);
  CHECK(std::fabs(half.se / std::sqrt(tau2 / (n / 2)) - 1) < 0.1);
}

TEST_CASE("mean_with_error: too short or constant chains give NaN") {
  const double c[5] = {1, 1, 1, 1, 1};
  CHECK(std::isnan(sgmcmc::mean_with_error(c, 5).se));
  CHECK(sgmcmc::mean_with_error(c, 5).mean == 1);
  const double s[3] = {1, 2, 3};
  CHECK(std::isnan(sgmcmc::mean_with_error(s, 3).ess));
}
