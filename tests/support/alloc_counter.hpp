// Test support: counts every heap allocation (global operator new and, on glibc or under a
// sanitizer, malloc) so that tests can assert a step allocates nothing. Include in exactly one
// .cpp per test executable.
#pragma once

// Two ways of counting:
//  * plain builds replace operator new/delete and, on glibc, malloc/calloc/realloc/free (over
//    glibc's __libc_* entry points);
//  * builds with a sanitizer that owns the allocator (AddressSanitizer, and the thread, memory
//    and hardware-assisted ones) replace nothing: replacing malloc there would bypass the
//    sanitizer's allocator and hide heap errors (overflows, use after free, mismatched delete).
//    Every allocation, operator new's included, is counted through the sanitizer's allocation
//    hook (__sanitizer_install_malloc_and_free_hooks) instead.
// tests/sanitize checks both: the counts, and that a heap overflow is reported under ASan.

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(__SANITIZE_HWADDRESS__)
#define SGMCMC_TEST_SANITIZER_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer) || __has_feature(hwaddress_sanitizer)
#define SGMCMC_TEST_SANITIZER_ALLOCATOR 1
#endif
#endif

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

#if defined(SGMCMC_TEST_SANITIZER_ALLOCATOR)

// The sanitizer runtimes' hook interface (sanitizer/allocator_interface.h, declared here because
// GCC does not install that header). The hook runs for every allocation of the sanitizer's
// allocator: malloc, calloc, realloc, aligned forms and operator new.
extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*,
                                                                             std::size_t),
                                                         void (*free_hook)(const volatile void*));

namespace sgmcmc_test {
inline void sanitizer_malloc_hook(const volatile void*, std::size_t) {
  note_allocation();
}
inline void sanitizer_free_hook(const volatile void*) {}
/// Non-zero once the hook is installed (at static initialisation of the including program).
inline const int sanitizer_hooks =
    __sanitizer_install_malloc_and_free_hooks(sanitizer_malloc_hook, sanitizer_free_hook);
}  // namespace sgmcmc_test

#define SGMCMC_TEST_COUNTS_MALLOC 1

#else  // no sanitizer allocator: replace the allocation functions

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

#endif  // SGMCMC_TEST_SANITIZER_ALLOCATOR
