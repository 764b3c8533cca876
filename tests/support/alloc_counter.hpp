// Test support: counts every heap allocation (global operator new and, on glibc, malloc) so that
// tests can assert a step allocates nothing. Include in exactly one .cpp per test executable.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace sgmcmc_test {

inline std::atomic<long>& allocation_count() {
  static std::atomic<long> n{0};
  return n;
}
inline std::atomic<bool>& counting() {
  static std::atomic<bool> on{false};
  return on;
}

/// Counts allocations made while alive.
class AllocationScope {
 public:
  AllocationScope() {
    start_ = allocation_count().load();
    counting().store(true);
  }
  ~AllocationScope() { counting().store(false); }
  AllocationScope(const AllocationScope&) = delete;
  AllocationScope& operator=(const AllocationScope&) = delete;
  long count() const { return allocation_count().load() - start_; }

 private:
  long start_ = 0;
};

inline void note_allocation() {
  if (counting().load(std::memory_order_relaxed)) allocation_count().fetch_add(1);
}

}  // namespace sgmcmc_test

#if defined(__GLIBC__)
extern "C" void* __libc_malloc(std::size_t);
extern "C" void* __libc_calloc(std::size_t, std::size_t);
extern "C" void* __libc_realloc(void*, std::size_t);
extern "C" void __libc_free(void*);

extern "C" void* malloc(std::size_t n) {
  sgmcmc_test::note_allocation();
  return __libc_malloc(n);
}
extern "C" void* calloc(std::size_t a, std::size_t b) {
  sgmcmc_test::note_allocation();
  return __libc_calloc(a, b);
}
extern "C" void* realloc(void* p, std::size_t n) {
  sgmcmc_test::note_allocation();
  return __libc_realloc(p, n);
}
extern "C" void free(void* p) {
  __libc_free(p);
}
#define SGMCMC_TEST_COUNTS_MALLOC 1
#endif

void* operator new(std::size_t n) {
  sgmcmc_test::note_allocation();
  if (void* p = std::malloc(n ? n : 1)) return p;
  std::abort();
}
void* operator new[](std::size_t n) {
  sgmcmc_test::note_allocation();
  if (void* p = std::malloc(n ? n : 1)) return p;
  std::abort();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  sgmcmc_test::note_allocation();
  return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  sgmcmc_test::note_allocation();
  return std::malloc(n ? n : 1);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
