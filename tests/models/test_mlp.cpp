// SPDX-License-Identifier: MIT
// The 784-100-10 network (models/mlp.hpp): potentials and probabilities against a naive reference
// of the model's definition, the gradient against central finite differences in double (with
// negative controls), every compiled kernel against the double pass, fast_exp's accuracy, and
// the refusals of bad input.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "mlp_support.hpp"
#include "sgmcmc/models/mlp.hpp"

using sgmcmc::MlpActivation;
using sgmcmc::MlpKernel;
using namespace mlp_test;

namespace {

constexpr int kCap = 8;
constexpr std::size_t kRows = 37;  // 4 full chunks of 8 and a remainder of 5 in potential()

template <class S, MlpActivation A = MlpActivation::Sigmoid>
using Net = sgmcmc::BayesianMLP<S, kCap, A>;

// A network over `data` with the batch {3, 11, 0, 36, 20, 7, 29, 14} (first `n` of them).
template <class S, MlpActivation A>
Net<S, A> network(const Images& data, typename Net<S, A>::Workspace& ws, std::size_t n = kCap,
                  MlpKernel kernel = MlpKernel::Auto) {
  Net<S, A> net(data.pixels.data(), data.labels.data(), data.rows, ws, kernel);
  const std::uint32_t rows[kCap] = {3, 11, 0, 36, 20, 7, 29, 14};
  net.batch().size = n;
  for (std::size_t k = 0; k < n; ++k) net.batch().index[k] = rows[k];
  return net;
}

// Central-difference check of g against the model's batch potential at θ: the coordinates in
// `coords` and the directions in `dirs`. Returns the worst |fd − g| / (1e-6 + 1e-6 |g|): the check
// passes at <= 1. Why 1e-6: with h = 1e-5 the truncation error is h² U'''/6 < 1e-9 here and the
// rounding error of a difference of two potentials of size ~200 is ~1e-15·200 / 2h ~ 1e-8, so a
// correct gradient stays far below the tolerance while an error of 1e-5 (absolute or relative on
// an O(1) entry) exceeds it.
template <class NetT>
double fd_worst(const NetT& net, std::vector<double> theta, const std::vector<double>& g,
                const std::vector<int>& coords, const std::vector<std::vector<double>>& dirs) {
  const double h = 1e-5;
  ConstMap<double> tm(theta.data());
  auto ratio = [](double fd, double exact) {
    return std::abs(fd - exact) / (1e-6 + 1e-6 * std::abs(exact));
  };
  double worst = 0;
  for (int i : coords) {
    const double keep = theta[std::size_t(i)];
    theta[std::size_t(i)] = keep + h;
    const double up = net.batch_potential(tm);
    theta[std::size_t(i)] = keep - h;
    const double down = net.batch_potential(tm);
    theta[std::size_t(i)] = keep;
    worst = std::max(worst, ratio((up - down) / (2 * h), g[std::size_t(i)]));
  }
  for (const auto& v : dirs) {
    const std::vector<double> base = theta;
    double gv = 0;
    for (int i = 0; i < kDim; ++i) gv += g[std::size_t(i)] * v[std::size_t(i)];
    for (int i = 0; i < kDim; ++i)
      theta[std::size_t(i)] = base[std::size_t(i)] + h * v[std::size_t(i)];
    const double up = net.batch_potential(tm);
    for (int i = 0; i < kDim; ++i)
      theta[std::size_t(i)] = base[std::size_t(i)] - h * v[std::size_t(i)];
    const double down = net.batch_potential(tm);
    theta = base;
    worst = std::max(worst, ratio((up - down) / (2 * h), gv));
  }
  return worst;
}

// Coordinates checked one by one: all of b1 and b2, 300 entries of W1 (three whole pixel rows
// and 200 random entries) and 200 random entries of W2.
std::vector<int> checked_coordinates() {
  std::vector<int> c;
  for (int i = 0; i < kHidden; ++i) c.push_back(kB1 + i);
  for (int i = 0; i < kClasses; ++i) c.push_back(kB2 + i);
  for (int pixel : {0, 400, 783}) {
    for (int i = 0; i < kHidden; ++i) c.push_back(kW1 + pixel * kHidden + i);
  }
  sgmcmc_test::LocalRng rng(77);
  for (int k = 0; k < 200; ++k) c.push_back(kW1 + int(rng() % std::uint64_t(kB1)));
  for (int k = 0; k < 200; ++k) c.push_back(kW2 + int(rng() % 1000));
  return c;
}

// Four random unit directions over all 79 510 coordinates.
std::vector<std::vector<double>> directions() {
  sgmcmc_test::LocalRng rng(78);
  std::vector<std::vector<double>> dirs(4, std::vector<double>(kDim));
  for (auto& v : dirs) {
    double norm = 0;
    for (double& x : v) {
      x = normal(rng);
      norm += x * x;
    }
    for (double& x : v) x /= std::sqrt(norm);
  }
  return dirs;
}

template <MlpActivation A>
void check_against_reference(bool relu) {
  const Images data(kRows, 1);
  auto ws = std::make_unique<typename Net<double, A>::Workspace>();
  auto net = network<double, A>(data, *ws);
  REQUIRE(net.valid());
  typename Net<double, A>::Prior prior;
  prior.w1 = 2.0;
  prior.b1 = 0.5;
  prior.w2 = 3.0;
  prior.b2 = 0.25;
  REQUIRE(net.set_prior(prior));
  const double lambda[4] = {2.0, 0.5, 3.0, 0.25};
  std::vector<double> theta = parameters(2);
  ConstMap<double> tm(theta.data());

  double batch_nll = 0;
  for (std::uint32_t i : net.batch()) {
    batch_nll += reference_nll(theta, data.pixels.data() + i * kPixels, data.labels[i], relu);
  }
  const double expected_batch = double(kRows) / kCap * batch_nll + reference_prior(theta, lambda);
  CHECK(net.batch_potential(tm) == doctest::Approx(expected_batch).epsilon(1e-12));

  double all_nll = 0;
  for (std::size_t i = 0; i < kRows; ++i) {
    all_nll += reference_nll(theta, data.pixels.data() + i * kPixels, data.labels[i], relu);
  }
  CHECK(net.potential(tm) ==
        doctest::Approx(all_nll + reference_prior(theta, lambda)).epsilon(1e-12));

  std::vector<double> g(kDim);
  Map<double> gm(g.data());
  CHECK(net.batch_potential_and_gradient(tm, gm) == doctest::Approx(expected_batch).epsilon(1e-12));

  // Probabilities of images 30..36 (a count below Capacity), from the reference logits.
  std::vector<double> probs(7 * kClasses);
  REQUIRE(net.predict(tm, data.pixels.data(), 30, 7, probs.data()));
  for (int e = 0; e < 7; ++e) {
    double z[kClasses], a[kHidden];
    reference_logits(theta, data.pixels.data() + (30 + e) * kPixels, relu, z, a);
    double s = 0;
    for (double v : z) s += std::exp(v);
    for (int c = 0; c < kClasses; ++c) {
      CHECK(probs[std::size_t(e * kClasses + c)] ==
            doctest::Approx(std::exp(z[c]) / s).epsilon(1e-12));
    }
  }
}

}  // namespace

