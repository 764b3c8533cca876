// Step-size schedules (schedule/schedules.hpp): each reproduces its paper's formula, computed
// here independently in long double, refuses invalid parameters, and sets no errno at the edges
// of its valid ranges.
#include <doctest/doctest.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <limits>

#include "sgmcmc/schedule/schedules.hpp"

namespace {

using sgmcmc::ConstantSchedule;
using sgmcmc::CyclicalSchedule;
using sgmcmc::PolynomialSchedule;

constexpr std::uint64_t kMaxT = std::numeric_limits<std::uint64_t>::max();
const std::uint64_t kSteps[] = {0,          1,          2,          3,         10,
                                99,         1000,       123457,     1000000,   (1ULL << 31) + 7,
                                1ULL << 40, 1ULL << 53, 1ULL << 63, kMaxT - 1, kMaxT};

template <class S>
constexpr S eps() {
  return std::numeric_limits<S>::epsilon();
}

// Relative error of x against a long double reference.
template <class S>
long double rel_err(S x, long double ref) {
  return std::fabs(static_cast<long double>(x) - ref) / std::fabs(ref);
}

}  // namespace

TEST_CASE_TEMPLATE("ConstantSchedule returns h and checks it", S, float, double) {
  const ConstantSchedule<S> c{S(0.25)};
  REQUIRE(c.valid());
  for (std::uint64_t t : kSteps) CHECK(c(t) == S(0.25));
  CHECK_FALSE(ConstantSchedule<S>{S(0)}.valid());
  CHECK_FALSE(ConstantSchedule<S>{S(-1)}.valid());
  CHECK_FALSE(ConstantSchedule<S>{std::numeric_limits<S>::quiet_NaN()}.valid());
  CHECK_FALSE(ConstantSchedule<S>{std::numeric_limits<S>::infinity()}.valid());
}

// h_t = a (b + t)^(−γ), Welling & Teh (2011). Float: b + t rounds (2^−24), std::pow adds a few
// ulp; the bound 16 eps covers γ · 2^−24 + pow + the product with margin. Double alike.
TEST_CASE_TEMPLATE("PolynomialSchedule reproduces a (b + t)^(-gamma)", S, float, double) {
  const S tiny = std::numeric_limits<S>::min();
  const PolynomialSchedule<S> cases[] = {
      {S(0.01), S(1), S(0.55)},
      {S(3e-4), S(100), S(1)},
      {S(1), S(10), S(0.5000001)},
      {S(2), tiny, S(1)},                                  // b at its smallest
      {S(1e-3), PolynomialSchedule<S>::max_offset, S(1)},  // b at its largest
      {S(5), S(0.5), S(0.75)},
  };
  for (const auto& p : cases) {
    REQUIRE(p.valid());
    for (std::uint64_t t : kSteps) {
      const long double x = static_cast<long double>(p.offset) + static_cast<long double>(t);
      const long double ref =
          static_cast<long double>(p.scale) * std::pow(x, -static_cast<long double>(p.exponent));
      CAPTURE(t);
      CAPTURE(p.offset);
      CHECK(rel_err(p(t), ref) <= 16 * eps<S>());
    }
  }
  // Decreasing in t.
  const PolynomialSchedule<S> p{S(0.01), S(1), S(0.55)};
  for (std::uint64_t t = 0; t < 1000; ++t) CHECK(p(t + 1) < p(t));
}

TEST_CASE_TEMPLATE("PolynomialSchedule refuses invalid parameters", S, float, double) {
  const S nan = std::numeric_limits<S>::quiet_NaN();
  const S inf = std::numeric_limits<S>::infinity();
  const S max_b = PolynomialSchedule<S>::max_offset;
  const S sub = std::numeric_limits<S>::denorm_min();
  const PolynomialSchedule<S> bad[] = {
      {S(0), S(1), S(0.55)},
      {S(-1), S(1), S(0.55)},
      {nan, S(1), S(0.55)},
      {inf, S(1), S(0.55)},
      {S(1), S(0), S(0.55)},
      {S(1), S(-1), S(0.55)},
      {S(1), sub, S(0.55)},
      {S(1), max_b * S(2), S(0.55)},
      {S(1), inf, S(0.55)},
      {S(1), nan, S(0.55)},
      {S(1), S(1), S(0.5)},
      {S(1), S(1), S(0.3)},
      {S(1), S(1), S(1.0001)},
      {S(1), S(1), nan},
      {S(1), S(1), S(0)},
      // h_0 = a b^(−γ) overflows
      {std::numeric_limits<S>::max() / S(4), S(1e-3), S(1)},
      // h at t = 2^64 − 1 underflows to 0
      {std::numeric_limits<S>::denorm_min(), S(1e6), S(1)},
  };
  for (const auto& p : bad) {
    CAPTURE(p.scale);
    CAPTURE(p.offset);
    CAPTURE(p.exponent);
    CHECK_FALSE(p.valid());
  }
}

