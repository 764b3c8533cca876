// SPDX-License-Identifier: MIT
// The logistic-regression model (include/sgmcmc/models/logistic.hpp): stable softplus and sigmoid,
// gradient against finite differences of the potential, the per-example/full-data identities, and
// the minibatch gradient's unbiasedness (statistical, Monte Carlo tolerance, negative control).
#include <doctest/doctest.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "fixtures.hpp"
#include "local_rng.hpp"
#include "sgmcmc/data/minibatch.hpp"
#include "sgmcmc/models/logistic.hpp"

using sgmcmc::Vector;
using sgmcmc_test::LocalRng;
using sgmcmc_test::SyntheticLR;

TEST_CASE("softplus and sigmoid are exact where they can be and never overflow") {
  for (double x : {-800.0, -40.0, -1.0, 0.0, 1e-3, 2.5, 40.0, 800.0}) {
    const double sp = sgmcmc::softplus(x);
    const double sg = sgmcmc::sigmoid(x);
    CHECK(std::isfinite(sp));
    CHECK(std::isfinite(sg));
    CHECK(sg >= 0.0);
    CHECK(sg <= 1.0);
    // log(1 + e^x) - log(1 + e^-x) = x, and σ(x) + σ(-x) = 1.
    CHECK(sp - sgmcmc::softplus(-x) == doctest::Approx(x).epsilon(1e-12));
    CHECK(sg + sgmcmc::sigmoid(-x) == doctest::Approx(1.0).epsilon(1e-15));
    if (std::abs(x) < 30) {
      CHECK(sp == doctest::Approx(std::log1p(std::exp(x))).epsilon(1e-14));
      CHECK(sg == doctest::Approx(1.0 / (1.0 + std::exp(-x))).epsilon(1e-14));
    }
  }
  CHECK(sgmcmc::softplus(800.0) == 800.0);
  CHECK(sgmcmc::softplus(-800.0) == 0.0);
  CHECK(sgmcmc::softplus(800.0f) == 800.0f);
  CHECK(std::isfinite(sgmcmc::sigmoid(-800.0f)));
}

template <int D>
void check_batch_equals_rows() {
  const SyntheticLR<D> data(300, 8);
  const auto m = data.model();
  Vector<double, D> beta, ref;
  for (int j = 0; j < D; ++j) {
    beta[j] = 0.3 * std::sin(1.7 * j + 0.2) / std::sqrt(double(D));
    ref[j] = beta[j] + 0.05 * std::cos(0.9 * j);
  }
  std::vector<double> cache(data.rows);
  for (std::size_t i = 0; i < data.rows; ++i) cache[i] = m.reference_term(std::uint32_t(i), ref);
  std::vector<std::uint32_t> rows;
  for (std::uint32_t i = 0; i < 40; ++i) rows.push_back((i * 37u + 11u) % 300u);
  for (std::size_t n : {1, 15, 16, 17, 33, 40}) {
    Vector<double, D> one = Vector<double, D>::Constant(0.25), batch = one;
    for (std::size_t k = 0; k < n; ++k) m.add_cached_difference(rows[k], beta, cache[rows[k]], one);
    m.add_cached_differences(rows.data(), rows.data() + n, beta, cache.data(), batch);
    CHECK(batch == one);
    // The same through an expression for β and a strided map for acc.
    double strided[2 * D];
    for (int j = 0; j < D; ++j) strided[2 * j] = 0.25;
    Eigen::Map<Vector<double, D>, 0, Eigen::InnerStride<2>> acc(strided);
    m.add_cached_differences(rows.data(), rows.data() + n, beta * 1.0, cache.data(), acc);
    CHECK(acc == one);
  }
  // Each difference is (σ(x_iᵀβ) − σ(x_iᵀβ̂)) x_i to rounding (a long-double reference).
  for (std::uint32_t i : {0u, 7u, 299u}) {
    long double eta = 0, eta_ref = 0;
    for (int j = 0; j < D; ++j) {
      eta += (long double)data.x[i * D + std::size_t(j)] * beta[j];
      eta_ref += (long double)data.x[i * D + std::size_t(j)] * ref[j];
    }
    const long double w = 1 / (1 + std::exp(-eta)) - 1 / (1 + std::exp(-eta_ref));
    Vector<double, D> d = Vector<double, D>::Zero();
    m.add_cached_difference(i, beta, cache[i], d);
    for (int j = 0; j < D; ++j) {
      CHECK(double(d[j]) ==
            doctest::Approx(double(w * data.x[i * D + std::size_t(j)])).epsilon(1e-9).scale(1e-12));
    }
  }
}