TEST_CASE("potentials and probabilities match a naive reference of the model's definition") {
  SUBCASE("sigmoid") {
    check_against_reference<MlpActivation::Sigmoid>(false);
  }
  SUBCASE("ReLU") {
    check_against_reference<MlpActivation::ReLU>(true);
  }
}

TEST_CASE("the gradient matches central finite differences in double; wrong gradients do not") {
  const Images data(kRows, 3);
  std::vector<double> theta = parameters(4);
  ConstMap<double> tm(theta.data());
  const std::vector<int> coords = checked_coordinates();
  const auto dirs = directions();

  auto ws = std::make_unique<Net<double>::Workspace>();
  auto sigmoid = network<double, MlpActivation::Sigmoid>(data, *ws);
  std::vector<double> g(kDim);
  Map<double> gm(g.data());
  sigmoid.gradient(tm, gm);
  const double worst = fd_worst(sigmoid, theta, g, coords, dirs);
  INFO("worst |fd - g| / tolerance: ", worst);
  CHECK(worst <= 1.0);

  // gradient() and batch_potential_and_gradient() write the same vector, also through a
  // temporary Map.
  std::vector<double> g2(kDim);
  Map<double> g2m(g2.data());
  (void)sigmoid.batch_potential_and_gradient(tm, g2m);
  CHECK(g2 == g);
  std::vector<double> g3(kDim);
  sigmoid.gradient(tm, Map<double>(g3.data()));
  CHECK(g3 == g);

  // ReLU: no pre-activation of the batch is within the step's reach of the kink at 0.
  auto ws_relu = std::make_unique<Net<double, MlpActivation::ReLU>::Workspace>();
  auto relu = network<double, MlpActivation::ReLU>(data, *ws_relu);
  double closest = 1e9;
  for (std::uint32_t i : relu.batch()) {
    double z[kClasses], a[kHidden];
    reference_logits(theta, data.pixels.data() + i * kPixels, true, z, a);
    for (double v : a) closest = std::min(closest, std::abs(v));
  }
  REQUIRE(closest > 1e-3);
  std::vector<double> g_relu(kDim);
  Map<double> g_relu_map(g_relu.data());
  relu.gradient(tm, g_relu_map);
  CHECK(fd_worst(relu, theta, g_relu, coords, dirs) <= 1.0);

  // Negative controls: each wrong gradient fails the same check.
  SUBCASE("the sigmoid gradient against the ReLU potential") {
    CHECK(fd_worst(relu, theta, g, coords, dirs) > 1.0);
  }
  SUBCASE("a gradient whose W1 prior term is doubled") {
    auto strong = network<double, MlpActivation::Sigmoid>(data, *ws);
    Net<double>::Prior prior;
    prior.w1 = 2.0;
    REQUIRE(strong.set_prior(prior));
    std::vector<double> wrong(kDim);
    Map<double> wm(wrong.data());
    strong.gradient(tm, wm);
    CHECK(fd_worst(sigmoid, theta, wrong, coords, dirs) > 1.0);
  }
  SUBCASE("one entry of b1 off by 1e-5") {
    std::vector<double> wrong = g;
    wrong[std::size_t(kB1 + 7)] += 1e-5;
    CHECK(fd_worst(sigmoid, theta, wrong, {kB1 + 7}, {}) > 1.0);
  }
}

