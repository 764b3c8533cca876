// SPDX-License-Identifier: MIT
// Bit-for-bit comparison of two Chains sets (tests/parallel): every chain's state, the next draw
// of its stream, its status, and every figure of the summary.
#pragma once

#include <cstring>

#include "sgmcmc/parallel/chains.hpp"

namespace sgmcmc_test {

template <int N>
bool same_bits(const sgmcmc::Vector<double, N>& a, const sgmcmc::Vector<double, N>& b) {
  return std::memcmp(a.data(), b.data(), sizeof(double) * N) == 0;
}

template <class Run>
bool same_chains(const Run& a, const Run& b) {
  bool ok = true;
  for (int k = 0; k < Run::chains; ++k) {
    auto ra = a.rng[k], rb = b.rng[k];
    ok = ok && a.state[k] == b.state[k] && ra() == rb() && a.status[k].code == b.status[k].code;
  }
  const auto sa = a.summary(), sb = b.summary();
  return ok && same_bits(sa.rhat, sb.rhat) && same_bits(sa.ess, sb.ess) &&
         same_bits(sa.mean, sb.mean) && same_bits(sa.sd, sb.sd) && sa.draws == sb.draws &&
         sa.chains == sb.chains && sa.failed == sb.failed;
}

}  // namespace sgmcmc_test
