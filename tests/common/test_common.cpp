// Host helpers behind the demo and experiments (src/common): quadrature against MATH.md §5.1's
// normalisers, histogram binning, cell masses, the KL protocol of MATH.md §5.3, argv reading.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "common/cli.hpp"
#include "common/histogram.hpp"
#include "common/quadrature.hpp"

using namespace sgmcmc::common;

TEST_CASE("Gauss–Legendre with n nodes integrates degree 2n−1 exactly, and not 2n") {
  for (int n : {1, 2, 5, 8, 16}) {
    GaussLegendre rule(n);
    double wsum = 0;
    for (double w : rule.weights()) wsum += w;
    CHECK(wsum == doctest::Approx(2.0).epsilon(1e-14));
    const int k = 2 * n - 1;
    // ∫_0^1 x^k dx = 1/(k+1)
    CHECK(rule.integrate([k](double x) { return std::pow(x, k); }, 0.0, 1.0) ==
          doctest::Approx(1.0 / (k + 1)).epsilon(1e-13));
    // Negative control: degree 2n is not integrated exactly (the error, of order 4^(−2n), is
    // resolvable in double only for small n).
    if (n > 5) continue;
    const double err =
        rule.integrate([n](double x) { return std::pow(x, 2 * n); }, 0.0, 1.0) - 1.0 / (2 * n + 1);
    CHECK(std::abs(err) > 1e-12);
  }
}

TEST_CASE("composite quadrature reproduces the normalisers of MATH.md §5.1") {
  GaussLegendre rule(8);
  const double z_well = rule.integrate_composite(
      [](double t) { return std::exp(-(t * t * t * t - 2 * t * t)); }, -6.0, 6.0, 120);
  CHECK(z_well == doctest::Approx(5.36516023783).epsilon(1e-10));
  const double z_banana =
      rule.integrate2([](double, double) { return 0.0; }, 0, 1, 0, 1);  // sanity: zero integrand
  CHECK(z_banana == 0.0);
  double z2 = 0;
  for (int i = 0; i < 60; ++i) {
    for (int j = 0; j < 60; ++j) {
      const double a0 = -6 + 0.2 * i, a1 = -4 + 0.2 * j;
      z2 += rule.integrate2(
          [](double x, double y) {
            const double w = 4 * (y + 1.2) - x * x;
            return std::exp(-(x * x * x * x / 10 + w * w / 2));
          },
          a0, a0 + 0.2, a1, a1 + 0.2);
    }
  }
  CHECK(z2 == doctest::Approx(2.02013792639).epsilon(1e-8));
}

TEST_CASE("histogram bins, the outside cell and non-finite values") {
  Histogram h(Axis{-3.0, 3.0, 60});
  h.add(-3.0);                                      // first bin
  h.add(2.95);                                      // last bin
  h.add(3.0);                                       // outside (right edge excluded)
  h.add(-7.0);                                      // outside
  h.add(std::numeric_limits<double>::quiet_NaN());  // outside
  CHECK(h.counts()[0] == 1);
  CHECK(h.counts()[59] == 1);
  CHECK(h.counts()[h.outside_cell()] == 3);
  CHECK(h.total() == 5);
}

TEST_CASE("KL is zero for a sample matching the cell masses and grows with a shifted law") {
  const auto normal = [](double t) { return std::exp(-t * t / 2); };
  const double z = std::sqrt(2 * M_PI);
  Histogram h(Axis{-3.0, 3.0, 60});
  const auto p = cell_masses_1d(h, normal, z);
  double total = 0;
  for (double v : p) total += v;
  CHECK(total == doctest::Approx(1.0).epsilon(1e-12));
  CHECK(p.back() == doctest::Approx(0.0026997960632601866).epsilon(1e-9));  // P(|Z| >= 3)
  // A "sample" with counts exactly proportional to p: KL = 0.
  Histogram exact(Axis{-3.0, 3.0, 60});
  for (std::size_t i = 0; i + 1 < p.size(); ++i) {
    for (int k = 0; k < static_cast<int>(std::lround(p[i] * 1e6)); ++k)
      exact.add(exact.x_axis().center(int(i)));
  }
  for (int k = 0; k < static_cast<int>(std::lround(p.back() * 1e6)); ++k) exact.add(10.0);
  CHECK(kl_true_vs_sample(p, exact) < 1e-6);
  // Negative control: the same counts shifted by one bin (0.1) give a clearly positive KL
  // (for N(0,1) shifted by δ the continuous KL is δ²/2 = 0.005).
  Histogram shifted(Axis{-3.0, 3.0, 60});
  for (std::size_t i = 0; i + 1 < p.size(); ++i) {
    for (int k = 0; k < static_cast<int>(std::lround(p[i] * 1e6)); ++k)
      shifted.add(shifted.x_axis().center(int(i)) + 0.1);
  }
  CHECK(kl_true_vs_sample(p, shifted) > 0.003);
}

TEST_CASE("Args reads flags, text and strict numbers, and stops on the first bad argument") {
  auto run = [](std::vector<std::string> words, double& x, std::uint64_t& n, std::string& out) {
    std::vector<char*> argv;
    static char program[] = "prog";
    argv.push_back(program);
    for (auto& w : words) argv.push_back(w.data());
    sgmcmc::common::Args args(static_cast<int>(argv.size()), argv.data(), "prog", "usage\n");
    bool quick = false;
    while (args.next()) {
      if (args.is("--quick")) {
        quick = true;
      } else if (!args.text("--out", out) && !args.number("--x", x, 0.0) &&
                 !args.count("--n", n, 1)) {
        args.unknown();
      }
    }
    return std::make_pair(args.status(), quick);
  };
  double x = -1;
  std::uint64_t n = 0;
  std::string out;
  CHECK(run({"--quick", "--out", "d", "--x", "2.5", "--n", "7"}, x, n, out) ==
        std::make_pair(0, true));
  CHECK(x == 2.5);
  CHECK(n == 7);
  CHECK(out == "d");
  // Every malformed value, a missing value and an unknown option give status 2.
  for (const auto& bad : std::vector<std::vector<std::string>>{{"--x", "1e999"},
                                                               {"--x", "-1"},
                                                               {"--x", "2.5abc"},
                                                               {"--x", "nan"},
                                                               {"--n", "0"},
                                                               {"--n", "-3"},
                                                               {"--n", "+3"},
                                                               {"--n", "3.0"},
                                                               {"--out"},
                                                               {"--what"}}) {
    CHECK(run(bad, x, n, out).first == 2);
  }
  CHECK(run({"--help", "--what"}, x, n, out).first == 1);  // help stops before --what
}