// h_t = (h₀/2)(cos(π mod(t, K)/K) + 1), K = ⌈T/M⌉: Zhang et al. (2020), Eq. (1), evaluated here in
// long double. The library's sin² form is the same number; the bound is 8 eps relative plus the
// reference's own absolute error (a few long-double ulp of h₀) near the end of a cycle.
TEST_CASE_TEMPLATE("CyclicalSchedule reproduces the cSG-MCMC cosine", S, float, double) {
  // Each case with the number of exploration steps per cycle, ⌈βK⌉, worked out by hand.
  struct Case {
    CyclicalSchedule<S> c;
    std::uint64_t exploring;
  };
  const Case cases[] = {
      {{S(0.1), 1000, 4, S(0.8)}, 200},  // K = 250
      {{S(0.5), 1001, 4, S(0.5)}, 126},  // K = 251 (ceiling); βK = 125.5
      {{S(2e-3), 50000, 1, S(0)}, 0},    // one cycle, always sampling
      {{S(1), 7, 7, S(1)}, 1},           // K = 1: h_t = h₀, always exploring
      {{S(1e-2), 3, 2, S(0.25)}, 1},     // K = 2; βK = 0.5
      {{S(1e-2), 300, 3, S(0.37)}, 37},  // K = 100
  };
  const long double pi = 3.141592653589793238462643383279502884L;
  for (const auto& [c, exploring] : cases) {
    REQUIRE(c.valid());
    const std::uint64_t k = c.cycle_length();
    CHECK(k == (c.total_steps + c.cycles - 1) / c.cycles);
    for (std::uint64_t t = 0; t < 3 * k + 5; ++t) {
      const long double r = static_cast<long double>(t % k) / static_cast<long double>(k);
      const long double ref = static_cast<long double>(c.initial) / 2 * (std::cos(pi * r) + 1);
      const long double tol =
          8 * eps<S>() * ref + 8 * std::numeric_limits<long double>::epsilon() * c.initial;
      CAPTURE(t);
      CHECK(std::fabs(static_cast<long double>(c(t)) - ref) <= tol);
      CHECK(c(t) > S(0));
      CHECK(c.cycle(t) == t / k);
      // Zhang et al.'s stages: exploration while r < β, sampling after.
      CHECK(c.sampling(t) == (t % k >= exploring));
    }
  }
  // Each cycle starts at h₀ and decreases within the cycle.
  const CyclicalSchedule<S> c{S(0.1), 1000, 4, S(0.8)};
  for (std::uint64_t t = 0; t < 1000; ++t) {
    if (t % 250 == 0) {
      CHECK(c(t) == S(0.1));
    } else {
      CHECK(c(t) < c(t - 1));
    }
  }
  // β = 0.8 over K = 250: steps 200..249 of each cycle sample.
  int sampling = 0;
  for (std::uint64_t t = 0; t < 250; ++t) sampling += c.sampling(t) ? 1 : 0;
  CHECK(sampling == 50);
  CHECK_FALSE(c.sampling(199));
  CHECK(c.sampling(200));
}

TEST_CASE_TEMPLATE("CyclicalSchedule refuses invalid parameters", S, float, double) {
  const S nan = std::numeric_limits<S>::quiet_NaN();
  const CyclicalSchedule<S> bad[] = {
      {S(0), 100, 2, S(0.5)},
      {S(-1), 100, 2, S(0.5)},
      {nan, 100, 2, S(0.5)},
      {std::numeric_limits<S>::infinity(), 100, 2, S(0.5)},
      {S(1), 0, 1, S(0.5)},
      {S(1), 100, 0, S(0.5)},
      {S(1), 100, 101, S(0.5)},
      {S(1), 100, 2, S(-0.1)},
      {S(1), 100, 2, S(1.1)},
      {S(1), 100, 2, nan},
      // the last step of a cycle of 2^63 steps, h₀ sin²(π/2^64), underflows to 0
      {std::numeric_limits<S>::min(), kMaxT, 2, S(0.5)},
  };
  for (const auto& c : bad) {
    CAPTURE(c.initial);
    CAPTURE(c.total_steps);
    CAPTURE(c.cycles);
    CHECK_FALSE(c.valid());
  }
}

// The edges of the valid ranges call std::pow and std::sin at their extremes: errno stays 0.
TEST_CASE_TEMPLATE("schedules set no errno at the edges of their ranges", S, float, double) {
  const S tiny = std::numeric_limits<S>::min();
  const PolynomialSchedule<S> low{S(1), tiny, S(1)};
  const PolynomialSchedule<S> high{S(1), PolynomialSchedule<S>::max_offset, S(1)};
  const PolynomialSchedule<S> flat{S(1), PolynomialSchedule<S>::max_offset, S(0.5000001)};
  const CyclicalSchedule<S> longest{S(1), kMaxT, 1, S(0.5)};
  REQUIRE(low.valid());
  REQUIRE(high.valid());
  REQUIRE(flat.valid());
  REQUIRE(longest.valid());
  errno = 0;
  volatile S sink = 0;
  for (std::uint64_t t : kSteps) {
    sink = sink + low(t) + high(t) + flat(t) + longest(t) + longest(kMaxT - 1 - t);
  }
  CHECK(errno == 0);
  CHECK(std::isfinite(static_cast<double>(sink)));
}
