// SPDX-License-Identifier: MIT
// Adaptation (include/sgmcmc/adapt, models/preconditioned.hpp): dual averaging reaches its target
// acceptance with NUTS on a Gaussian (negative control: the unadapted start), its bookkeeping and
// refusals; Stan's warm-up windows; the windowed Welford estimates against two-pass formulas
// (negative control: the n-denominator variance); the configurational temperature and the SG
// step-size rule; the preconditioning adaptor's gradient, potential and refusals.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <Eigen/Dense>

#include "local_rng.hpp"
#include "sgmcmc/adapt/dual_averaging.hpp"
#include "sgmcmc/adapt/sg_step_size.hpp"
#include "sgmcmc/adapt/windowed.hpp"
#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/models/preconditioned.hpp"
#include "sgmcmc/samplers/nuts.hpp"

using sgmcmc::DualAveraging;
using sgmcmc::Matrix;
using sgmcmc::StatusCode;
using sgmcmc::Vector;
using sgmcmc_test::LocalRng;

namespace {

constexpr int D = 5;
using Vec = Vector<double, D>;
using Mat = Matrix<double, D, D>;

/// N(0, diag(σ²)) with σ = 0.5, 0.8, 1, 1.4, 2 (condition number 16).
struct Gaussian {
  Vec inv_var = Vec(0.5, 0.8, 1.0, 1.4, 2.0).cwiseAbs2().cwiseInverse();
  template <class T, class G>
  void gradient(const T& theta, G& g) const noexcept {
    g = inv_var.cwiseProduct(Vec(theta));
  }
  template <class T>
  double potential(const T& theta) const noexcept {
    return 0.5 * Vec(theta).cwiseAbs2().dot(inv_var);
  }
};

/// U(θ) = ½ (θ − m)ᵀ A (θ − m).
struct Quadratic {
  Mat a;
  Vec m;
  template <class T, class G>
  void gradient(const T& theta, G& g) const noexcept {
    g = a * (Vec(theta) - m);
  }
  template <class T>
  double potential(const T& theta) const noexcept {
    const Vec d = Vec(theta) - m;
    return 0.5 * d.dot(a * d);
  }
};

/// Mean acceptance statistic of `steps` NUTS transitions at a fixed h.
double mean_acceptance(double h, std::uint64_t seed, int steps) {
  sgmcmc::NUTSParams<double> p;
  p.step_size = h;
  const sgmcmc::NUTS<double, D> nuts(p);
  sgmcmc::host::Rng rng(seed);
  auto z = nuts.start(Vec::Constant(0.5));
  const Gaussian model;
  double sum = 0.0;
  for (int t = 0; t < steps; ++t) {
    REQUIRE(nuts.step(z, model, rng));
    sum += z.extra().accept_stat;
  }
  return sum / steps;
}

/// Dual averaging over `warmup` NUTS transitions from h0; returns the frozen averaged h, and in
/// *late the mean acceptance statistic over the second half of the adaptation.
double adapt_nuts(double h0, double target, std::uint64_t seed, int warmup, double* late) {
  sgmcmc::NUTSParams<double> p;
  p.step_size = h0;
  sgmcmc::NUTS<double, D> nuts(p);
  DualAveraging<double> da({target, 0.05, 10.0, 0.75});
  REQUIRE(da.restart(h0));
  sgmcmc::host::Rng rng(seed);
  auto z = nuts.start(Vec::Constant(0.5));
  const Gaussian model;
  double sum = 0.0;
  for (int t = 0; t < warmup; ++t) {
    REQUIRE(nuts.step(z, model, rng));
    if (2 * t >= warmup) sum += z.extra().accept_stat;
    REQUIRE(nuts.set_step_size(da.update(z.extra().accept_stat)));
  }
  *late = sum / double(warmup - warmup / 2);
  CHECK(da.count() == std::uint64_t(warmup));
  return da.averaged_step_size();
}

}  // namespace

