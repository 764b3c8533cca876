// SPDX-License-Identifier: MIT
// Zero-heap proof, both ways: as built normally this firmware links and runs; with one of the
// SGMCMC_HEAP_CONTROL_* macros it allocates, and the no-heap link must reject it.
#include <cstdint>

#if defined(SGMCMC_HEAP_CONTROL_VECTOR)
#include <vector>
#elif defined(SGMCMC_HEAP_CONTROL_MALLOC)
#include <cstdlib>
#endif

#include "sgmcmc/cortex_m/check.hpp"

namespace {

/// Sums 0..n-1 through a buffer that lives on the stack, or on the heap in the controls.
[[gnu::noinline]] std::uint32_t sum_through_buffer(std::uint32_t n) {
#if defined(SGMCMC_HEAP_CONTROL_NEW)
  std::uint32_t* buf = new std::uint32_t[n];
#elif defined(SGMCMC_HEAP_CONTROL_VECTOR)
  std::vector<std::uint32_t> storage(n);
  std::uint32_t* buf = storage.data();
#elif defined(SGMCMC_HEAP_CONTROL_MALLOC)
  auto* buf = static_cast<std::uint32_t*>(std::malloc(n * sizeof(std::uint32_t)));
#else
  std::uint32_t storage[64];
  std::uint32_t* buf = storage;
  if (n > 64) n = 64;
#endif
  for (std::uint32_t i = 0; i < n; ++i) buf[i] = i;
  std::uint32_t sum = 0;
  for (std::uint32_t i = 0; i < n; ++i) sum += buf[i];
#if defined(SGMCMC_HEAP_CONTROL_NEW)
  delete[] buf;
#elif defined(SGMCMC_HEAP_CONTROL_MALLOC)
  std::free(buf);
#endif
  return sum;
}

}  // namespace

int main() {
  SGMCMC_CHECK(sum_through_buffer(64) == 64u * 63u / 2u);
  return sgmcmc::cortex_m::check::finish();
}
