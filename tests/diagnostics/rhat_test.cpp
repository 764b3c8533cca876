// SPDX-License-Identifier: MIT
// Split R-hat: the BDA3 formula on stored chains, ~1 for agreeing chains, > 1.1 for shifted
// means or drift (negative controls), float and double.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "ar1.hpp"
#include "local_rng.hpp"
#include "sgmcmc/diagnostics/rhat.hpp"

using sgmcmc_test::AR1;
using sgmcmc_test::LocalRng;

namespace {

// Split R-hat of stored 1-D chains, computed directly from BDA3 §11.4 with two passes.
double reference_split_rhat(const std::vector<std::vector<double>>& chains) {
  std::vector<std::vector<double>> seqs;
  for (const auto& c : chains) {
    const std::size_t h = c.size() / 2;
    seqs.emplace_back(c.begin(), c.begin() + std::ptrdiff_t(h));
    seqs.emplace_back(c.begin() + std::ptrdiff_t(h), c.begin() + std::ptrdiff_t(2 * h));
  }
  const double m = double(seqs.size());
  const double n = double(seqs[0].size());
  std::vector<double> means, vars;
  for (const auto& s : seqs) {
    double mu = 0;
    for (double v : s) mu += v / n;
    double ss = 0;
    for (double v : s) ss += (v - mu) * (v - mu);
    means.push_back(mu);
    vars.push_back(ss / (n - 1));
  }
  double grand = 0;
  for (double mu : means) grand += mu / m;
  double b = 0;
  for (double mu : means) b += n * (mu - grand) * (mu - grand) / (m - 1);
  double w = 0;
  for (double v : vars) w += v / m;
  return std::sqrt(((n - 1) / n * w + b / n) / w);
}

template <int Chains>
sgmcmc::SplitRhat<double, 1, Chains> run(double phi, std::size_t n, const double (&shift)[Chains],
                                         std::uint64_t seed,
                                         std::vector<std::vector<double>>* store = nullptr) {
  sgmcmc::SplitRhat<double, 1, Chains> r(n);
  LocalRng rng(seed);
  for (int c = 0; c < Chains; ++c) {
    AR1<1> chain(phi, rng);
    if (store != nullptr) store->emplace_back();
    for (std::size_t t = 0; t < n; ++t) {
      const double v = chain.next(rng)[0] + shift[c];
      r.push(std::size_t(c), sgmcmc::Vector<double, 1>(v));
      if (store != nullptr) store->back().push_back(v);
    }
  }
  return r;
}

}  // namespace

TEST_CASE("split R-hat equals the BDA3 formula evaluated on the stored chains") {
  std::vector<std::vector<double>> chains;
  const double shift[3] = {0.0, 0.1, -0.05};
  const auto r = run<3>(0.5, 1001, shift, 11, &chains);  // odd length: the last draw is ignored
  CHECK(r.complete());
  CHECK(r.half(0).count() == 500);
  CHECK(r.half(5).count() == 500);
  CHECK(r.half(6).count() == 0);  // past the 2 x 3 halves: an empty accumulator, not a bad read
  CHECK(r.half(std::size_t(1) << 40).count() == 0);
  CHECK(r.rhat()[0] == doctest::Approx(reference_split_rhat(chains)).epsilon(1e-12));
}

TEST_CASE("R-hat is below 1.01 for chains of the same AR(1)") {
  // For 4 chains of 2e4 draws (8 halves of 1e4), B/h ~ tau / h = 1.9e-3 at phi = 0.9, so R-hat
  // - 1 is of order 1e-3; 1.01 leaves a wide margin.
  for (double phi : {0.0, 0.5, 0.9}) {
    CAPTURE(phi);
    const double shift[4] = {0, 0, 0, 0};
    const auto r = run<4>(phi, 20000, shift, 12, nullptr);
    CHECK(r.complete());
    CHECK(r.rhat()[0] < 1.01);
    CHECK(r.rhat()[0] > 0.99);
  }
}

TEST_CASE("negative controls: shifted means and within-chain drift give R-hat > 1.1") {
  // Means 0, 0.5, 1, 1.5 with unit variance: B/h ~ 0.4, W ~ 1, R-hat ~ sqrt(1.4) ~ 1.18.
  const double shift[4] = {0.0, 0.5, 1.0, 1.5};
  CHECK(run<4>(0.5, 20000, shift, 13, nullptr).rhat()[0] > 1.1);

  // One chain whose second half sits 1 higher: only the split can see it.
  sgmcmc::SplitRhat<double, 1, 1> single(20000);
  LocalRng rng(14);
  AR1<1> chain(0.5, rng);
  for (int t = 0; t < 20000; ++t) {
    single.push(0, sgmcmc::Vector<double, 1>(chain.next(rng)[0] + (t >= 10000 ? 1.0 : 0.0)));
  }
  CHECK(single.rhat()[0] > 1.1);
}

TEST_CASE("split R-hat in float, several coordinates, partial data and bad input") {
  sgmcmc::SplitRhat<float, 2, 2> r(1000);
  CHECK(std::isnan(r.rhat()[0]));
  LocalRng rng(15);
  AR1<2> a(0.5, rng), b(0.5, rng);
  for (int t = 0; t < 1000; ++t) {
    sgmcmc::Vector<float, 2> va = a.next(rng).cast<float>();
    sgmcmc::Vector<float, 2> vb = b.next(rng).cast<float>();
    vb[1] += 3.0f;  // second coordinate: chains disagree
    r.push(0, va);
    r.push(1, vb);
    r.push(7, vb);  // not a chain: ignored
    if (t == 400) CHECK_FALSE(r.complete());
  }
  r.push(0, sgmcmc::Vector<float, 2>(1e6f, 1e6f));  // beyond the planned length: ignored
  CHECK(r.complete());
  const auto v = r.rhat();
  CHECK(v[0] < 1.05f);
  CHECK(v[1] > 1.5f);
  r.reset();
  CHECK(std::isnan(r.rhat()[0]));
  CHECK(std::isnan(sgmcmc::rhat_from_sequences<float, 2>(nullptr, 4)[0]));
}
