// SPDX-License-Identifier: MIT
// An allocator for large arrays read at random (a data set's images): on Linux, blocks of 2 MiB
// or more are 2 MiB-aligned and marked for transparent huge pages, so that a random row costs one
// TLB entry per 2 MiB instead of one per 4 KiB page. Host only; everything else as std::allocator.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace sgmcmc::data {

/// Huge-page size and the smallest block that gets huge pages.
inline constexpr std::size_t kHugePageBytes = std::size_t(2) << 20;

/// std::allocator, except that blocks of kHugePageBytes or more are aligned to kHugePageBytes and
/// advised as huge pages (madvise MADV_HUGEPAGE; where the kernel's transparent huge pages are
/// off, or on other systems, they are ordinary memory). Stateless: all instances are equal.
template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() noexcept = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}  // NOLINT: rebinding is implicit

  T* allocate(std::size_t n) {
    if (n > (std::size_t(-1) - kHugePageBytes) / sizeof(T)) fail();
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHugePageBytes) return std::allocator<T>().allocate(n);
    const std::size_t rounded = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
    void* p = std::aligned_alloc(kHugePageBytes, rounded);
    if (p == nullptr) fail();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(p, rounded, MADV_HUGEPAGE);  // advice only: a refusal leaves ordinary pages
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) < kHugePageBytes) {
      std::allocator<T>().deallocate(p, n);
    } else {
      std::free(p);
    }
  }

 private:
  /// Out of memory: std::bad_alloc, or (built without exceptions) abort, as std::allocator does.
  [[noreturn]] static void fail() {
#if defined(__cpp_exceptions)
    throw std::bad_alloc();
#else
    std::abort();
#endif
  }
};
template <class T, class U>
bool operator==(const HugePageAllocator<T>&, const HugePageAllocator<U>&) noexcept {
  return true;
}
template <class T, class U>
bool operator!=(const HugePageAllocator<T>&, const HugePageAllocator<U>&) noexcept {
  return false;
}

}  // namespace sgmcmc::data
