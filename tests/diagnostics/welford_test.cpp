// SPDX-License-Identifier: MIT
// Welford moments against a two-pass computation; merging; covariance; float and double; and
// no heap use by any diagnostic (the allocation counter lives in this executable's main file).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "alloc_counter.hpp"
#include "local_rng.hpp"
#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/diagnostics/ess.hpp"
#include "sgmcmc/diagnostics/rhat.hpp"
#include "sgmcmc/diagnostics/welford.hpp"

using sgmcmc_test::LocalRng;

namespace {

constexpr int kD = 3;
using Vec3 = sgmcmc::Vector<double, kD>;
using Mat3 = sgmcmc::Matrix<double, kD, kD>;

// Draws with a large common offset (where the naive sum-of-squares formula cancels) and
// correlated coordinates.
std::vector<Vec3> make_data(int n, std::uint64_t seed) {
  LocalRng rng(seed);
  std::vector<Vec3> out(n);
  for (auto& v : out) {
    Vec3 e;
    sgmcmc::fill_normal(rng, e);
    v = Vec3(1000.0 + e[0], -5.0 + 0.5 * e[0] + 2.0 * e[1], 0.001 * e[2]);
  }
  return out;
}

void two_pass(const std::vector<Vec3>& data, Vec3& mean, Mat3& cov) {
  mean.setZero();
  for (const auto& v : data) mean += v;
  mean /= double(data.size());
  cov.setZero();
  for (const auto& v : data) cov += (v - mean) * (v - mean).transpose();
  cov /= double(data.size() - 1);
}

}  // namespace

TEST_CASE("Welford mean and variance equal a two-pass computation (double)") {
  const auto data = make_data(10000, 1);
  Vec3 mean;
  Mat3 cov;
  two_pass(data, mean, cov);
  sgmcmc::Welford<double, kD> w;
  for (const auto& v : data) w.push(v);
  CHECK(w.count() == 10000);
  for (int d = 0; d < kD; ++d) {
    CHECK(w.mean()[d] == doctest::Approx(mean[d]).epsilon(1e-12));
    CHECK(w.variance()[d] == doctest::Approx(cov(d, d)).epsilon(1e-10));
    CHECK(w.variance_population()[d] ==
          doctest::Approx(cov(d, d) * 9999.0 / 10000.0).epsilon(1e-10));
  }
}

TEST_CASE("Welford in float stays accurate despite a large offset") {
  const auto data = make_data(10000, 2);
  Vec3 mean;
  Mat3 cov;
  two_pass(data, mean, cov);
  sgmcmc::Welford<float, kD> w;
  for (const auto& v : data) w.push(v.cast<float>());
  for (int d = 0; d < kD; ++d) {
    CHECK(double(w.mean()[d]) == doctest::Approx(mean[d]).epsilon(1e-5).scale(1e-3));
    CHECK(double(w.variance()[d]) == doctest::Approx(cov(d, d)).epsilon(1e-3));
  }
}

TEST_CASE("merging two Welford accumulators equals one over all the data") {
  const auto data = make_data(3001, 3);
  sgmcmc::Welford<double, kD> all, a, b, empty;
  for (std::size_t i = 0; i < data.size(); ++i) {
    all.push(data[i]);
    (i < 1234 ? a : b).push(data[i]);
  }
  a.merge(b);
  a.merge(empty);
  CHECK(a.count() == all.count());
  CHECK((a.mean() - all.mean()).norm() < 1e-10);
  CHECK((a.variance() - all.variance()).norm() < 1e-9 * all.variance().norm());
  empty.merge(all);
  CHECK(empty.count() == all.count());
  CHECK(empty.mean() == all.mean());
}

TEST_CASE("Welford returns NaN variance before two samples and resets") {
  sgmcmc::Welford<float, 2> w;
  CHECK(std::isnan(w.variance()[0]));
  CHECK(std::isnan(w.variance_population()[1]));
  w.push(sgmcmc::Vector<float, 2>(1.0f, 2.0f));
  CHECK(std::isnan(w.variance()[0]));
  CHECK(w.variance_population()[0] == 0.0f);
  w.reset();
  CHECK(w.count() == 0);
}

TEST_CASE("WelfordCovariance equals the two-pass covariance") {
  const auto data = make_data(5000, 4);
  Vec3 mean;
  Mat3 cov;
  two_pass(data, mean, cov);
  sgmcmc::WelfordCovariance<double, kD> w;
  for (const auto& v : data) w.push(v);
  CHECK((w.mean() - mean).norm() < 1e-10);
  const Mat3 c = w.covariance();
  CHECK((c - cov).norm() < 1e-10 * cov.norm());
  CHECK((c - c.transpose()).norm() == 0.0);

  sgmcmc::WelfordCovariance<float, kD> wf;
  for (const auto& v : data) wf.push(v.cast<float>());
  CHECK((wf.covariance().cast<double>() - cov).norm() < 1e-3 * cov.norm());
}

TEST_CASE("pushing to and evaluating every diagnostic allocates nothing") {
  const auto data = make_data(2000, 5);
  static sgmcmc::Welford<double, kD> w;
  static sgmcmc::WelfordCovariance<double, kD> wc;
  static sgmcmc::BatchMeansESS<double, kD, 32> bm;
  static sgmcmc::GeyerESS<double, kD, 64> geyer;
  static sgmcmc::SplitRhat<double, kD, 2> rhat(1000);
  double sink = 0;
  long allocations = -1;
  {
    const sgmcmc_test::AllocationScope scope;
    for (std::size_t t = 0; t < data.size(); ++t) {
      w.push(data[t]);
      wc.push(data[t]);
      bm.push(data[t]);
      geyer.push(data[t]);
      rhat.push(t % 2, data[t]);
    }
    sink += w.variance().sum() + wc.covariance().sum() + bm.ess().sum() + geyer.ess().sum() +
            rhat.rhat().sum() + sgmcmc::ess_geyer(&data[0][0], data.size(), kD).ess +
            sgmcmc::ess_batch_means(&data[0][0], data.size(), kD).ess;
    allocations = scope.count();
  }
  CHECK(allocations == 0);
  CHECK(std::isfinite(sink));
}
