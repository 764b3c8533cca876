// SPDX-License-Identifier: MIT
// Painted-stack high-water mark: the startup code fills the stack with a pattern; the deepest
// overwritten word shows the worst-case stack use observed so far.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {
extern std::uint32_t __stack_bottom__[];  ///< lowest stack address (linker script)
extern std::uint32_t __stack_top__[];     ///< initial stack pointer (linker script)
}

namespace sgmcmc::cortex_m::stack {

/// The word painted over the unused stack.
inline constexpr std::uint32_t kPaint = 0xC5A5C5A5u;

/// Bytes reserved for the main stack.
inline std::size_t size() noexcept {
  return static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(__stack_top__) -
                                  reinterpret_cast<std::uintptr_t>(__stack_bottom__));
}

/// Current stack pointer.
inline std::uintptr_t pointer() noexcept {
  std::uintptr_t sp;
  asm volatile("mov %0, sp" : "=r"(sp));
  return sp;
}

/// Lowest stack address written since the last paint (scan up from the bottom).
inline std::uintptr_t low_water() noexcept {
  const std::uint32_t* p = __stack_bottom__;
  while (p < __stack_top__ && *p == kPaint) ++p;
  return reinterpret_cast<std::uintptr_t>(p);
}

/// Deepest stack use since reset (or the last repaint), in bytes from the top.
inline std::size_t high_water() noexcept {
  return static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(__stack_top__) - low_water());
}

/// Repaints the free stack below the caller (keeping `margin` bytes for this function's own
/// frame), so that the next low_water() measures only what runs after this call.
[[gnu::noinline]] inline void repaint(std::size_t margin = 64) noexcept {
  volatile std::uint32_t* p = __stack_bottom__;
  const std::uintptr_t end = pointer() - margin;
  while (reinterpret_cast<std::uintptr_t>(p) < end) *p++ = kPaint;
}

/// Bytes of stack used below `mark` (a pointer() value taken before the code being measured)
/// since the last repaint().
inline std::size_t used_below(std::uintptr_t mark) noexcept {
  const std::uintptr_t low = low_water();
  return low < mark ? static_cast<std::size_t>(mark - low) : 0u;
}

}  // namespace sgmcmc::cortex_m::stack