TEST_CASE("dual averaging: NUTS on a Gaussian reaches the target acceptance") {
  // 1000 adapted transitions from a far too large h₀ = 1.5 (σ_min = 0.5: the leapfrog is unstable
  // beyond h = 1) and from a far too small h₀ = 0.01, for targets δ = 0.8 and 0.6.
  // (a) What dual averaging guarantees: the acceptance statistics of its own iterates average to
  //     δ. Pass: the mean over the second half of the adaptation is within ±0.03 of δ (standard
  //     error ≈ 0.01 from 500 correlated transitions; the first half carries the start's
  //     transient).
  // (b) The frozen averaged h̄ (a geometric mean of the iterates, so a little smaller than their
  //     typical value) then gives a mean acceptance over 4000 transitions in [δ, δ + 0.1]: Stan's
  //     known slight overshoot (measured here: 0.83 for δ = 0.8, 0.69 for δ = 0.6).
  // Negative control: the unadapted h₀ fails both bands, from both sides.
  struct Case {
    double h0, target;
  };
  for (const Case c : {Case{1.5, 0.8}, Case{0.01, 0.8}, Case{1.5, 0.6}, Case{0.01, 0.6}}) {
    double late = 0.0;
    const double h = adapt_nuts(c.h0, c.target, 7, 1000, &late);
    const double acc = mean_acceptance(h, 8, 4000);
    const double raw = mean_acceptance(c.h0, 8, 4000);
    MESSAGE("h0 = " << c.h0 << ", δ = " << c.target << ": adapted h = " << h << ", late warm-up "
                    << late << ", frozen " << acc << ", unadapted " << raw);
    CHECK(std::abs(late - c.target) < 0.03);
    CHECK(acc >= c.target);
    CHECK(acc <= c.target + 0.1);
    CHECK_FALSE(std::abs(raw - c.target) < 0.03);
    CHECK_FALSE((raw >= c.target && raw <= c.target + 0.1));
  }
}

TEST_CASE("dual averaging: bookkeeping and refusals") {
  DualAveraging<double> da;
  CHECK(da.valid());
  CHECK(da.restart(0.0) == StatusCode::InvalidStepSize);
  CHECK(da.restart(std::numeric_limits<double>::infinity()) == StatusCode::InvalidStepSize);
  REQUIRE(da.restart(0.2));
  CHECK(da.step_size() == doctest::Approx(0.2));
  CHECK(da.averaged_step_size() == doctest::Approx(0.2));
  // Acceptance above the target makes h grow; a NaN counts as 0 and makes it shrink, and so does
  // a negative value (clipped to 0): after 20 updates h is above / below h₀.
  for (int t = 0; t < 20; ++t) static_cast<void>(da.update(1.0));
  CHECK(da.step_size() > 0.2);
  CHECK(da.averaged_step_size() > 0.2);
  REQUIRE(da.restart(0.2));
  for (int t = 0; t < 20; ++t)
    static_cast<void>(da.update(std::numeric_limits<double>::quiet_NaN()));
  const double down = da.step_size();
  CHECK(down < 0.2);
  CHECK(da.averaged_step_size() < 0.2);
  REQUIRE(da.restart(0.2));
  for (int t = 0; t < 20; ++t) static_cast<void>(da.update(-3.0));
  CHECK(da.step_size() == down);
  CHECK(da.count() == 20);
  // Parameters out of range: invalid, restart refused, update never moves h.
  for (const auto& bad : {sgmcmc::DualAveragingParams<double>{1.0, 0.05, 10.0, 0.75},
                          sgmcmc::DualAveragingParams<double>{0.8, 0.0, 10.0, 0.75},
                          sgmcmc::DualAveragingParams<double>{0.8, 0.05, -1.0, 0.75},
                          sgmcmc::DualAveragingParams<double>{0.8, 0.05, 10.0, 0.5}}) {
    DualAveraging<double> b(bad);
    CHECK_FALSE(b.valid());
    CHECK(b.restart(0.2) == StatusCode::InvalidParameter);
    const double h = b.step_size();
    CHECK(b.update(0.0) == h);
    CHECK(b.count() == 0);
  }
}

