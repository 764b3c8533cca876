// SPDX-License-Identifier: MIT
// Host tests of core/math.hpp: accuracy in ulp (float over a strided sweep of every bit pattern
// against double, double over random arguments against long double), special values, errno
// untouched (with glibc's expf as the negative control), and the Box-Muller pair against exact
// Box-Muller on the same bits.
// SGMCMC_MATH_EXHAUSTIVE=1 sweeps every float (minutes); the default stride is 61.
#include <doctest/doctest.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "../math_probe.hpp"
#include "sgmcmc/core/math.hpp"

namespace {

namespace m = sgmcmc::detail;

template <class S>
constexpr int kDigits = std::numeric_limits<S>::digits;

/// Error of got against the exact ref in units of the last place of S at ref (subnormal spacing
/// below the normal range). 0 for matching infinities and for NaN against NaN.
template <class S>
double ulp_error(S got, long double ref) {
  if (std::isnan(ref)) return std::isnan(got) ? 0.0 : 1e30;
  if (std::isnan(got)) return 1e30;
  // Round the reference to S's range first: an exact value beyond max rounds to inf.
  const long double max = std::numeric_limits<S>::max();
  const long double half_ulp_max =
      std::ldexp(1.0L, std::numeric_limits<S>::max_exponent - kDigits<S> - 1);
  if (std::isinf(ref) || std::fabs(ref) >= max + half_ulp_max) {
    const bool same = std::isinf(got) && ((got > 0) == (ref > 0));
    return same ? 0.0 : 1e30;
  }
  if (std::isinf(got)) return 1e30;
  int e = 0;
  std::frexp(ref, &e);                                     // |ref| in [2^(e-1), 2^e)
  const int min_e = std::numeric_limits<S>::min_exponent;  // normal range starts at 2^(min_e-1)
  if (e < min_e) e = min_e;
  const long double ulp = std::ldexp(1.0L, e - kDigits<S>);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - ref) / ulp);
}

/// Largest error over a sweep, with the argument where it occurs.
struct Worst {
  double ulp = 0;
  double at = 0;
  long count = 0;
  template <class S>
  void add(S x, S got, long double ref) {
    const double e = ulp_error(got, ref);
    if (e > ulp) {
      ulp = e;
      at = static_cast<double>(x);
    }
    ++count;
  }
};

std::uint64_t stride() {
  const char* env = std::getenv("SGMCMC_MATH_EXHAUSTIVE");
  return (env != nullptr && env[0] == '1') ? 1u : 61u;
}

/// Every stride-th float bit pattern (both signs), f applied, compared with ref.
template <class F, class R>
Worst sweep_float(F f, R ref) {
  Worst w;
  const std::uint64_t step = stride();
  for (std::uint64_t b = 0; b <= 0xffffffffu; b += step) {
    const float x = m::bit_cast<float>(static_cast<std::uint32_t>(b));
    if (std::isnan(x)) continue;
    w.add(x, f(x), ref(static_cast<long double>(x)));
  }
  return w;
}

/// splitmix64: the test's own word source.
std::uint64_t next_word(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15u);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}

/// n doubles spread over [lo, hi] (uniform in value), f compared with ref.
template <class F, class R>
Worst sweep_double(double lo, double hi, F f, R ref, int n = 1000000) {
  Worst w;
  std::uint64_t s = 12345;
  for (int i = 0; i < n; ++i) {
    const double u = static_cast<double>(next_word(s) >> 11) * 0x1p-53;
    const double x = lo + (hi - lo) * u;
    w.add(x, f(x), ref(static_cast<long double>(x)));
  }
  return w;
}

/// n doubles with random bit patterns of both signs (every exponent equally likely).
template <class F, class R>
Worst sweep_double_bits(F f, R ref, int n = 1000000) {
  Worst w;
  std::uint64_t s = 777;
  for (int i = 0; i < n; ++i) {
    const double x = m::bit_cast<double>(next_word(s));
    if (std::isnan(x)) continue;
    w.add(x, f(x), ref(static_cast<long double>(x)));
  }
  return w;
}

void report(const char* name, const Worst& w) {
  std::printf("%-14s max error %.3f ulp at %.9g (%ld arguments)\n", name, w.ulp, w.at, w.count);
}

