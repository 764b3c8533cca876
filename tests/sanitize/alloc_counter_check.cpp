// SPDX-License-Identifier: MIT
// The allocation counter (tests/support/alloc_counter.hpp) in every build: it counts operator new
// and malloc (no argument), and it leaves heap errors to the sanitizer ("overflow": a write one
// past new int[4], which AddressSanitizer must report; registered only in ASan builds).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "alloc_counter.hpp"

namespace {

// Keeps the compiler from proving an allocation unused and removing it.
void* volatile g_sink = nullptr;

int check_counts() {
  long with_new = -1;
  long with_malloc = -1;
  long without = -1;
  {
    const sgmcmc_test::AllocationScope scope;
    int* p = new int[4];
    g_sink = p;
    delete[] p;
    with_new = scope.count();
  }
  {
    const sgmcmc_test::AllocationScope scope;
    void* p = std::malloc(24);
    g_sink = p;
    std::free(p);
    with_malloc = scope.count();
  }
  {
    const sgmcmc_test::AllocationScope scope;
    int on_stack[4] = {1, 2, 3, 4};
    g_sink = on_stack;
    without = scope.count();
  }
#if defined(SGMCMC_TEST_COUNTS_MALLOC)
  const bool malloc_ok = with_malloc >= 1;
#else
  const bool malloc_ok = true;  // operator new only (not glibc, no sanitizer)
#endif
  std::printf("allocations counted: new int[4] %ld, malloc %ld, none %ld (%s)\n", with_new,
              with_malloc, without,
#if defined(SGMCMC_TEST_SANITIZER_ALLOCATOR)
              "through the sanitizer's allocation hook"
#else
              "through replaced allocation functions"
#endif
  );
  return with_new >= 1 && malloc_ok && without == 0 ? 0 : 1;
}

int write_past_the_end() {
  int* p = new int[4];
  g_sink = p;
  volatile int index = 4;
  // A volatile store, so that the optimiser cannot drop it as dead before ASan instruments it.
  static_cast<volatile int*>(p)[index] = 1;  // heap-buffer-overflow: ASan must stop here
  delete[] p;
  std::printf("a write past new int[4] went unreported\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "overflow") == 0) return write_past_the_end();
  return check_counts();
}
