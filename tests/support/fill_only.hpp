// SPDX-License-Identifier: MIT
// host::Rng seen through the RNG contract without its optional in-place draw (take_normals): a
// port that only fills, so that code with an in-place path takes its other one. Same normals.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/port/rng.hpp"

namespace sgmcmc_test {

struct FillOnly {
  sgmcmc::host::Rng r;
  using result_type = std::uint64_t;
  static constexpr result_type min() noexcept { return 0; }
  static constexpr result_type max() noexcept { return ~result_type(0); }
  result_type operator()() noexcept { return r(); }
  template <class S>
  void fill_normal(S* out, std::size_t n) noexcept {
    r.fill_normal(out, n);
  }
};
static_assert(!sgmcmc::HasTakeNormals<FillOnly, float>::value &&
                  sgmcmc::HasTakeNormals<sgmcmc::host::Rng, float>::value,
              "FillOnly hides take_normals");

}  // namespace sgmcmc_test
