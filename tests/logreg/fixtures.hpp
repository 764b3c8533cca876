// SPDX-License-Identifier: MIT
// Test fixtures for tests/logreg: a small synthetic logistic-regression data set (fixed seed) and
// the exact per-example gradients, full gradient and minibatch covariance at a given θ.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "local_rng.hpp"
#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/core/types.hpp"
#include "sgmcmc/models/logistic.hpp"

namespace sgmcmc_test {

/// N rows of D columns (column 0 the intercept, the others N(0, 1)), labels drawn from the
/// model with true coefficients beta_j = (-1)^j (j + 1) / D, all from LocalRng(seed).
template <int D>
struct SyntheticLR {
  std::size_t rows;
  std::vector<double> x;
  std::vector<int> y;

  SyntheticLR(std::size_t n, std::uint64_t seed) : rows(n), x(n * D), y(n) {
    LocalRng rng(seed);
    sgmcmc::Vector<double, D> row;
    sgmcmc::Vector<double, D> beta;
    for (int j = 0; j < D; ++j) beta[j] = (j % 2 == 0 ? 1.0 : -1.0) * double(j + 1) / D;
    for (std::size_t i = 0; i < n; ++i) {
      sgmcmc::fill_normal_portable(rng, row);
      row[0] = 1.0;
      for (int j = 0; j < D; ++j) x[i * D + std::size_t(j)] = row[j];
      const double p = sgmcmc::sigmoid(row.dot(beta));
      y[i] = sgmcmc::uniform_open01<double>(rng) < p ? 1 : 0;
    }
  }

  sgmcmc::LogisticRegression<double, D> model(double prior_sd = 10.0) const {
    return {x.data(), y.data(), rows, prior_sd};
  }
};

/// Per-example gradients a_i = (σ(x_iᵀθ) − y_i) x_i at θ, and the exact moments of the
/// minibatch gradient for batches of n rows without replacement (MATH.md §5.3(b)).
template <int D>
struct ExactMoments {
  sgmcmc::Vector<double, D> full;      ///< Σ a_i + θ/s²: the mean of every minibatch gradient
  sgmcmc::Vector<double, D> variance;  ///< diag Cov = N(N − n)/n · S², S² with N − 1 denominator
};

template <int D>
ExactMoments<D> exact_moments(const SyntheticLR<D>& data, const sgmcmc::Vector<double, D>& theta,
                              std::size_t n, double prior_sd = 10.0) {
  const auto m = data.model(prior_sd);
  const std::size_t big_n = data.rows;
  std::vector<sgmcmc::Vector<double, D>> a(big_n);
  sgmcmc::Vector<double, D> sum = sgmcmc::Vector<double, D>::Zero();
  for (std::size_t i = 0; i < big_n; ++i) {
    a[i].setZero();
    m.add_gradient(static_cast<std::uint32_t>(i), theta, a[i]);
    sum += a[i];
  }
  const sgmcmc::Vector<double, D> mean = sum / double(big_n);
  sgmcmc::Vector<double, D> s2 = sgmcmc::Vector<double, D>::Zero();
  for (const auto& ai : a) s2 += (ai - mean).cwiseAbs2();
  s2 /= double(big_n - 1);
  ExactMoments<D> out;
  out.full = sum + theta / (prior_sd * prior_sd);
  out.variance = double(big_n) * double(big_n - n) / double(n) * s2;
  return out;
}

}  // namespace sgmcmc_test