TEST_CASE("warm-up windows: Stan's schedule") {
  // W = 1000 with Stan's defaults (75 / 25 / 50): slow windows [75, 99], [100, 149], [150, 249],
  // [250, 449], [450, 949] (the last one stretched to the terminal buffer), as Stan prints them.
  sgmcmc::WindowSchedule s(1000);
  REQUIRE(s.active());
  std::vector<std::uint64_t> ends;
  std::uint64_t first_in = 0, last_in = 0, count_in = 0;
  for (std::uint64_t t = 0; t < 1000; ++t) {
    CHECK(s.iteration() == t);
    if (s.in_window()) {
      if (count_in == 0) first_in = t;
      last_in = t;
      ++count_in;
    }
    if (s.window_ends()) ends.push_back(t);
    s.advance();
  }
  CHECK(ends == std::vector<std::uint64_t>{99, 149, 249, 449, 949});
  CHECK(first_in == 75);
  CHECK(last_in == 949);
  CHECK(count_in == 875);
  // Short warm-ups: Stan's 15 % / 75 % / 10 % fallback (one window [15, 89]); below 20, nothing.
  sgmcmc::WindowSchedule short_s(100);
  CHECK(short_s.params().init_buffer == 15);
  CHECK(short_s.params().term_buffer == 10);
  CHECK(short_s.params().base_window == 75);
  ends.clear();
  for (std::uint64_t t = 0; t < 100; ++t, short_s.advance()) {
    if (short_s.window_ends()) ends.push_back(t);
  }
  CHECK(ends == std::vector<std::uint64_t>{89});
  sgmcmc::WindowSchedule tiny(19);
  CHECK_FALSE(tiny.active());
  for (std::uint64_t t = 0; t < 19; ++t, tiny.advance()) {
    CHECK_FALSE(tiny.in_window());
    CHECK_FALSE(tiny.window_ends());
  }
}

TEST_CASE("windowed metric: Welford estimates equal the two-pass (co)variances of each window") {
  // 1000 draws with a large common offset (10⁴: naive Σx² − n x̄² would lose ~8 digits). At every
  // window end the estimate must equal n/(n + 5) · S² + 10⁻³ · 5/(n + 5) from a two-pass variance
  // (covariance) of exactly that window's draws, to 1e-9 relative. Negative control: the
  // n-denominator variance (off by a factor (n − 1)/n ≥ 1/100 in these windows) fails it.
  LocalRng rng(5);
  std::vector<Vec> draws(1000);
  for (auto& x : draws) {
    sgmcmc::fill_normal_portable(rng, x);
    x = (x.array() * Vec(1.0, 2.0, 0.5, 3.0, 1.5).array()).matrix() + Vec::Constant(1e4);
    x[1] += 0.7 * x[0];
  }
  sgmcmc::WindowedMetric<double, D, false> diag(1000);
  sgmcmc::WindowedMetric<double, D, true> dense(1000);
  const std::vector<std::uint64_t> starts{75, 100, 150, 250, 450};
  const std::vector<std::uint64_t> ends{99, 149, 249, 449, 949};
  std::size_t w = 0;
  for (std::uint64_t t = 0; t < 1000; ++t) {
    Vec var = Vec::Zero();
    Mat cov = Mat::Zero();
    const bool d_end = diag.add(draws[t], var);
    const bool c_end = dense.add(draws[t], cov);
    CHECK(d_end == c_end);
    if (!d_end) continue;
    REQUIRE(w < ends.size());
    CHECK(t == ends[w]);
    // Two passes over the window's draws.
    const std::uint64_t a = starts[w], b = ends[w] + 1;
    const double n = double(b - a);
    Vec mean = Vec::Zero();
    for (std::uint64_t k = a; k < b; ++k) mean += draws[k];
    mean /= n;
    Mat s = Mat::Zero();
    for (std::uint64_t k = a; k < b; ++k) s += (draws[k] - mean) * (draws[k] - mean).transpose();
    const Mat sample = s / (n - 1.0);
    const double weight = n / (n + 5.0), shrink = 1e-3 * 5.0 / (n + 5.0);
    Mat expect = weight * sample;
    expect.diagonal().array() += shrink;
    auto close = [](const Mat& x, const Mat& y) {
      return (x - y).cwiseAbs().maxCoeff() <= 1e-9 * y.cwiseAbs().maxCoeff();
    };
    CHECK(close(cov, expect));
    CHECK(close(Mat(var.asDiagonal()), Mat(expect.diagonal().asDiagonal())));
    Mat biased = weight * (s / n);
    biased.diagonal().array() += shrink;
    CHECK_FALSE(close(Mat(var.asDiagonal()), Mat(biased.diagonal().asDiagonal())));
    ++w;
  }
  CHECK(w == ends.size());
}

namespace {
/// The configurational temperature (centre 0.3) of 200 000 exact draws of the Gaussian model's
/// N(0, diag σ²) with the exact gradient, every coordinate drawn `widen` times too wide and
/// coordinate 0 another `widen0` times.
sgmcmc::ConfigurationalTemperature<double, D> gaussian_temperature(double widen, double widen0,
                                                                   std::uint64_t seed) {
  const Gaussian model;
  const Vec sd = model.inv_var.cwiseInverse().cwiseSqrt();
  sgmcmc::ConfigurationalTemperature<double, D> temp;
  temp.reset(Vec::Constant(0.3));
  LocalRng rng(seed);
  Vec e, g;
  for (int t = 0; t < 200000; ++t) {
    sgmcmc::fill_normal_portable(rng, e);
    Vec theta = widen * sd.cwiseProduct(e);
    theta[0] *= widen0;
    model.gradient(theta, g);
    temp.add(theta, g);
  }
  return temp;
}
}  // namespace