// Bounds: the measured maxima (printed by the test) rounded up to the next 0.5 ulp.
// The float sweep's reference is glibc's double function (error below 1e-16 relative, 2^-29 of a
// float ulp): as good as long double here, and five times faster, which makes the exhaustive run
// (SGMCMC_MATH_EXHAUSTIVE=1) practical.
TEST_CASE("float accuracy against double, strided sweep over every bit pattern") {
  const Worst exp = sweep_float([](float x) { return m::exp(x); },
                                [](long double x) { return std::exp(static_cast<double>(x)); });
  const Worst expm1 = sweep_float([](float x) { return m::expm1(x); },
                                  [](long double x) { return std::expm1(static_cast<double>(x)); });
  const Worst log = sweep_float([](float x) { return m::log(x); },
                                [](long double x) { return std::log(static_cast<double>(x)); });
  const Worst log1p = sweep_float([](float x) { return m::log1p(x); },
                                  [](long double x) { return std::log1p(static_cast<double>(x)); });
  const Worst tanh = sweep_float([](float x) { return m::tanh(x); },
                                 [](long double x) { return std::tanh(static_cast<double>(x)); });
  const Worst sqrt = sweep_float([](float x) { return m::sqrt(x); },
                                 [](long double x) { return std::sqrt(static_cast<double>(x)); });
  report("float exp", exp);
  report("float expm1", expm1);
  report("float log", log);
  report("float log1p", log1p);
  report("float tanh", tanh);
  report("float sqrt", sqrt);
  CHECK(exp.ulp <= 1.0);
#if SGMCMC_FLOAT_EXP_IN_DOUBLE
  // Computed in double (relative error 2^-34.2 before the one rounding to float), so within
  // 0.5 + 2^-10 ulp; the float kernel, which the Cortex-M4F runs, is tested by the same source
  // built with SGMCMC_FLOAT_EXP_IN_DOUBLE=0 (ctest test_math_float_kernel), to the bound above.
  CHECK(exp.ulp <= 0.501);
#endif
  CHECK(expm1.ulp <= 1.5);
  CHECK(log.ulp <= 1.0);
  CHECK(log1p.ulp <= 1.0);
  CHECK(tanh.ulp <= 1.5);
  CHECK(sqrt.ulp <= 0.5);
}

TEST_CASE("double accuracy against long double, random arguments") {
  auto dexp = [](double x) { return m::exp(x); };
  auto rexp = [](long double x) { return std::exp(x); };
  auto dexpm1 = [](double x) { return m::expm1(x); };
  auto rexpm1 = [](long double x) { return std::expm1(x); };
  auto dlog = [](double x) { return m::log(x); };
  auto rlog = [](long double x) { return std::log(x); };
  auto dlog1p = [](double x) { return m::log1p(x); };
  auto rlog1p = [](long double x) { return std::log1p(x); };
  auto dtanh = [](double x) { return m::tanh(x); };
  auto rtanh = [](long double x) { return std::tanh(x); };
  const Worst exp = sweep_double(-745.5, 709.9, dexp, rexp);
  const Worst exp_small = sweep_double(-1.0, 1.0, dexp, rexp);
  const Worst expm1 = sweep_double(-40.0, 709.0, dexpm1, rexpm1);
  const Worst expm1_small = sweep_double(-1.0, 1.0, dexpm1, rexpm1);
  const Worst log = sweep_double_bits(dlog, rlog);
  const Worst log_near1 = sweep_double(0.5, 2.0, dlog, rlog);
  const Worst log1p = sweep_double_bits(dlog1p, rlog1p);
  const Worst log1p_small = sweep_double(-0.5, 1.0, dlog1p, rlog1p);
  const Worst tanh = sweep_double(-25.0, 25.0, dtanh, rtanh);
  const Worst tanh_small = sweep_double(-0.5, 0.5, dtanh, rtanh);
  report("double exp", exp);
  report("double exp[-1,1]", exp_small);
  report("double expm1", expm1);
  report("double expm1[-1,1]", expm1_small);
  report("double log", log);
  report("double log[.5,2]", log_near1);
  report("double log1p", log1p);
  report("double log1p[-.5,1]", log1p_small);
  report("double tanh", tanh);
  report("double tanh[-.5,.5]", tanh_small);
  for (const Worst* w : {&exp, &exp_small, &log, &log_near1, &log1p, &log1p_small}) {
    CHECK(w->ulp <= 1.0);
  }
  for (const Worst* w : {&expm1, &expm1_small}) CHECK(w->ulp <= 1.5);
  for (const Worst* w : {&tanh, &tanh_small}) CHECK(w->ulp <= 1.5);
}

TEST_CASE("pow for x >= 0: error within 1 + 3 |y ln x| ulp") {
  // e^(y ln x) turns the absolute error of y ln x (ln x's error, under 1 ulp, and the product's
  // rounding, both relative to y ln x) into a relative error of the result: at most
  // (2 + 1) |y ln x| ulp of the result, plus exp's own 1 ulp.
  std::uint64_t s = 99;
  double worst_excess = -1e30;
  for (int i = 0; i < 1000000; ++i) {
    const float x = static_cast<float>(next_word(s) >> 40) * 0x1p-24f * 16.0f;  // [0, 16)
    const float y = (static_cast<float>(next_word(s) >> 40) * 0x1p-24f - 0.5f) * 8.0f;
    const long double ref = std::pow(static_cast<long double>(x), static_cast<long double>(y));
    const float got = m::pow(x, y);
    const double lnx = std::fabs(static_cast<double>(y) * std::log(static_cast<double>(x)));
    const double excess = ulp_error(got, ref) - (1.0 + 3.0 * (std::isfinite(lnx) ? lnx : 0.0));
    if (excess > worst_excess) worst_excess = excess;
  }
  std::printf("float pow: max (error - 1 - 3 |y ln x|) = %.3f ulp\n", worst_excess);
  CHECK(worst_excess <= 0.0);
}