#if defined(__GNUC__)
// The wide kernels of the control-variate path (Dim >= 32): every term counted once, whatever
// the split into vector pairs, one more vector and scalar tail (sizes chosen to reach each).
template <class S, int Dim>
void check_wide_kernels() {
  S x[Dim], b[Dim], a[Dim];
  long double dot = 0;
  for (int j = 0; j < Dim; ++j) {
    x[j] = S(std::sin(0.37 * j + 0.1));
    b[j] = S(std::cos(0.53 * j - 0.2));
    a[j] = S(0.5 * j);
    dot += (long double)x[j] * b[j];
  }
  const S eps = std::numeric_limits<S>::epsilon();
  CHECK(double(sgmcmc::detail::dot_wide<Dim>(x, b)) ==
        doctest::Approx(double(dot)).epsilon(double(8 * Dim * eps)).scale(1.0));
  sgmcmc::detail::axpy_wide<Dim>(a, x, S(-1.5));
  for (int j = 0; j < Dim; ++j) CHECK(a[j] == S(0.5 * j) + S(-1.5) * x[j]);
}

TEST_CASE("the wide dot product and axpy count every term once") {
  check_wide_kernels<double, 32>();
  check_wide_kernels<double, 33>();
  check_wide_kernels<double, 86>();
  check_wide_kernels<float, 40>();
  check_wide_kernels<float, 100>();
  check_wide_kernels<float, 47>();
}
#endif

TEST_CASE("the batch difference hook adds exactly what the per-row hook adds") {
  // LogisticRegression::add_cached_differences (chunks of 16 rows: dots, vectorised sigmoids,
  // axpys) against add_cached_difference row by row: bit-identical sums for batches across the
  // chunk boundaries, for D = 5, 15 and 86 (Eigen's dot products unroll differently). The
  // sigmoid's one-division form against the two-branch form it replaced: equal bit for bit over
  // 20001 arguments in [-50, 50] and at ±0.
  check_batch_equals_rows<5>();
  check_batch_equals_rows<15>();
  check_batch_equals_rows<86>();
  for (int k = -10000; k <= 10000; ++k) {
    const double x = 0.005 * k;
    const double e = sgmcmc::detail::exp_nonpositive(-std::abs(x));
    const double two_branch = x >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
    REQUIRE(sgmcmc::sigmoid(x) == two_branch);
  }
  CHECK(sgmcmc::sigmoid(0.0) == 0.5);
  CHECK(sgmcmc::sigmoid(-0.0) == 0.5);
}

// The batch hook's vectorised sigmoid (detail::sigmoid_lane on detail::exp_nonpositive_lane)
// must give the values of sigmoid() and exp_nonpositive() bit for bit, or the batch and per-row
// forms above would drift apart on some argument. Arguments: a fine grid over the whole domain
// (below the clamp too), the edges of each binade near 0, ±0, ±inf, NaN; the loop is the same
// shape as the hook's, so the test build vectorises it as the library's does.
TEST_CASE_TEMPLATE("the vectorisable sigmoid and exp equal the scalar ones bit for bit", S, float,
                   double) {
  using C = sgmcmc::detail::MathConstants<S>;
  std::vector<S> x;
  for (int k = 0; k <= 200000; ++k) x.push_back(S(-1.2) * C::exp_lo * (S(k) / S(100000) - S(1)));
  for (S v = std::numeric_limits<S>::denorm_min(); v < S(1e3); v *= S(3)) {
    x.push_back(v);
    x.push_back(-v);
  }
  const S inf = std::numeric_limits<S>::infinity();
  for (S v : {S(0), -S(0), inf, -inf, C::exp_lo, std::nextafter(C::exp_lo, -inf),
              std::nextafter(C::exp_lo, S(0)), std::numeric_limits<S>::quiet_NaN()}) {
    x.push_back(v);
  }
  std::vector<S> lane(x.size()), exp_lane(x.size());
  const S lowest = sgmcmc::detail::opaque(C::exp_lo);
  for (std::size_t k = 0; k < x.size(); ++k) lane[k] = sgmcmc::detail::sigmoid_lane(x[k], lowest);
  for (std::size_t k = 0; k < x.size(); ++k) {
    exp_lane[k] = sgmcmc::detail::exp_nonpositive_lane(-std::abs(x[k]), lowest);
  }
  std::size_t differ = 0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    const S want = sgmcmc::sigmoid(x[k]);
    const S want_exp = sgmcmc::detail::exp_nonpositive(-std::abs(x[k]));
    if (std::isnan(x[k])) {
      CHECK(std::isnan(lane[k]));
      CHECK(std::isnan(exp_lane[k]));
    } else {
      differ += lane[k] != want || exp_lane[k] != want_exp;
    }
  }
  CHECK(differ == 0);
  // Control: the same comparison sees a one-ulp change of one value.
  const std::size_t at = 100000 + 123;
  CHECK(std::nextafter(lane[at], inf) != sgmcmc::sigmoid(x[at]));
}

