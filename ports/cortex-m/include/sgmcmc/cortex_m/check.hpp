// SPDX-License-Identifier: MIT
// Minimal on-target test harness: CHECK macros that print failures over semihosting and count
// them; `return sgmcmc::cortex_m::check::finish();` from main makes the exit status pass/fail.
#pragma once

#include "sgmcmc/cortex_m/console.hpp"

namespace sgmcmc::cortex_m::check {

/// Counters shared by every check in the firmware.
struct Counters {
  unsigned checks = 0;
  unsigned failures = 0;
};

/// The firmware's counters.
inline Counters& counters() noexcept {
  static Counters c;
  return c;
}

/// Records one check; prints the failing expression and location.
inline bool record(bool ok, const char* expr, const char* file, int line) noexcept {
  ++counters().checks;
  if (!ok) {
    ++counters().failures;
    Line() << "FAIL " << file << ':' << line << ": " << expr << '\n';
  }
  return ok;
}

/// Records |a - b| <= tol and prints both values on failure.
inline bool near(double a, double b, double tol, const char* expr, const char* file,
                 int line) noexcept {
  const double diff = a > b ? a - b : b - a;
  const bool ok = diff <= tol;  // false for NaN
  if (!record(ok, expr, file, line)) {
    Line().decimals(6) << "     got " << a << ", expected " << b << " +- " << tol << '\n';
  }
  return ok;
}

/// Prints the summary; returns the exit status (0 when every check passed).
inline int finish() noexcept {
  const Counters& c = counters();
  Line() << (c.failures == 0 ? "PASS" : "FAILED") << ": " << c.checks << " checks, " << c.failures
         << " failures\n";
  return c.failures == 0 ? 0 : 1;
}

}  // namespace sgmcmc::cortex_m::check

/// Checks a condition; continues on failure.
#define SGMCMC_CHECK(cond) \
  ::sgmcmc::cortex_m::check::record(static_cast<bool>(cond), #cond, __FILE__, __LINE__)

/// Checks |a - b| <= tol.
#define SGMCMC_CHECK_NEAR(a, b, tol)                                              \
  ::sgmcmc::cortex_m::check::near(static_cast<double>(a), static_cast<double>(b), \
                                  static_cast<double>(tol), #a " ~ " #b, __FILE__, __LINE__)
