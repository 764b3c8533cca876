// SPDX-License-Identifier: MIT
// Steps of every shipped sampler at extreme states, each between a read of errno set to a
// sentinel before and compared after (interrupt safety, docs/REALTIME.md). Shared by the
// on-target test (tests/errno_steps.cpp, newlib in POSIX mode) and the host test
// (tests/host/test_errno_steps.cpp, glibc). Float, d = 4, U = θᵀθ/2.
#pragma once

#include <cerrno>
#include <cmath>
#include <limits>

#include "all_samplers.hpp"

namespace sgmcmc::test {

inline constexpr int kErrnoDim = 4;

/// Whether SGMGT and SGMGT-D steps are errno-free: they are since their kinetic
/// (core/kinetic_mg.hpp) uses detail::exp, log1p, tanh and log of core/math.hpp instead of the
/// C library's (whose exp(−c|p|/m) underflow for |p| > 21 at c = 5 set ERANGE). Kept as a flag so
/// that the test states which samplers it expects to be errno-free.
inline constexpr bool kMonomialGammaErrnoFree = true;

/// True for the scenarios of SGMGT and SGMGT-D.
inline bool is_monomial_gamma(const char* sampler) noexcept {
  return sampler[0] == 'S' && sampler[1] == 'G' && sampler[2] == 'M' && sampler[3] == 'G';
}
inline constexpr int kErrnoSentinel = 4711;  // no C library uses this value

/// Positions at which a step meets the edges of exp, log and pow: huge (the gradient and the
/// next state overflow), tiny and subnormal, large enough that HMC's energy error and NUTS's
/// log-weights leave exp's range, zero, and non-finite (refused before any arithmetic).
inline constexpr float kExtremePositions[] = {1e30f,
                                              -1e30f,
                                              3e19f,
                                              1e10f,
                                              200.0f,
                                              30.0f,
                                              1e-30f,
                                              std::numeric_limits<float>::denorm_min(),
                                              0.0f,
                                              std::numeric_limits<float>::infinity(),
                                              std::numeric_limits<float>::quiet_NaN()};
/// SGMGT momenta (and thermostat values) where K_c's exp(−c|p|/m) underflows (|p| > 21 at
/// c = 5) or overflows the step, as in issue 17.
inline constexpr float kExtremeAuxiliary[] = {25.0f, -50.0f, 1e3f, -1e30f, 3e38f, 1e-30f};

/// One report line per scenario: the sampler's name, the position (and auxiliary value) and
/// errno after the step (the sentinel when untouched).
struct ErrnoReport {
  const char* sampler = "";
  float position = 0.0f;
  float auxiliary = 0.0f;
  int errno_after = kErrnoSentinel;
};

/// The negative control's model: U = θᵀθ/2 with a gradient that also calls the C library's
/// exp at −200, which underflows and sets errno to ERANGE (glibc; newlib in POSIX mode).
struct UnderflowingModel {
  template <class Theta, class Grad>
  void gradient(const Theta& th, Grad& g) const noexcept {
    volatile float arg = -200.0f;
    g = th * (1.0f + std::exp(arg));
  }
  template <class Theta>
  typename Theta::Scalar potential(const Theta& th) const noexcept {
    return typename Theta::Scalar(0.5f) * th.squaredNorm();
  }
};

/// Steps s once on `model` from θ = x (every coordinate), with `prepare(z)` applied after start;
/// calls report(ErrnoReport) when errno changed. Returns the number of changed scenarios.
template <class S, class Rng, class Prepare, class Report, class Model = fw::Isotropic>
int errno_step(const char* name, const S& s, float x, float aux, Rng& rng, Prepare prepare,
               Report report, const Model& model = Model{}) {
  static typename S::State z;
  static_cast<void>(s.start(z, Vector<float, kErrnoDim>::Constant(0.5f), rng));
  z.position().setConstant(x);
  prepare(z);
  errno = kErrnoSentinel;
  static_cast<void>(s.step(z, model, rng));
  const int after = errno;
  errno = 0;
  if (after == kErrnoSentinel) return 0;
  report(ErrnoReport{name, x, aux, after});
  return 1;
}

/// Every shipped sampler (all_samplers.hpp) at every extreme position, plus HMC and NUTS with
/// step sizes that diverge, and SGMGT and SGMGT-D resampling every step, also at every extreme
/// momentum and thermostat value; the number of steps that changed errno, each reported.
template <class Rng, class Report>
int errno_all_samplers(Rng& rng, Report report) {
  constexpr int d = kErrnoDim;
  auto none = [](auto&) {};
  int changed = 0;
  auto each_position = [&](const char* name, const auto& s) {
    for (const float x : kExtremePositions)
      changed += errno_step(name, s, x, 0.0f, rng, none, report);
  };
  fw::for_each_sampler<d>(each_position);
  each_position("HMC, h = 2 (divergent)", fw::with_step<HMC<float, d>>(2.0f));
  each_position("NUTS, h = 3 (divergent)", fw::with_step<NUTS<float, d>>(3.0f));

  typename SGMGT<float, d>::Params mg;
  mg.step_size = 0.05f;
  mg.resample_period = 1;  // a Gibbs redraw of p and ξ after every step
  const SGMGT<float, d> sgmgt(mg);
  typename SGMGTD<float, d>::Params mgd;
  mgd.step_size = 0.05f;
  mgd.resample_period = 1;
  const SGMGTD<float, d> sgmgtd(mgd);
  for (const float x : kExtremePositions) {
    changed += errno_step("SGMGT", sgmgt, x, 0.0f, rng, none, report);
    changed += errno_step("SGMGT-D", sgmgtd, x, 0.0f, rng, none, report);
  }
  for (const float a : kExtremeAuxiliary) {
    auto momentum = [a](auto& z) { z.momentum().setConstant(a); };
    auto thermostat = [a](auto& z) { z.thermostat().setConstant(a); };
    changed += errno_step("SGMGT, momentum", sgmgt, 0.5f, a, rng, momentum, report);
    changed += errno_step("SGMGT, thermostat", sgmgt, 0.5f, a, rng, thermostat, report);
    changed += errno_step("SGMGT-D, momentum", sgmgtd, 0.5f, a, rng, momentum, report);
    changed += errno_step("SGMGT-D, thermostat", sgmgtd, 0.5f, a, rng, thermostat, report);
  }
  return changed;
}

}  // namespace sgmcmc::test
