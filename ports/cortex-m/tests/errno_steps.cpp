// SPDX-License-Identifier: MIT
// On-target test of interrupt safety: no step of any shipped sampler changes errno at extreme
// states (tests/errno_steps.hpp), with newlib in POSIX mode (_LIB_VERSION = _POSIX_, where its
// expf, logf and powf set errno at the edges of their range); negative control: the same harness
// sees a model whose gradient calls newlib's expf(−200).
// _DEFAULT_SOURCE: newlib's math.h declares its error-handling switch _LIB_VERSION only then.
#define _DEFAULT_SOURCE 1
#include <math.h>

#include "errno_steps.hpp"
#include "sgmcmc/cortex_m/check.hpp"
#include "sgmcmc/cortex_m/rng.hpp"

using sgmcmc::cortex_m::Line;
namespace t = sgmcmc::test;

int main() {
  _LIB_VERSION = _POSIX_;
  sgmcmc::cortex_m::Rng rng(17);
  int others = 0;
  int monomial_gamma = 0;
  t::errno_all_samplers(rng, [&](const t::ErrnoReport& r) {
    Line().decimals(3) << "errno changed to " << r.errno_after << " by " << r.sampler
                       << " at x = " << r.position << " (auxiliary " << r.auxiliary << ")\n";
    (t::is_monomial_gamma(r.sampler) ? monomial_gamma : others) += 1;
  });
  Line() << "steps at extreme states that changed errno: " << others << " (other samplers), "
         << monomial_gamma << " (SGMGT, SGMGT-D)\n";
  SGMCMC_CHECK(others == 0);
  // SGMGT and SGMGT-D: errno-free only with the fix of kinetic_mg.hpp (errno_steps.hpp).
  SGMCMC_CHECK(t::kMonomialGammaErrnoFree ? monomial_gamma == 0 : monomial_gamma > 0);

  int seen = 0;
  const auto sgld = fw::with_step<sgmcmc::SGLD<float, t::kErrnoDim>>(0.1f);
  const int changed = t::errno_step(
      "SGLD, underflowing model", sgld, 0.5f, 0.0f, rng, [](auto&) {},
      [&](const t::ErrnoReport& r) { seen = r.errno_after; }, t::UnderflowingModel{});
  Line() << "negative control: a gradient calling expf(-200) changed errno to " << seen
         << " (ERANGE " << ERANGE << ")\n";
  SGMCMC_CHECK(changed == 1 && seen == ERANGE);
  _LIB_VERSION = _IEEE_;
  return sgmcmc::cortex_m::check::finish();
}