namespace {

// A float pass (potential uf, gradient gf) against the double pass (u, g) on the same batch:
// float sums of a few hundred terms, so errors of a few 1e-7 of the largest gradient entry.
void check_float_pass(double u, const std::vector<double>& g, float uf,
                      const std::vector<float>& gf) {
  CHECK(double(uf) == doctest::Approx(u).epsilon(1e-5));
  double largest = 0;
  double worst = 0;
  for (int i = 0; i < kDim; ++i) {
    largest = std::max(largest, std::abs(g[std::size_t(i)]));
    worst = std::max(worst, std::abs(double(gf[std::size_t(i)]) - g[std::size_t(i)]));
  }
  CHECK(worst <= 1e-5 * largest);
}

}  // namespace

TEST_CASE("every compiled kernel agrees with the double pass, for every batch size") {
  const Images data(kRows, 5);
  const std::vector<double> theta = parameters(6);
  const std::vector<float> theta_f = cast<float>(theta);
  ConstMap<double> tm(theta.data());
  ConstMap<float> tmf(theta_f.data());
  auto ws = std::make_unique<Net<double>::Workspace>();
  auto ws_f = std::make_unique<Net<float>::Workspace>();
  std::vector<double> g(kDim);
  std::vector<float> gf(kDim);
  Map<double> gm(g.data());
  Map<float> gfm(gf.data());

  for (MlpKernel kernel : {MlpKernel::Portable, MlpKernel::Avx2, MlpKernel::Avx512}) {
    if (!sgmcmc::mlp_kernel_available<float>(kernel)) {
      MESSAGE("kernel " << int(kernel) << " is not available on this machine: not tested");
      continue;
    }
    // Sizes 1..8 exercise every left-over case of the 2- or 3-image kernels.
    for (std::size_t n = 1; n <= std::size_t(kCap); ++n) {
      CAPTURE(int(kernel));
      CAPTURE(n);
      const auto exact = network<double, MlpActivation::Sigmoid>(data, *ws, n);
      const auto net = network<float, MlpActivation::Sigmoid>(data, *ws_f, n, kernel);
      REQUIRE(net.kernel() == kernel);
      check_float_pass(exact.batch_potential_and_gradient(tm, gm), g,
                       net.batch_potential_and_gradient(tmf, gfm), gf);
    }
    // Probabilities and the full-data potential.
    const auto exact = network<double, MlpActivation::Sigmoid>(data, *ws);
    const auto net = network<float, MlpActivation::Sigmoid>(data, *ws_f, kCap, kernel);
    CHECK(double(net.potential(tmf)) == doctest::Approx(exact.potential(tm)).epsilon(1e-5));
    std::vector<double> p(kCap * kClasses);
    std::vector<float> pf(kCap * kClasses);
    REQUIRE(exact.predict(tm, data.pixels.data(), 29, kCap, p.data()));
    REQUIRE(net.predict(tmf, data.pixels.data(), 29, kCap, pf.data()));
    for (std::size_t i = 0; i < p.size(); ++i) CHECK(std::abs(double(pf[i]) - p[i]) < 1e-6);
  }
}

