// SPDX-License-Identifier: MIT
// ESS against AR(1) chains with known ESS n (1 - phi) / (1 + phi), both estimators, and the
// streaming estimators against the offline ones on a stored chain.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "ar1.hpp"
#include "local_rng.hpp"
#include "sgmcmc/diagnostics/ess.hpp"

using sgmcmc_test::AR1;
using sgmcmc_test::LocalRng;

namespace {

constexpr int kD = 2;         // independent coordinates per chain
constexpr int kReplicas = 4;  // seeds; kD * kReplicas = 8 chains per phi

struct Ratios {
  double mean = 0;        // mean of ESS estimate / true ESS over the 8 chains
  double lowest = 1e300;  // smallest and largest single-chain ratio
  double highest = 0;
  bool truncated = false;
  double worst() const { return std::max(1 - lowest, highest - 1); }
};

void add(Ratios& r, double ratio, int chains) {
  r.mean += ratio / chains;
  r.lowest = std::min(r.lowest, ratio);
  r.highest = std::max(r.highest, ratio);
}

// Runs kReplicas seeds of a kD-dimensional AR(1): the first n_geyer draws into a streaming
// GeyerESS<MaxLag> (MaxLag = 256 for phi <= 0.9, 2048 ~ 10 tau for phi = 0.99, where a
// window of 1024 was seen to truncate the positive sequence for some seeds), all n_bm draws into a
// streaming BatchMeansESS<128>.
template <int MaxLag>
void run_ar1(double phi, std::size_t n_geyer, std::size_t n_bm, Ratios& geyer, Ratios& bm) {
  for (int rep = 0; rep < kReplicas; ++rep) {
    LocalRng rng(1000 + 17 * std::uint64_t(rep) + std::uint64_t(phi * 100));
    AR1<kD> chain(phi, rng);
    sgmcmc::GeyerESS<double, kD, MaxLag> g;
    sgmcmc::BatchMeansESS<double, kD, 128> b;
    for (std::size_t t = 0; t < std::max(n_geyer, n_bm); ++t) {
      const auto& x = chain.next(rng);
      if (t < n_geyer) g.push(x);
      if (t < n_bm) b.push(x);
    }
    for (int d = 0; d < kD; ++d) {
      const auto eg = g.estimate(d);
      geyer.truncated = geyer.truncated || eg.truncated;
      add(geyer, eg.ess / AR1<kD>::true_ess(phi, double(n_geyer)), kD * kReplicas);
      add(bm, b.estimate(d).ess / AR1<kD>::true_ess(phi, double(n_bm)), kD * kReplicas);
    }
  }
}

}  // namespace

// Tolerances (8 chains, mean of the ratio ESS_hat / ESS_true, and the worst single chain):
// * Geyer: Var(tau_hat) / tau^2 ~ 2 (2M + 1) / n for a sum truncated at lag M (Sokal 1997).
//   At n = 1e5 the sequence stops near M ~ 10, 15, 50, 500 for phi = 0, 0.5, 0.9, 0.99, giving a
//   per-chain relative sd of about 2%, 2.5%, 5%, 14%, so 2%, 3%, 6%, 15% for the 8-chain mean at
//   3 sd; the positive-sequence rule and the tail beyond M add an upward bias of a few percent
//   at most. Bounds: mean within 8% (phi <= 0.9) and 20% (phi = 0.99); each chain within 15%
//   (phi <= 0.9, >= 3 sd) and 50% (phi = 0.99).
// * Batch means with 128 slots: 97 complete batches of 1024 at n = 1e5, 122 of 8192 at n = 1e6.
//   Relative sd sqrt(2 / (k - 1)) = 14.4% (12.9%) per chain, 5.1% (4.5%) for the 8-chain mean;
//   bias 2 phi / (b (1 - phi^2)) = 0.9% for phi = 0.9 at b = 1024 and 1.2% for phi = 0.99 at
//   b = 8192 (so phi = 0.99 runs to n = 1e6, which costs O(D) per draw), plus the Jensen bias of
//   1 / chi2, E (k-1) / chi2(k-1) = (k-1) / (k-3), about +2%. Bounds: mean within 18% (3 sd +
//   biases). A single chain's ratio is about (k-1) / chi2(k-1), which is skewed: for
//   k - 1 = 96 the 0.05% and 99.95% quantiles of chi2(96) (57 and 148) give [0.65, 1.69], so
//   each chain must lie in [0.6, 1.7] (k - 1 = 121 at n = 1e6 is narrower).
TEST_CASE("ESS of AR(1) chains matches n (1 - phi) / (1 + phi)") {
  struct Case {
    double phi;
    double geyer_mean_tol, geyer_chain_tol;
  };
  for (const Case c : {Case{0.0, 0.08, 0.15}, Case{0.5, 0.08, 0.15}, Case{0.9, 0.08, 0.15},
                       Case{0.99, 0.20, 0.50}}) {
    CAPTURE(c.phi);
    Ratios geyer, bm;
    if (c.phi < 0.95) {
      run_ar1<256>(c.phi, 100000, 100000, geyer, bm);
    } else {
      run_ar1<2048>(c.phi, 100000, 1000000, geyer, bm);
    }
    std::printf(
        "phi %.2f: Geyer mean ratio %.4f range [%.4f, %.4f] | batch means mean ratio %.4f "
        "range [%.4f, %.4f]\n",
        c.phi, geyer.mean, geyer.lowest, geyer.highest, bm.mean, bm.lowest, bm.highest);
    CHECK_FALSE(geyer.truncated);
    CHECK(std::abs(geyer.mean - 1) < c.geyer_mean_tol);
    CHECK(geyer.worst() < c.geyer_chain_tol);
    CHECK(std::abs(bm.mean - 1) < 0.18);
    CHECK(bm.lowest > 0.6);
    CHECK(bm.highest < 1.7);
  }
}

