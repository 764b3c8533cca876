// SPDX-License-Identifier: MIT
// host::Rng: contract, determinism, streams and jumps, and the accuracy of its log, sqrt and
// sin/cos approximations against long-double references.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/host/rng.hpp"

namespace {

using sgmcmc::host::Rng;
namespace hd = sgmcmc::host::detail;

static_assert(sgmcmc::is_rng_v<Rng>);
static_assert(sgmcmc::HasFillNormal<Rng, float, 1>::value);
static_assert(sgmcmc::HasFillNormal<Rng, float, 17>::value);
static_assert(sgmcmc::HasFillNormal<Rng, double, 3>::value);
static_assert(sgmcmc::HasFillNormal<Rng, double, 128>::value);
static_assert(!sgmcmc::HasFillNormal<Rng, int, 4>::value, "only float and double are offered");

template <class Scalar, int N>
bool same_bits(const Eigen::Matrix<Scalar, N, 1>& a, const Eigen::Matrix<Scalar, N, 1>& b) {
  return std::memcmp(a.data(), b.data(), sizeof(Scalar) * N) == 0;
}

// True when a and b give bit-identical words and float and double normals for a while.
bool same_draws(Rng a, Rng b) {
  for (int i = 0; i < 100; ++i) {
    if (a() != b()) return false;
  }
  Eigen::Matrix<float, 17, 1> fa, fb;
  Eigen::Matrix<double, 5, 1> da, db;
  for (int i = 0; i < 50; ++i) {
    a.fill_normal(fa);
    b.fill_normal(fb);
    a.fill_normal(da);
    b.fill_normal(db);
    if (!same_bits(fa, fb) || !same_bits(da, db)) return false;
  }
  return true;
}

bool words_differ(Rng a, Rng b) {
  int equal = 0;
  for (int i = 0; i < 100; ++i) equal += a() == b() ? 1 : 0;
  return equal == 0;
}

bool normals_differ(Rng a, Rng b) {
  Eigen::Matrix<float, 64, 1> fa, fb;
  a.fill_normal(fa);
  b.fill_normal(fb);
  int equal = 0;
  for (int i = 0; i < 64; ++i) equal += fa[i] == fb[i] ? 1 : 0;
  return equal == 0;
}

}  // namespace

TEST_CASE("reference values of the building blocks") {
  std::uint64_t sm = 0;
  CHECK(hd::splitmix64(sm) == 0xe220a8397b1dcdafULL);  // splitmix64 from state 0
  std::uint64_t s0 = 1, s1 = 2, s2 = 3, s3 = 4;
  CHECK(hd::xoshiro_next(s0, s1, s2, s3) == (5ULL << 23) + 1);  // rotl(1 + 4, 23) + 1
}

TEST_CASE("same seed and stream give bit-identical draws; others differ") {
  CHECK(same_draws(Rng(42), Rng(42)));
  CHECK(same_draws(Rng(42, 3), Rng(42, 3)));
  CHECK(words_differ(Rng(42), Rng(43)));
  CHECK(normals_differ(Rng(42), Rng(43)));
  CHECK(words_differ(Rng(42, 0), Rng(42, 1)));
  CHECK(normals_differ(Rng(42, 0), Rng(42, 1)));
  CHECK(normals_differ(Rng(42, 1), Rng(42, 2)));
}

TEST_CASE("jump changes the sequence and equals the next stream") {
  Rng a(42);
  a.jump();
  CHECK(words_differ(a, Rng(42)));
  CHECK(normals_differ(a, Rng(42)));
  CHECK(same_draws(a, Rng(42, 1)));
  a.jump();
  CHECK(same_draws(a, Rng(42, 2)));
}

TEST_CASE("jump discards cached normals") {
  Rng a(5);
  Eigen::Matrix<float, 3, 1> v;
  a.fill_normal(v);  // leaves cached normals
  a.jump();
  // b's lanes take the one step a's took (a float block is one lane step), but b has no cache:
  // a matches b only if the jump dropped the 29 normals a still held.
  Rng b(5, 1);
  float skip[Rng::block];
  b.fill_normal(skip, Rng::block);
  CHECK(same_draws(a, b));
}