TEST_CASE("special values") {
  using L = std::numeric_limits<float>;
  using D = std::numeric_limits<double>;
  const float inf = L::infinity(), nan = L::quiet_NaN();
  CHECK(m::exp(-inf) == 0.0f);
  CHECK(m::exp(inf) == inf);
  CHECK(std::isnan(m::exp(nan)));
  CHECK(m::exp(0.0f) == 1.0f);
  CHECK(m::exp(-200.0f) == 0.0f);
  CHECK(m::exp(100.0f) == inf);
  CHECK(m::exp(-103.0f) > 0.0f);  // subnormal, as exact
  CHECK(m::expm1(-inf) == -1.0f);
  CHECK(m::expm1(inf) == inf);
  CHECK(std::isnan(m::expm1(nan)));
  CHECK(m::expm1(1e-30f) == 1e-30f);
  CHECK(m::log(0.0f) == -inf);
  CHECK(m::log(-0.0f) == -inf);
  CHECK(std::isnan(m::log(-1.0f)));
  CHECK(std::isnan(m::log(-inf)));
  CHECK(m::log(inf) == inf);
  CHECK(std::isnan(m::log(nan)));
  CHECK(m::log(1.0f) == 0.0f);
  CHECK(m::log(L::denorm_min()) == doctest::Approx(-103.278929903431851103));
  CHECK(m::log1p(-1.0f) == -inf);
  CHECK(std::isnan(m::log1p(-2.0f)));
  CHECK(std::isnan(m::log1p(-inf)));
  CHECK(m::log1p(inf) == inf);
  CHECK(std::isnan(m::log1p(nan)));
  CHECK(m::log1p(1e-30f) == 1e-30f);
  CHECK(m::log1p(L::max()) == doctest::Approx(88.7228391116729996));
  CHECK(m::tanh(inf) == 1.0f);
  CHECK(m::tanh(-inf) == -1.0f);
  CHECK(std::isnan(m::tanh(nan)));
  CHECK(std::signbit(m::tanh(-0.0f)));
  CHECK(m::tanh(1e-30f) == 1e-30f);
  CHECK(m::pow(0.0f, 2.0f) == 0.0f);
  CHECK(m::pow(0.0f, -0.5f) == inf);
  CHECK(m::pow(0.0f, 0.0f) == 1.0f);
  CHECK(m::pow(nan, 0.0f) == 1.0f);
  CHECK(m::pow(1.0f, nan) == 1.0f);
  CHECK(m::pow(inf, 2.0f) == inf);
  CHECK(m::pow(inf, -2.0f) == 0.0f);
  CHECK(std::isnan(m::pow(-2.0f, 2.0f)));
  CHECK(m::pow(4.0f, 0.5f) == 2.0f);
  CHECK(std::isnan(m::sqrt(-1.0f)));
  CHECK(std::isnan(m::sqrt(-1.0)));
  CHECK(m::sqrt(D::infinity()) == D::infinity());
  CHECK(m::exp(-800.0) == 0.0);
  CHECK(m::exp(800.0) == D::infinity());
  CHECK(m::log(0.0) == -D::infinity());
  CHECK(std::isnan(m::log(-1.0)));
  CHECK(m::log(D::denorm_min()) == doctest::Approx(-744.440071921381262));
  CHECK(m::log1p(-1.0) == -D::infinity());
  CHECK(m::tanh(-D::infinity()) == -1.0);
  CHECK(m::expm1(-D::infinity()) == -1.0);
  CHECK(m::pow(0.0, -1.0) == D::infinity());
}

// Keeps the compiler from folding glibc's expf below at compile time.
volatile float g_float_arg = 0.0f;

TEST_CASE("no errno at extreme arguments, and glibc's expf as the negative control") {
  errno = 0;
  double sink = 0.0;
  for (const float v : sgmcmc::test::kErrnoArguments) {
    sink += sgmcmc::test::call_every_math_function(v);
  }
  CHECK(errno == 0);
  (void)sink;
  // Negative control: the C library's expf underflows with ERANGE in errno (C99 math_errhandling).
  errno = 0;
  g_float_arg = -200.0f;
  const float y = std::exp(g_float_arg);
  CHECK(y == 0.0f);
  CHECK(errno == ERANGE);
  errno = 0;
}