// A step may run in an interrupt handler and must not overwrite errno (docs/REALTIME.md). The C
// library's exp sets ERANGE when e^{-|x|} underflows, which the model met at |x| above about 708
// (double) or 87 (float) before it took the errno-free exp of core/math.hpp.
TEST_CASE_TEMPLATE("softplus and sigmoid set no errno, where the C library's exp does", S, float,
                   double) {
  const S big = S(1000);
  errno = 0;
  volatile S sink = std::exp(-big);  // negative control: the probe sees the C library's ERANGE
  (void)sink;
  CHECK(errno == ERANGE);
  for (S x : {-big, -S(745), -S(100), S(0), S(100), S(745), big}) {
    errno = 0;
    const S sp = sgmcmc::softplus(x);
    const S sg = sgmcmc::sigmoid(x);
    CHECK(errno == 0);
    // log(1 + e^x) = max(x, 0) + (at most e^{-|x|}, below 1e-30 here); σ within e^{-|x|} of 0 or 1.
    const S tail = x > S(0) ? sp - x : sp;
    CHECK(tail >= S(0));
    CHECK(tail <= (x == S(0) ? S(0.7) : S(1e-30)));
    CHECK((x > S(0) ? S(1) - sg : sg) <= (x == S(0) ? S(0.5) : S(1e-30)));
  }
}

TEST_CASE("the gradient equals central finite differences of the potential (double and float)") {
  constexpr int D = 6;
  const SyntheticLR<D> data(50, 11);
  const auto model = data.model();
  REQUIRE(model.valid());
  LocalRng rng(3);
  for (int trial = 0; trial < 5; ++trial) {
    Vector<double, D> theta;
    sgmcmc::fill_normal_portable(rng, theta);
    theta *= 2.0;  // includes large |η|, where the stable forms matter
    Vector<double, D> g;
    model.gradient(theta, g);
    for (int j = 0; j < D; ++j) {
      const double step = 1e-5;
      Vector<double, D> up = theta, down = theta;
      up[j] += step;
      down[j] -= step;
      const double fd = (model.potential(up) - model.potential(down)) / (2 * step);
      // Central differences: truncation O(step² U''') plus rounding O(eps U / step).
      CHECK(g[j] == doctest::Approx(fd).epsilon(1e-6).scale(1.0));
    }
    Vector<double, D> g2;
    const double u = model.potential_and_gradient(theta, g2);
    CHECK(u == doctest::Approx(model.potential(theta)).epsilon(1e-14));
    CHECK((g2 - g).cwiseAbs().maxCoeff() <= 1e-12 * (1.0 + g.cwiseAbs().maxCoeff()));
  }
  // Float model on float data: the same check with a float-sized step and tolerance.
  std::vector<float> xf(data.x.begin(), data.x.end());
  const sgmcmc::LogisticRegression<float, D> mf(xf.data(), data.y.data(), data.rows);
  Vector<float, D> theta = Vector<float, D>::Constant(0.3f);
  theta[0] = -0.5f;
  Vector<float, D> gf;
  mf.gradient(theta, gf);
  for (int j = 0; j < D; ++j) {
    Vector<double, D> up = theta.cast<double>(), down = theta.cast<double>();
    up[j] += 1e-5;
    down[j] -= 1e-5;
    const double fd = (model.potential(up) - model.potential(down)) / 2e-5;
    CHECK(double(gf[j]) == doctest::Approx(fd).epsilon(1e-4).scale(1.0));
  }
}

TEST_CASE("negative control: finite differences catch a gradient with a wrong prior term") {
  // The same check on a gradient whose prior term is off by a factor 2 (θ/s² → 2θ/s²) must fail:
  // the difference θ_j/s² with θ_j = 5, s = 1 is 5, far above the tolerance.
  constexpr int D = 3;
  const SyntheticLR<D> data(30, 5);
  const auto model = data.model(1.0);
  Vector<double, D> theta = Vector<double, D>::Constant(5.0);
  Vector<double, D> g;
  model.gradient(theta, g);
  g += theta / 1.0;  // the wrong prior term
  int failures = 0;
  for (int j = 0; j < D; ++j) {
    Vector<double, D> up = theta, down = theta;
    up[j] += 1e-5;
    down[j] -= 1e-5;
    const double fd = (model.potential(up) - model.potential(down)) / 2e-5;
    failures += std::abs(g[j] - fd) > 1e-6 * (1.0 + std::abs(fd)) ? 1 : 0;
  }
  CHECK(failures == D);
}

