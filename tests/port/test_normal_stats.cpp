// SPDX-License-Identifier: MIT
// Distribution tests of host::Rng::fill_normal and the core's fill_normal_portable, with negative
// controls showing that the checks reject wrong generators.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "normal_check.hpp"
#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/host/rng.hpp"

namespace {

using sgmcmc::host::Rng;
using sgmcmc::test::independent;
using sgmcmc::test::ks_ok;
using sgmcmc::test::looks_standard_normal;
using sgmcmc::test::moments_ok;
using sgmcmc::test::summarise;
using sgmcmc::test::tail_ok;

#ifndef SGMCMC_NORMAL_DRAWS
#define SGMCMC_NORMAL_DRAWS 1000000  // tests/port/CMakeLists.txt lowers it for emulated runs
#endif
constexpr std::size_t kDraws = SGMCMC_NORMAL_DRAWS;

// Draws at least n values by repeated fixed-size fills, in draw order. Every element is set to NaN
// before each fill, so an element the fill forgets shows up as non-finite.
template <class Scalar, int N, class Fill>
std::vector<double> draw(std::size_t n, Fill fill, bool* all_written) {
  std::vector<double> x;
  x.reserve(n + N);
  Eigen::Matrix<Scalar, N, 1> v;
  *all_written = true;
  while (x.size() < n) {
    v.setConstant(std::numeric_limits<Scalar>::quiet_NaN());
    fill(v);
    for (int i = 0; i < N; ++i) {
      if (!std::isfinite(v[i])) *all_written = false;
      x.push_back(static_cast<double>(v[i]));
    }
  }
  return x;
}

template <class Scalar, int N>
void check_host_fill(std::uint64_t seed) {
  Rng rng(seed);
  bool written = false;
  const auto x = draw<Scalar, N>(
      kDraws, [&](Eigen::Matrix<Scalar, N, 1>& v) { rng.fill_normal(v); }, &written);
  CHECK(written);
  CHECK(looks_standard_normal(x));
}

template <class Scalar, int N>
void check_portable_fill(std::uint64_t seed) {
  Rng rng(seed);
  bool written = false;
  const auto x = draw<Scalar, N>(
      kDraws, [&](Eigen::Matrix<Scalar, N, 1>& v) { sgmcmc::fill_normal_portable(rng, v); },
      &written);
  CHECK(written);
  CHECK(looks_standard_normal(x));
}

}  // namespace

TEST_CASE_TEMPLATE("host fill_normal passes moments, KS and independence for every size", Scalar,
                   float, double) {
  check_host_fill<Scalar, 1>(101);
  check_host_fill<Scalar, 3>(102);
  check_host_fill<Scalar, 8>(103);
  check_host_fill<Scalar, 17>(104);
  check_host_fill<Scalar, 100>(105);
  check_host_fill<Scalar, 128>(106);
}

TEST_CASE_TEMPLATE("core fill_normal_portable passes the same check", Scalar, float, double) {
  check_portable_fill<Scalar, 1>(201);
  check_portable_fill<Scalar, 17>(202);
  check_portable_fill<Scalar, 128>(203);
}

TEST_CASE_TEMPLATE("host fill_normal tail mass beyond 3 and 4 sd", Scalar, float, double) {
  // 4e6 draws: at |z| > 4, p = 6.3e-5, so the count (253 expected) has a relative sd of 6%.
  Rng rng(7);
  std::vector<double> x(4 * kDraws);
  std::vector<Scalar> buf(x.size());
  rng.fill_normal(buf.data(), buf.size());
  double max_abs = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<double>(buf[i]);
    max_abs = std::max(max_abs, std::abs(x[i]));
  }
  CHECK(tail_ok(x, 3.0));
  CHECK(tail_ok(x, 4.0));
  // The documented truncation: |z| <= sqrt(-2 ln u_min), u_min = 2^-32 (float) or 2^-53.
  CHECK(max_abs <= (sizeof(Scalar) == 4 ? 6.67 : 8.58));
}

// The controls need the full draw count to have power; they test the checks, not the platform, so
// the reduced-draw build (test_port_quick) skips them and test_port runs them.
TEST_CASE("negative controls: the checks reject wrong generators" *
          doctest::skip(kDraws < 1000000)) {
  Rng rng(99);
  std::vector<double> normal(kDraws);
  rng.fill_normal(normal.data(), normal.size());
  REQUIRE(looks_standard_normal(normal));  // the control's baseline passes

  SUBCASE("normals with variance 1.05 fail both the moment and the KS check") {
    std::vector<double> x = normal;
    for (double& v : x) v *= std::sqrt(1.05);
    CHECK_FALSE(looks_standard_normal(x));
    const auto s = summarise(x);
    CHECK_FALSE(moments_ok(s));
    CHECK_FALSE(ks_ok(s));
  }
  SUBCASE("uniforms scaled to unit variance fail both the moment and the KS check") {
    std::vector<double> x(kDraws);
    for (double& v : x) v = std::sqrt(3.0) * (2.0 * sgmcmc::uniform_open01<double>(rng) - 1.0);
    CHECK_FALSE(looks_standard_normal(x));
    const auto s = summarise(x);
    CHECK_FALSE(moments_ok(s));
    CHECK_FALSE(ks_ok(s));
  }
  SUBCASE("normals shifted by 0.01 fail the moment check") {
    std::vector<double> x = normal;
    for (double& v : x) v += 0.01;
    CHECK_FALSE(moments_ok(summarise(x)));
  }
  SUBCASE("each normal drawn twice passes moments but fails independence") {
    std::vector<double> x = normal;
    for (std::size_t i = 1; i < x.size(); i += 2) x[i] = x[i - 1];
    CHECK_FALSE(independent(x));
    CHECK_FALSE(looks_standard_normal(x));
    std::vector<double> sorted = x;
    CHECK(moments_ok(summarise(sorted)));
  }
  SUBCASE("values beyond |z| = 2.5 stretched by 10% fail the tail check") {
    std::vector<double> x = normal;
    for (double& v : x) v *= std::abs(v) > 2.5 ? 1.1 : 1.0;
    CHECK_FALSE(tail_ok(x, 3.0));
  }
}