TEST_CASE("Box-Muller pair: exact Box-Muller on the same bits, to the stated error") {
  // Reference in long double from the layout documented on normal_pair.
  const long double half_pi = 1.5707963267948966192313216916397514L;
  std::uint64_t s = 4242;
  double worst_f = 0, worst_d = 0;
  for (int i = 0; i < 1000000; ++i) {
    const std::uint64_t w = next_word(s);
    const auto lo = static_cast<std::uint32_t>(w), hi = static_cast<std::uint32_t>(w >> 32);
    float z0, z1;
    m::normal_pair(lo, hi, z0, z1);
    const long double u = std::ldexp(static_cast<long double>((lo >> 1) + 1u), -31);
    const long double r = std::sqrt(-2 * std::log(u));
    const long double a =
        (std::ldexp(static_cast<long double>((hi >> 7) & 0x7fffffu), -23) - 0.5L) * half_pi;
    const long double theta = (hi >> 30) * half_pi + a;
    const long double e0 = r * std::cos(theta), e1 = r * std::sin(theta);
    worst_f = std::fmax(worst_f, static_cast<double>(std::fabs(z0 - e0) / (1 + std::fabs(e0))));
    worst_f = std::fmax(worst_f, static_cast<double>(std::fabs(z1 - e1) / (1 + std::fabs(e1))));

    const std::uint64_t w2 = next_word(s);
    double d0, d1;
    m::normal_pair(w, w2, d0, d1);
    const long double ud = std::ldexp(static_cast<long double>(2 * (w >> 12) + 1), -53);
    const long double rd = std::sqrt(-2 * std::log(ud));
    const long double ad =
        (std::ldexp(static_cast<long double>((w2 >> 10) & 0xfffffffffffffull), -52) - 0.5L) *
        half_pi;
    const long double td = (w2 >> 62) * half_pi + ad;
    const long double f0 = rd * std::cos(td), f1 = rd * std::sin(td);
    worst_d = std::fmax(worst_d, static_cast<double>(std::fabs(d0 - f0) / (1 + std::fabs(f0))));
    worst_d = std::fmax(worst_d, static_cast<double>(std::fabs(d1 - f1) / (1 + std::fabs(f1))));
  }
  std::printf(
      "normal_pair: max |z - exact| / (1 + |exact|) = %.3g (float), %.3g (double), "
      "10^6 pairs\n",
      worst_f, worst_d);
  CHECK(worst_f <= 2e-7);
  CHECK(worst_d <= 5e-16);
  // The extremes of the layout: lo = 0 gives the largest radius sqrt(62 ln 2), lo = ~0 gives 0.
  float z0, z1;
  m::normal_pair(0u, 0u, z0, z1);
  CHECK(std::hypot(z0, z1) == doctest::Approx(6.5555405).epsilon(1e-6));
  m::normal_pair(0xffffffffu, 0x12345678u, z0, z1);
  CHECK(z0 == 0.0f);
  CHECK(z1 == 0.0f);
}

TEST_CASE("exp_nonpositive is exp, bit for bit, for every x <= 0 tried") {
  // Without exp's upper clamp: the same value wherever the caller keeps its promise (x <= 0).
  int differ = 0;
  for (std::uint32_t b = 0x80000000u; b <= 0xff800000u; b += 4099u) {
    float x;
    std::memcpy(&x, &b, sizeof x);
    const float a = m::exp(x);
    const float c = m::exp_nonpositive(x);
    differ += std::memcmp(&a, &c, sizeof a) != 0;
  }
  std::uint64_t s = 5;
  for (int i = 0; i < 1000000; ++i) {
    const double x = -static_cast<double>(next_word(s) >> 11) * 0x1p-53 * 800.0;
    const double a = m::exp(x);
    const double b = m::exp_nonpositive(x);
    differ += std::memcmp(&a, &b, sizeof a) != 0;
  }
  CHECK(differ == 0);
  // exp_nonpositive_lane, the form loops vectorise, gives the same bits (on this float sweep).
  int lane_differ = 0;
  const float lowest = m::opaque(m::MathConstants<float>::exp_lo);
  for (std::uint32_t b = 0x80000000u; b <= 0xff800000u; b += 4099u) {
    float x;
    std::memcpy(&x, &b, sizeof x);
    const float a = m::exp_nonpositive(x);
    const float c = m::exp_nonpositive_lane(x, lowest);
    lane_differ += std::memcmp(&a, &c, sizeof a) != 0;
  }
  CHECK(lane_differ == 0);
  CHECK(m::exp_nonpositive(0.0f) == 1.0f);
  CHECK(m::exp_nonpositive(-std::numeric_limits<double>::infinity()) == 0.0);
  CHECK(std::isnan(m::exp_nonpositive(std::numeric_limits<float>::quiet_NaN())));
}

}  // namespace