TEST_CASE("every kernel agrees with the double pass on batches of several 32-image blocks") {
  // The AVX2 kernel's backward pass runs over blocks of 32 images (Ops::kBackwardBlock); the
  // test above stops at 8. Batches of 31 to 100 distinct rows: part of one block, exactly one,
  // and several with a remainder.
  constexpr int kBig = 100;
  using BigNet = sgmcmc::BayesianMLP<float, kBig>;
  using BigNetD = sgmcmc::BayesianMLP<double, kBig>;
  const Images data(211, 8);
  const std::vector<double> theta = parameters(9);
  const std::vector<float> theta_f = cast<float>(theta);
  ConstMap<double> tm(theta.data());
  ConstMap<float> tmf(theta_f.data());
  auto ws = std::make_unique<BigNetD::Workspace>();
  auto ws_f = std::make_unique<BigNet::Workspace>();
  std::vector<double> g(kDim);
  std::vector<float> gf(kDim);
  Map<double> gm(g.data());
  Map<float> gfm(gf.data());
  for (MlpKernel kernel : {MlpKernel::Portable, MlpKernel::Avx2, MlpKernel::Avx512}) {
    if (!sgmcmc::mlp_kernel_available<float>(kernel)) continue;
    for (std::size_t n : {std::size_t(31), std::size_t(32), std::size_t(33), std::size_t(64),
                          std::size_t(97), std::size_t(kBig)}) {
      CAPTURE(int(kernel));
      CAPTURE(n);
      BigNetD exact(data.pixels.data(), data.labels.data(), data.rows, *ws);
      BigNet net(data.pixels.data(), data.labels.data(), data.rows, *ws_f, kernel);
      REQUIRE(net.kernel() == kernel);
      exact.batch().size = n;
      net.batch().size = n;
      for (std::size_t k = 0; k < n; ++k) {
        const auto row = std::uint32_t((7 * k + 3) % data.rows);  // 7 and 211 coprime: distinct
        exact.batch().index[k] = row;
        net.batch().index[k] = row;
      }
      check_float_pass(exact.batch_potential_and_gradient(tm, gm), g,
                       net.batch_potential_and_gradient(tmf, gfm), gf);
    }
  }
}

TEST_CASE("fast_exp: relative error below 2e-7 over its range, exact at 0, NaN stays NaN") {
  double worst = 0;
  for (int i = 0; i <= 2000000; ++i) {
    const float x = -87.0f + 175.0f * float(i) / 2000000.0f;
    const double exact = std::exp(double(x));
    worst = std::max(worst, std::abs(double(sgmcmc::detail::mlp::fast_exp(x)) - exact) / exact);
  }
  INFO("worst relative error: ", worst);
  CHECK(worst < 2e-7);
  CHECK(sgmcmc::detail::mlp::fast_exp(0.0f) == 1.0f);
  CHECK(std::isnan(sgmcmc::detail::mlp::fast_exp(std::numeric_limits<float>::quiet_NaN())));
  const float big = sgmcmc::detail::mlp::fast_exp(std::numeric_limits<float>::infinity());
  CHECK(std::isfinite(big));
  CHECK(big > 1e38f);
  const float tiny = sgmcmc::detail::mlp::fast_exp(-std::numeric_limits<float>::infinity());
  CHECK(tiny > 0.0f);
  CHECK(tiny < 1e-37f);
}

