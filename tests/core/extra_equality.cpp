// SPDX-License-Identifier: MIT
// Compile-time check: a state whose bookkeeping has padding or floating-point members and no
// operator== must not compile, since comparing states would read unspecified padding bytes.
// Built twice by ctest: with SGMCMC_EXTRA_HAS_EQUALITY it compiles; without, it must fail.
#include <cstdint>

#include "sgmcmc/core/state.hpp"

struct PaddedExtra {
  float value = 0.0f;
  std::uint8_t flag = 0;  // followed by padding bytes
#ifdef SGMCMC_EXTRA_HAS_EQUALITY
  friend bool operator==(const PaddedExtra& a, const PaddedExtra& b) noexcept {
    return a.value == b.value && a.flag == b.flag;
  }
#endif
};

int main() {
  sgmcmc::State<float, sgmcmc::Layout<2>, 1, PaddedExtra> a, b;
  return a == b ? 0 : 1;
}
