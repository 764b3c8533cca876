// SPDX-License-Identifier: MIT
// On-target checks of core/math.hpp: errno untouched at extreme arguments (negative control:
// newlib's expf, logf and powf do set it in POSIX mode), float accuracy in ulp against newlib's
// double functions over a strided sweep of bit patterns, special values, double spot checks.
// _DEFAULT_SOURCE: newlib's math.h declares its error-handling switch _LIB_VERSION only then.
#define _DEFAULT_SOURCE 1
#include <math.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>

#include "math_probe.hpp"
#include "sgmcmc/core/math.hpp"
#include "sgmcmc/cortex_m/check.hpp"

using sgmcmc::cortex_m::Line;
namespace m = sgmcmc::detail;

namespace {

// Arguments pass through volatiles so that nothing is folded at compile time.
volatile float g_f = 0.0f;
volatile double g_d = 0.0;
volatile float g_sink_f = 0.0f;
volatile double g_sink_d = 0.0;

float arg(float x) {
  g_f = x;
  return g_f;
}
double arg(double x) {
  g_d = x;
  return g_d;
}

// errno: every function, float and double, at arguments where a C library sets it (underflow,
// overflow, pole, domain) and at the special values. newlib's fdlibm wrappers set errno only in
// POSIX mode (_LIB_VERSION = _POSIX_; this toolchain's newlib defaults to _IEEE_, where they
// never do; glibc always does, newlib builds with the newer math always do), so the check runs
// in POSIX mode, and the negative control shows newlib's expf(-200), logf(-1) and powf(0, -1)
// changing errno there (else the check would prove nothing).
void check_errno() {
  errno = 0;
  g_sink_f = std::exp(arg(-200.0f));
  const int ieee_errno = errno;
  Line() << "newlib in its default mode (_LIB_VERSION " << static_cast<int>(_LIB_VERSION)
         << "): expf(-200) leaves errno " << ieee_errno << '\n';

  _LIB_VERSION = _POSIX_;
  errno = 0;
  for (const float v : sgmcmc::test::kErrnoArguments) {
    g_sink_d = sgmcmc::test::call_every_math_function(v);
  }
  const int after = errno;
  Line() << "errno after every sgmcmc::detail function at extreme arguments, POSIX mode: " << after
         << '\n';
  SGMCMC_CHECK(after == 0);

  errno = 0;
  g_sink_f = std::exp(arg(-200.0f));
  const int exp_errno = errno;
  errno = 0;
  g_sink_f = std::log(arg(-1.0f));
  const int log_errno = errno;
  errno = 0;
  g_sink_f = std::pow(arg(0.0f), arg(-1.0f));
  const int pow_errno = errno;
  errno = 0;
  _LIB_VERSION = _IEEE_;
  Line() << "negative control, newlib in POSIX mode: expf(-200) errno " << exp_errno << " (ERANGE "
         << ERANGE << "), logf(-1) errno " << log_errno << " (EDOM " << EDOM
         << "), powf(0, -1) errno " << pow_errno << '\n';
  SGMCMC_CHECK(exp_errno == ERANGE);
  SGMCMC_CHECK(log_errno == EDOM);
  SGMCMC_CHECK(pow_errno != 0);
}

/// Error of a float result against a double reference, in ulp of float at the reference.
double ulp_error(float got, double ref) {
  if (ref != ref) return got != got ? 0.0 : 1e30;
  if (got != got) return 1e30;
  const double max = std::numeric_limits<float>::max();
  if (std::fabs(ref) >= max + std::ldexp(1.0, 103)) {  // beyond max + half an ulp: rounds to inf
    return (std::isinf(got) && ((got > 0) == (ref > 0))) ? 0.0 : 1e30;
  }
  if (std::isinf(got)) return 1e30;
  int e = 0;
  std::frexp(ref, &e);
  if (e < -125) e = -125;
  return std::fabs(static_cast<double>(got) - ref) / std::ldexp(1.0, e - 24);
}

template <class F, class R>
double sweep(F f, R ref) {
  double worst = 0;
  // 20,000 bit patterns, both signs, every exponent; NaN patterns skipped.
  for (std::uint32_t k = 0; k < 20000u; ++k) {
    const std::uint32_t bits = k * 214743u + 12345u;
    float x;
    std::memcpy(&x, &bits, sizeof x);
    if (x != x) continue;
    const double e = ulp_error(f(x), ref(static_cast<double>(x)));
    worst = e > worst ? e : worst;
  }
  return worst;
}

// Float accuracy on the target (its FMA contraction may round differently from the host): the
// host's bounds over 20,000 strided bit patterns each, newlib's double functions as reference
// (their error, below 1e-15 relative, is invisible at float's 6e-8).
void check_accuracy() {
  const double exp = sweep([](float x) { return m::exp(x); }, [](double x) { return std::exp(x); });
  const double expm1 =
      sweep([](float x) { return m::expm1(x); }, [](double x) { return std::expm1(x); });
  const double log = sweep([](float x) { return m::log(x); }, [](double x) { return std::log(x); });
  const double log1p =
      sweep([](float x) { return m::log1p(x); }, [](double x) { return std::log1p(x); });
  const double tanh =
      sweep([](float x) { return m::tanh(x); }, [](double x) { return std::tanh(x); });
  const double sqrt =
      sweep([](float x) { return m::sqrt(x); }, [](double x) { return std::sqrt(x); });
  Line().decimals(3) << "float max error (ulp): exp " << exp << ", expm1 " << expm1 << ", log "
                     << log << ", log1p " << log1p << ", tanh " << tanh << ", sqrt " << sqrt
                     << '\n';
  SGMCMC_CHECK(exp <= 1.0);
  SGMCMC_CHECK(expm1 <= 1.5);
  SGMCMC_CHECK(log <= 1.0);
  SGMCMC_CHECK(log1p <= 1.0);
  SGMCMC_CHECK(tanh <= 1.5);
  SGMCMC_CHECK(sqrt <= 0.5);
}

// Special values, float and double.
void check_specials() {
  const float inf = std::numeric_limits<float>::infinity();
  SGMCMC_CHECK(m::exp(arg(-inf)) == 0.0f);
  SGMCMC_CHECK(m::exp(arg(-200.0f)) == 0.0f);
  SGMCMC_CHECK(m::exp(arg(100.0f)) == inf);
  SGMCMC_CHECK(m::exp(arg(-103.0f)) > 0.0f);
  SGMCMC_CHECK(m::log(arg(0.0f)) == -inf);
  SGMCMC_CHECK(m::log(arg(-1.0f)) != m::log(arg(-1.0f)));
  SGMCMC_CHECK(m::log1p(arg(-1.0f)) == -inf);
  SGMCMC_CHECK(m::tanh(arg(-inf)) == -1.0f);
  SGMCMC_CHECK(m::expm1(arg(-inf)) == -1.0f);
  SGMCMC_CHECK(m::pow(arg(0.0f), arg(-0.5f)) == inf);
  SGMCMC_CHECK(m::pow(arg(4.0f), arg(0.5f)) == 2.0f);
  const double dinf = std::numeric_limits<double>::infinity();
  SGMCMC_CHECK(m::exp(arg(-800.0)) == 0.0);
  SGMCMC_CHECK(m::exp(arg(800.0)) == dinf);
  SGMCMC_CHECK(m::log(arg(0.0)) == -dinf);
  SGMCMC_CHECK(m::tanh(arg(dinf)) == 1.0);
  // Double spot checks against newlib (software floating point on the M4F, same IEEE results as
  // the host where the host test measures <= 1 ulp for exp and log).
  double worst = 0;
  for (const double x : {-700.0, -10.5, -0.3, 1e-10, 0.7, 3.25, 88.0, 700.0}) {
    const double a = m::exp(arg(x)), b = std::exp(x);
    const double rel = std::fabs(a - b) / b;
    worst = rel > worst ? rel : worst;
  }
  for (const double x : {1e-300, 1e-5, 0.3, 0.99, 1.01, 7.0, 1e10, 1e300}) {
    const double a = m::log(arg(x)), b = std::log(x);
    const double rel = std::fabs(a - b) / std::fabs(b);
    worst = rel > worst ? rel : worst;
  }
  Line() << "double exp/log against newlib: max relative difference " << worst * 1e16 << "e-16\n";
  SGMCMC_CHECK(worst <= 4.5e-16);  // 2 ulp
}

}  // namespace

int main() {
  check_errno();
  check_accuracy();
  check_specials();
  return sgmcmc::cortex_m::check::finish();
}