TEST_CASE("streaming and offline estimators agree on a stored chain") {
  LocalRng rng(77);
  AR1<1> chain(0.9, rng);
  constexpr std::size_t n = 48 * 256;  // 48 complete batches of 256 in BatchMeansESS<64>
  std::vector<double> x(n);
  sgmcmc::GeyerESS<double, 1, 512> geyer;
  sgmcmc::BatchMeansESS<double, 1, 64> bm;
  for (auto& v : x) {
    v = chain.next(rng)[0];
    geyer.push(sgmcmc::Vector<double, 1>(v));
    bm.push(sgmcmc::Vector<double, 1>(v));
  }

  // Autocovariances: the streaming sums against the direct definition.
  double mean = 0;
  for (double v : x) mean += v / double(n);
  for (std::size_t k : {0u, 1u, 7u, 100u, 511u}) {
    double s = 0;
    for (std::size_t t = k; t < n; ++t) s += (x[t] - mean) * (x[t - k] - mean);
    CHECK(geyer.autocovariance(0, k) == doctest::Approx(s / double(n)).epsilon(1e-9).scale(1.0));
  }

  const auto offline = sgmcmc::ess_geyer(x.data(), n);
  const auto streaming = geyer.estimate(0);
  CHECK_FALSE(offline.truncated);
  CHECK_FALSE(streaming.truncated);
  CHECK(streaming.ess == doctest::Approx(offline.ess).epsilon(1e-9));
  CHECK(streaming.tau == doctest::Approx(offline.tau).epsilon(1e-9));

  REQUIRE(bm.batches() == 48);
  REQUIRE(bm.batch_length() == 256);
  const auto bm_offline = sgmcmc::ess_batch_means(x.data(), n, 1, 48);
  CHECK(bm.estimate(0).ess == doctest::Approx(bm_offline.ess).epsilon(1e-9));

  // A window shorter than the positive sequence is flagged, and over-estimates ESS.
  const auto short_window = sgmcmc::ess_geyer(x.data(), n, 1, 8);
  CHECK(short_window.truncated);
  CHECK(short_window.ess > offline.ess);
  sgmcmc::GeyerESS<double, 1, 8> short_streaming;
  for (double v : x) short_streaming.push(sgmcmc::Vector<double, 1>(v));
  CHECK(short_streaming.estimate(0).truncated);
  CHECK(short_streaming.estimate(0).ess == doctest::Approx(short_window.ess).epsilon(1e-9));
}