TEST_CASE("configurational temperature: 1 on exact draws, the variance inflation otherwise") {
  // 200 000 exact draws of N(0, diag σ²) with the exact gradient: T̄ = mean_j (θ_j − c_j) ∂_jU has
  // expectation 1 (any centre c; here c = 0.3) and standard error ≈ 0.0015 (Var((θ_j − c)θ_j/σ²)
  // ≈ 2 per coordinate, averaged over 5 coordinates). Pass: |T̄ − 1| < 0.01. Negative control:
  // draws 5 % too wide (variance × 1.1025) give T̄ ≈ 1.10 and fail it.
  CHECK(std::abs(gaussian_temperature(1.0, 1.0, 21).mean_temperature() - 1.0) < 0.01);
  CHECK_FALSE(std::abs(gaussian_temperature(1.05, 1.0, 21).mean_temperature() - 1.0) < 0.01);
  sgmcmc::ConfigurationalTemperature<double, D> empty;
  CHECK(std::isnan(empty.mean_temperature()));
}

TEST_CASE("configurational temperature: the worst coordinate's inflation, which the mean hides") {
  // As above, but coordinate 0 drawn 20 % too wide (variance × 1.44): its T_0 has expectation 1.44
  // (standard error ≈ 0.0045: Var((θ_0 − c)θ_0/σ²) ≈ 2 · 1.44², over 200 000 draws), every other
  // T_j expectation 1 (standard error ≈ 0.0032 each). Pass: |max_j T_j − 1.44| < 0.03 and T̄ − 1
  // within 0.03 of 0.44/D. Negative control: the exact draws' largest T_j is within 0.03 of 1 and
  // fails the first check.
  const auto wide = gaussian_temperature(1.0, 1.2, 22);
  CHECK(std::abs(wide.max_temperature() - 1.44) < 0.03);
  CHECK(std::abs(wide.mean_temperature() - 1.0 - 0.44 / D) < 0.03);
  CHECK(wide.max_temperature() == doctest::Approx(wide.temperature().maxCoeff()));
  const auto exact = gaussian_temperature(1.0, 1.0, 22);
  CHECK_FALSE(std::abs(exact.max_temperature() - 1.44) < 0.03);
  CHECK(std::abs(exact.max_temperature() - 1.0) < 0.03);
  sgmcmc::ConfigurationalTemperature<double, D> empty;
  CHECK(std::isnan(empty.max_temperature()));
}

TEST_CASE("SG step-size rule: starting steps and one adaptation") {
  sgmcmc::SGStepSizeParams<double> p;  // ρ = 0.5, ε = 0.02, growth ≤ 2, shrink ≤ 4
  CHECK(sgmcmc::sghmc_initial_step(4.0, p) == doctest::Approx(0.25));
  CHECK(sgmcmc::sgld_initial_step(4.0, p) == doctest::Approx(0.03125));
  // Excess 4ε at order 2 halves h; at order 1 quarters it; within the caps exactly.
  CHECK(sgmcmc::adapt_sg_step(0.1, 1.08, 2.0, p) == doctest::Approx(0.05));
  CHECK(sgmcmc::adapt_sg_step(0.1, 1.08, 1.0, p) == doctest::Approx(0.025));
  // Caps: a huge excess shrinks by 4 at most, no excess grows by 2, NaN shrinks by 4.
  CHECK(sgmcmc::adapt_sg_step(0.1, 50.0, 2.0, p) == doctest::Approx(0.025));
  CHECK(sgmcmc::adapt_sg_step(0.1, 0.99, 2.0, p) == doctest::Approx(0.2));
  CHECK(sgmcmc::adapt_sg_step(0.1, std::numeric_limits<double>::quiet_NaN(), 2.0, p) ==
        doctest::Approx(0.025));
}