TEST_CASE("the normal stream does not depend on how calls split it") {
  Rng a(11), b(11);
  float fa[1000];
  a.fill_normal(fa, 1000);
  float fb[1000];
  std::size_t at = 0;
  for (std::size_t n : {1, 3, 17, 32, 33, 5, 64, 100, 2, 7}) {
    b.fill_normal(fb + at, n);
    at += n;
  }
  b.fill_normal(fb + at, 1000 - at);
  CHECK(std::memcmp(fa, fb, sizeof fa) == 0);

  Rng c(12), d(12);
  Eigen::Matrix<double, 24, 1> whole;
  c.fill_normal(whole);
  Eigen::Matrix<double, 7, 1> part1;
  Eigen::Matrix<double, 17, 1> part2;
  d.fill_normal(part1);
  d.fill_normal(part2);
  CHECK(std::memcmp(whole.data(), part1.data(), sizeof(double) * 7) == 0);
  CHECK(std::memcmp(whole.data() + 7, part2.data(), sizeof(double) * 17) == 0);
}

TEST_CASE("operator() and fill_normal use separate generators") {
  Rng a(8), b(8);
  Eigen::Matrix<double, 9, 1> v;
  for (int i = 0; i < 100; ++i) {
    b.fill_normal(v);
    CHECK(a() == b());
  }
}

TEST_CASE("fill_normal writes exactly N elements, never past the end") {
  struct Guarded {
    float before;
    Eigen::Matrix<float, 5, 1> v;
    float after;
  } g{123.0f, Eigen::Matrix<float, 5, 1>::Zero(), 456.0f};
  Rng r(3);
  for (int i = 0; i < 100; ++i) r.fill_normal(g.v);
  CHECK(g.before == 123.0f);
  CHECK(g.after == 456.0f);
}

TEST_CASE("core dispatch uses the port's fill_normal") {
  Rng a(21), b(21);
  Eigen::Matrix<float, 6, 1> x, y;
  sgmcmc::fill_normal(a, x);
  b.fill_normal(y);
  CHECK(same_bits(x, y));
}

// Accuracy against a reference in a wider type: double for the float kernels (its rounding error,
// ~1e-16, is far below their 1e-7 tolerances) and long double for the double kernels. long double
// is software quad precision on AArch64 (about a hundred times slower than double), which is why
// the float references are not long double. Tolerances are the measured maxima rounded up
// (1-3 ulp); the fill needs ~1e-6 (float) and ~1e-12 (double).
TEST_CASE("log_approx relative error over its domain") {
  double worst_f = 0;
  // Every 61st float from 2^-126 up to 2^64: all exponents, mantissas sampled densely.
  for (std::uint32_t b = 0x00800000U; b < 0x5f800000U; b += 61) {
    float x;
    std::memcpy(&x, &b, 4);
    const double ref = std::log(static_cast<double>(x));
    if (ref == 0) continue;
    worst_f = std::max(worst_f, std::fabs((static_cast<double>(hd::log_approx(x)) - ref) / ref));
  }
  MESSAGE("log_approx(float) max relative error " << worst_f);
  CHECK(worst_f < 3e-7);

  double worst_d = 0;
  Rng r(1);
  for (int i = 0; i < 2000000; ++i) {
    // Random exponent in [-1022, 64) and random mantissa.
    const std::uint64_t w = r();
    const std::uint64_t e = 1 + (w >> 53) % 1086;
    const std::uint64_t b = (e << 52) | (w & 0x000fffffffffffffULL);
    double x;
    std::memcpy(&x, &b, 8);
    const long double ref = std::log(static_cast<long double>(x));
    if (ref == 0) continue;
    const long double err = std::fabs((static_cast<long double>(hd::log_approx(x)) - ref) / ref);
    worst_d = std::max(worst_d, static_cast<double>(err));
  }
  MESSAGE("log_approx(double) max relative error " << worst_d);
  CHECK(worst_d < 4e-16);
}