TEST_CASE("offline estimators read strided storage and reject degenerate chains") {
  LocalRng rng(78);
  AR1<2> chain(0.5, rng);
  constexpr std::size_t n = 20000;
  std::vector<double> rows(2 * n);  // row-major storage of a 2-D chain
  std::vector<double> second(n);
  for (std::size_t t = 0; t < n; ++t) {
    const auto& v = chain.next(rng);
    rows[2 * t] = v[0];
    rows[2 * t + 1] = v[1];
    second[t] = v[1];
  }
  CHECK(sgmcmc::ess_geyer(rows.data() + 1, n, 2).ess ==
        doctest::Approx(sgmcmc::ess_geyer(second.data(), n).ess).epsilon(1e-12));
  CHECK(sgmcmc::ess_batch_means(rows.data() + 1, n, 2, 40).ess ==
        doctest::Approx(sgmcmc::ess_batch_means(second.data(), n, 1, 40).ess).epsilon(1e-12));

  const std::vector<double> constant(100, 3.0);
  CHECK(std::isnan(sgmcmc::ess_geyer(constant.data(), constant.size()).ess));
  CHECK(std::isnan(sgmcmc::ess_batch_means(constant.data(), constant.size()).ess));
  CHECK(std::isnan(sgmcmc::ess_geyer(constant.data(), 3).ess));
  CHECK(std::isnan(sgmcmc::ess_batch_means(constant.data(), 10, 1, 8).ess));
  sgmcmc::GeyerESS<double, 1, 16> g;
  sgmcmc::BatchMeansESS<double, 1, 8> b;
  CHECK(std::isnan(g.estimate(0).ess));
  CHECK(std::isnan(b.estimate(0).ess));
  for (int i = 0; i < 50; ++i) {
    g.push(sgmcmc::Vector<double, 1>(3.0));
    b.push(sgmcmc::Vector<double, 1>(3.0));
  }
  CHECK(std::isnan(g.estimate(0).ess));
  CHECK(std::isnan(b.estimate(0).ess));
}

TEST_CASE("float estimators agree with double ones, also with a large common mean") {
  LocalRng rng(79);
  AR1<1> chain(0.9, rng);
  constexpr std::size_t n = 30000;
  std::vector<double> xd(n);
  std::vector<float> xf(n);
  sgmcmc::GeyerESS<double, 1, 256> gd;
  sgmcmc::GeyerESS<float, 1, 256> gf;
  sgmcmc::GeyerESS<float, 1, 256, double> gfd;
  sgmcmc::BatchMeansESS<float, 1, 64> bf;
  sgmcmc::BatchMeansESS<double, 1, 64> bd;
  for (std::size_t t = 0; t < n; ++t) {
    xd[t] = 1000.0 + chain.next(rng)[0];
    xf[t] = float(xd[t]);
    const sgmcmc::Vector<float, 1> vf(xf[t]);
    gd.push(sgmcmc::Vector<double, 1>(double(xf[t])));
    gf.push(vf);
    gfd.push(vf);
    bf.push(vf);
    bd.push(sgmcmc::Vector<double, 1>(double(xf[t])));
  }
  const double ess = gd.estimate(0).ess;
  CHECK(double(gf.estimate(0).ess) == doctest::Approx(ess).epsilon(0.02));
  CHECK(double(gfd.estimate(0).ess) == doctest::Approx(ess).epsilon(1e-5));
  CHECK(double(sgmcmc::ess_geyer(xf.data(), n).ess) == doctest::Approx(ess).epsilon(0.02));
  CHECK(double(bf.estimate(0).ess) == doctest::Approx(bd.estimate(0).ess).epsilon(0.02));
  CHECK(double(sgmcmc::ess_batch_means(xf.data(), n).ess) ==
        doctest::Approx(sgmcmc::ess_batch_means(xd.data(), n).ess).epsilon(0.02));
}

TEST_CASE("indices outside the window or the dimension give NaN, not a read past the arrays") {
  // GeyerESS keeps lags below min(count, MaxLag) only; autocovariance(d, k) used to read
  // cross_[k * D + d] for any k and d (past the array for k >= MaxLag or d >= D).
  LocalRng rng(80);
  AR1<2> chain(0.5, rng);
  sgmcmc::GeyerESS<double, 2, 8> g;
  sgmcmc::BatchMeansESS<double, 2, 4> b;
  CHECK(std::isnan(g.autocovariance(0, 0)));  // no draws yet
  for (int t = 0; t < 5; ++t) g.push(chain.next(rng));
  CHECK(std::isfinite(g.autocovariance(1, 4)));
  CHECK(std::isnan(g.autocovariance(1, 5)));  // only 5 draws: lags 0..4
  for (int t = 0; t < 100; ++t) {
    const auto& v = chain.next(rng);
    g.push(v);
    b.push(v);
  }
  CHECK(std::isfinite(g.autocovariance(0, 7)));
  CHECK(std::isfinite(g.autocovariance(1, 7)));
  for (const std::size_t k : {std::size_t(8), std::size_t(9), std::size_t(1) << 40}) {
    CHECK(std::isnan(g.autocovariance(0, k)));
  }
  for (const sgmcmc::Index d : {sgmcmc::Index(-1), sgmcmc::Index(2), sgmcmc::Index(1000)}) {
    CAPTURE(d);
    CHECK(std::isnan(g.autocovariance(d, 0)));
    CHECK(std::isnan(g.estimate(d).ess));
    CHECK(std::isnan(b.estimate(d).ess));
  }
  CHECK(std::isfinite(g.estimate(1).ess));
  CHECK(std::isfinite(b.estimate(1).ess));
}