TEST_CASE("paired noise estimate: recovers a known gradient-noise variance") {
  // g₁, g₂ = g + independent N(0, v) noise, v = (0.5, 1, 2, 4, 8); 40 000 pairs, running mean
  // (λ = 0): the estimate (g₁ − g₂)²/2 averaged has relative sd √(2/40000) ≈ 0.7 %. Pass: within
  // 4 %. Negative control: (g₁ − g₂)² without the 1/2 is off by 100 % and fails.
  const Vec v(0.5, 1.0, 2.0, 4.0, 8.0);
  sgmcmc::PairedNoiseEstimate<double, D> est(0.0);
  LocalRng rng(33);
  Vec e1, e2, twice = Vec::Zero();
  const Vec g(1.0, -2.0, 3.0, 0.0, 5.0);
  const int k = 40000;
  for (int t = 0; t < k; ++t) {
    sgmcmc::fill_normal_portable(rng, e1);
    sgmcmc::fill_normal_portable(rng, e2);
    const Vec g1 = g + v.cwiseSqrt().cwiseProduct(e1), g2 = g + v.cwiseSqrt().cwiseProduct(e2);
    REQUIRE(est.add(g1, g2));
    twice += (g1 - g2).cwiseAbs2() / double(k);
  }
  auto close = [&](const Vec& x) { return ((x - v).cwiseAbs().array() < 0.04 * v.array()).all(); };
  CHECK(close(est.estimate()));
  CHECK_FALSE(close(twice));
  CHECK_FALSE(est.add(Vec::Constant(std::numeric_limits<double>::quiet_NaN()), g));
  CHECK(est.count() == std::uint64_t(k));
}

TEST_CASE("preconditioning adaptor: gradient, potential, round trip, refusals") {
  // U(θ) = ½ (θ − m)ᵀ A (θ − m) with A positive definite. With LLᵀ = A⁻¹ (set_precision) the
  // whitened potential is ½‖η − L⁻¹(m − μ)‖²: its gradient is η − L⁻¹(m − μ), exactly (1e-10).
  LocalRng rng(3);
  Mat b;
  for (int i = 0; i < D; ++i) {
    Vec col;
    sgmcmc::fill_normal_portable(rng, col);
    b.col(i) = col;
  }
  const Quadratic q{b * b.transpose() + Mat::Identity(), Vec(1.0, -1.0, 2.0, 0.5, 0.0)};
  const Vec mu(0.2, 0.1, 0.0, -0.3, 0.4);
  sgmcmc::OwnedPreconditioned<Quadratic, double, D, true> dense(q);
  REQUIRE(dense.set_precision(mu, q.a));
  const Mat l = q.a.inverse().llt().matrixL();
  const Vec eta(0.3, -0.7, 1.1, 0.0, -0.2);
  Vec g;
  dense.gradient(eta, g);
  const Vec shift = l.triangularView<Eigen::Lower>().solve(q.m - mu);
  CHECK((g - (eta - shift)).cwiseAbs().maxCoeff() < 1e-10);
  CHECK(dense.potential(eta) == doctest::Approx(0.5 * (eta - shift).squaredNorm()).epsilon(1e-12));
  CHECK((dense.whiten(dense.position(eta)) - eta).cwiseAbs().maxCoeff() < 1e-12);
  // Diagonal: L = √diag(A⁻¹); the gradient is L ∘ ∇U(μ + L ∘ η).
  sgmcmc::OwnedPreconditioned<Quadratic, double, D, false> diagonal(q);
  REQUIRE(diagonal.set_precision(mu, q.a));
  const Vec s = q.a.inverse().diagonal().cwiseSqrt();
  diagonal.gradient(eta, g);
  Vec expect;
  q.gradient(Vec(mu + s.cwiseProduct(eta)), expect);
  CHECK((g - s.cwiseProduct(expect)).cwiseAbs().maxCoeff() < 1e-10);
  // Refusals leave the transform unchanged: a matrix that is not positive definite, a NaN μ.
  Mat not_pd = q.a;
  not_pd(2, 2) = -1.0;
  CHECK(dense.set_precision(mu, not_pd) == StatusCode::InvalidParameter);
  CHECK(dense.set_covariance(Vec::Constant(std::numeric_limits<double>::quiet_NaN()), q.a) ==
        StatusCode::InvalidParameter);
  Vec g2;
  dense.gradient(eta, g2);
  CHECK((g2 - (eta - shift)).cwiseAbs().maxCoeff() < 1e-10);
  CHECK(diagonal.set_covariance(mu, Vec(1.0, 1.0, 0.0, 1.0, 1.0)) == StatusCode::InvalidParameter);
}