TEST_CASE("full data = sum of per-example terms + prior; invalid data gives NaN") {
  constexpr int D = 4;
  const SyntheticLR<D> data(20, 2);
  const auto model = data.model(3.0);
  Vector<double, D> theta(0.2, -0.4, 1.0, 0.5);
  Vector<double, D> sum = Vector<double, D>::Zero();
  double u = model.prior_potential(theta);
  for (std::uint32_t i = 0; i < data.rows; ++i) {
    model.add_gradient(i, theta, sum);
    u += model.example_potential(i, theta);
    CHECK(model.probability(i, theta) == doctest::Approx(sgmcmc::sigmoid(model.linear(i, theta))));
  }
  model.add_prior_gradient(theta, sum);
  Vector<double, D> g;
  model.gradient(theta, g);
  CHECK((g - sum).cwiseAbs().maxCoeff() < 1e-12);
  CHECK(model.potential(theta) == doctest::Approx(u).epsilon(1e-14));
  CHECK(model.prior_precision() == doctest::Approx(1.0 / 9.0));

  const sgmcmc::LogisticRegression<double, D> bad(nullptr, data.y.data(), data.rows);
  CHECK_FALSE(bad.valid());
  bad.gradient(theta, g);
  CHECK_FALSE(g.allFinite());
  CHECK(std::isnan(bad.potential(theta)));
  CHECK_FALSE(sgmcmc::LogisticRegression<double, D>(data.x.data(), data.y.data(), 0).valid());
  CHECK_FALSE(sgmcmc::LogisticRegression<double, D>(data.x.data(), data.y.data(), 5, 0.0).valid());
}

TEST_CASE("the LR minibatch gradient is unbiased (Monte Carlo tolerance, negative control)") {
  // N = 40 rows, batches of n = 8 without replacement, K = 20000 batches at a fixed θ. The mean of
  // K minibatch gradients has standard error sqrt(V_j / K), V the exact covariance (MATH.md
  // §5.3(b), from all 40 per-example gradients); every coordinate must lie within 4.5 SE of the
  // full gradient (two-sided p ≈ 7e-6 per coordinate, 5 coordinates, fixed seed).
  // Negative control: the N/(n − 1) scaling (a plausible off-by-one) multiplies the likelihood
  // part by 8/7; at θ = 0 that is a bias of |Σ a_i|/7 per coordinate, several SE.
  constexpr int D = 5;
  constexpr int kCap = 16;
  const SyntheticLR<D> data(40, 7);
  const auto model = data.model();
  const std::size_t n = 8;
  const Vector<double, D> theta = Vector<double, D>::Zero();
  const auto exact = sgmcmc_test::exact_moments(data, theta, n);

  std::vector<std::uint32_t> order(data.rows);
  sgmcmc::MinibatchSampler<kCap> batches(order.data(), data.rows, n);
  sgmcmc::MinibatchGradient<sgmcmc::LogisticRegression<double, D>, kCap> adaptor(model, data.rows);
  LocalRng rng(2024);
  const int k = 20000;
  Vector<double, D> sum = Vector<double, D>::Zero();
  Vector<double, D> g;
  for (int t = 0; t < k; ++t) {
    batches.next(rng, adaptor.batch());
    adaptor.gradient(theta, g);
    sum += g;
  }
  const Vector<double, D> mean = sum / double(k);
  const Vector<double, D> se = (exact.variance / double(k)).cwiseSqrt();
  const Vector<double, D> prior = theta / 100.0;
  int control_failures = 0;
  for (int j = 0; j < D; ++j) {
    INFO("coordinate ", j, ": mean ", mean[j], ", full ", exact.full[j], ", SE ", se[j]);
    CHECK(std::abs(mean[j] - exact.full[j]) < 4.5 * se[j]);
    const double wrong = (mean[j] - prior[j]) * double(n) / double(n - 1) + prior[j];
    control_failures += std::abs(wrong - exact.full[j]) >= 4.5 * se[j] ? 1 : 0;
  }
  CHECK(control_failures >= 1);
}