TEST_CASE(
    "bad input: invalid models, empty or out-of-range batches give NaN; refusals change nothing") {
  Images data(kRows, 7);
  const std::vector<double> theta = parameters(8);
  ConstMap<double> tm(theta.data());
  std::vector<double> g(kDim, 0.0);
  Map<double> gm(g.data());
  auto ws = std::make_unique<Net<double>::Workspace>();
  auto all_nan = [&] {
    return std::all_of(g.begin(), g.end(), [](double v) { return std::isnan(v); });
  };

  auto net = network<double, MlpActivation::Sigmoid>(data, *ws);
  REQUIRE(net.valid());
  CHECK(net.kernel() == MlpKernel::Portable);  // double runs the portable pass

  net.batch().size = 0;
  net.gradient(tm, gm);
  CHECK(all_nan());
  CHECK(std::isnan(net.batch_potential(tm)));

  net = network<double, MlpActivation::Sigmoid>(data, *ws);
  net.batch().index[3] = std::uint32_t(kRows);  // one past the last image
  std::fill(g.begin(), g.end(), 0.0);
  net.gradient(tm, gm);
  CHECK(all_nan());

  // Invalid constructions.
  data.labels[5] = 10;
  CHECK_FALSE(network<double, MlpActivation::Sigmoid>(data, *ws).valid());
  data.labels[5] = 9;
  CHECK_FALSE(Net<double>(nullptr, data.labels.data(), kRows, *ws).valid());
  CHECK_FALSE(Net<double>(data.pixels.data(), nullptr, kRows, *ws).valid());
  CHECK_FALSE(Net<double>(data.pixels.data(), data.labels.data(), 0, *ws).valid());
  CHECK_FALSE(sgmcmc::mlp_kernel_available<double>(MlpKernel::Avx512));
  CHECK_FALSE(
      Net<double>(data.pixels.data(), data.labels.data(), kRows, *ws, MlpKernel::Avx2).valid());
  const Net<double> invalid(nullptr, data.labels.data(), kRows, *ws);
  CHECK(std::isnan(invalid.potential(tm)));

  // Refused prior: unchanged.
  Net<double>::Prior bad;
  bad.b2 = -1.0;
  CHECK_FALSE(net.set_prior(bad));
  bad.b2 = std::numeric_limits<double>::infinity();
  CHECK_FALSE(net.set_prior(bad));
  CHECK(net.prior().b2 == 1.0);

  // Refused predictions write nothing.
  std::vector<double> probs(kCap * kClasses + 1, -7.0);
  CHECK_FALSE(net.predict(tm, data.pixels.data(), 0, 0, probs.data()));
  CHECK_FALSE(net.predict(tm, data.pixels.data(), 0, kCap + 1, probs.data()));
  CHECK_FALSE(net.predict(tm, nullptr, 0, 4, probs.data()));
  CHECK_FALSE(invalid.predict(tm, data.pixels.data(), 0, 4, probs.data()));
  CHECK(std::all_of(probs.begin(), probs.end(), [](double v) { return v == -7.0; }));
}

TEST_CASE("the group sums for the Gibbs update of the prior precisions") {
  const std::vector<double> theta = parameters(9);
  ConstMap<double> tm(theta.data());
  const auto ss = Net<double>::group_squared_norms(tm);
  const int bounds[5] = {kW1, kB1, kW2, kB2, kDim};
  int total = 0;
  for (int k = 0; k < 4; ++k) {
    double expected = 0;
    for (int i = bounds[k]; i < bounds[k + 1]; ++i)
      expected += theta[std::size_t(i)] * theta[std::size_t(i)];
    CHECK(ss[std::size_t(k)] == doctest::Approx(expected).epsilon(1e-12));
    CHECK(Net<double>::GroupSize[std::size_t(k)] == bounds[k + 1] - bounds[k]);
    total += Net<double>::GroupSize[std::size_t(k)];
  }
  CHECK(total == Net<double>::Dim);
}