TEST_CASE("sqrt_approx relative error") {
  double worst_f = 0, worst_d = 0;
  for (int i = 1; i <= 2000000; ++i) {
    const double y = 1e-8 * std::pow(1e16, i / 2000000.0);  // log-spaced over [1e-8, 1e8]
    const auto yf = static_cast<float>(y);
    const double rf = std::sqrt(static_cast<double>(yf));
    const long double rd = std::sqrt(static_cast<long double>(y));
    worst_f = std::max(worst_f, std::fabs(hd::sqrt_approx(yf) - rf) / rf);
    worst_d = std::max(worst_d, static_cast<double>(std::fabs(hd::sqrt_approx(y) - rd) / rd));
  }
  MESSAGE("sqrt_approx max relative error float " << worst_f << ", double " << worst_d);
  CHECK(worst_f < 1.5e-7);
  CHECK(worst_d < 3e-16);
  CHECK(hd::sqrt_approx(0.0f) == 0.0f);
  CHECK(hd::sqrt_approx(0.0) == 0.0);
}

TEST_CASE("sincos_kernel absolute error on [-pi/4, pi/4]") {
  const long double quarter = 0.785398163397448309615660845819875721L;
  double worst_f = 0, worst_d = 0;
  for (int i = -1000000; i <= 1000000; ++i) {
    const double a = static_cast<double>(quarter * i / 1000000);
    const auto af = static_cast<float>(a);
    float cf, sf;
    double cd, sd;
    hd::sincos_kernel(af, cf, sf);
    hd::sincos_kernel(a, cd, sd);
    const double lf = af;
    const long double ld = a;
    worst_f = std::max({worst_f, std::fabs(cf - std::cos(lf)), std::fabs(sf - std::sin(lf))});
    worst_d = std::max({worst_d, static_cast<double>(std::fabs(cd - std::cos(ld))),
                        static_cast<double>(std::fabs(sd - std::sin(ld)))});
  }
  MESSAGE("sincos_kernel max absolute error float " << worst_f << ", double " << worst_d);
  CHECK(worst_f < 1.2e-7);
  CHECK(worst_d < 2.3e-16);
}

TEST_CASE("normal_pair matches Box-Muller evaluated in double (float) and long double (double)") {
  const long double half_pi = 1.570796326794896619231321691639751442L;
  const double half_pi_d = 1.570796326794896619231321691639751442;
  Rng r(77);
  double worst_f = 0, worst_d = 0;
  for (int i = 0; i < 1000000; ++i) {
    const std::uint64_t w1 = r(), w2 = r();
    // Float: the same bit layout as detail::normal_pair, then exact maths.
    const auto lo = static_cast<std::uint32_t>(w1);
    const auto hi = static_cast<std::uint32_t>(w1 >> 32);
    const float u1 =
        static_cast<float>(static_cast<std::int32_t>(lo >> 1)) * 4.656612873077393e-10f +
        2.3283064365386963e-10f;
    const double frac_f = static_cast<double>((hi >> 7) & 0x007fffffU) / 8388608.0;
    const double th_f = (hi >> 30) * half_pi_d + (frac_f - 0.5) * half_pi_d;
    const double r_f = std::sqrt(-2.0 * std::log(static_cast<double>(u1)));
    float z0, z1;
    hd::normal_pair(lo, hi, z0, z1);
    worst_f = std::max(
        {worst_f, std::fabs(z0 - r_f * std::cos(th_f)), std::fabs(z1 - r_f * std::sin(th_f))});
    // Double.
    const long double u1d = (2.0L * static_cast<long double>(w1 >> 12) + 1) / 9007199254740992.0L;
    const long double frac_d =
        static_cast<long double>((w2 >> 10) & 0x000fffffffffffffULL) / std::ldexp(1.0L, 52);
    const long double th_d = (w2 >> 62) * half_pi + (frac_d - 0.5L) * half_pi;
    const long double r_d = std::sqrt(-2.0L * std::log(u1d));
    double d0, d1;
    hd::normal_pair(w1, w2, d0, d1);
    worst_d = std::max({worst_d, static_cast<double>(std::fabs(d0 - r_d * std::cos(th_d))),
                        static_cast<double>(std::fabs(d1 - r_d * std::sin(th_d)))});
  }
  MESSAGE("normal_pair max absolute error float " << worst_f << ", double " << worst_d);
  CHECK(worst_f < 1e-6);
  CHECK(worst_d < 1e-14);
}
