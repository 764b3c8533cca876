// SPDX-License-Identifier: MIT
// ARM semihosting (bkpt 0xAB) for the Cortex-M port: text output and exit with a status code.
#pragma once

#include <cstdint>

namespace sgmcmc::cortex_m::semihosting {

/// Semihosting operation numbers (ARM "Semihosting for AArch32 and AArch64", v2).
enum class Op : std::uint32_t {
  kWrite0 = 0x04,        ///< write a NUL-terminated string to the debugger console
  kExit = 0x18,          ///< report an exception/exit reason (32-bit: no status code)
  kExitExtended = 0x20,  ///< exit with a reason and a status code
};

/// ADP_Stopped_ApplicationExit: the reason code for a normal program exit.
inline constexpr std::uint32_t kApplicationExit = 0x20026;

/// Issues one semihosting call; returns r0 as set by the host. Traps (HardFault) when no
/// debugger or emulator with semihosting enabled is attached.
inline std::uint32_t call(Op op, const void* arg) noexcept {
  std::uint32_t result;
  asm volatile(
      "mov r0, %1\n\t"
      "mov r1, %2\n\t"
      "bkpt 0xAB\n\t"
      "mov %0, r0"
      : "=r"(result)
      : "r"(static_cast<std::uint32_t>(op)), "r"(arg)
      : "r0", "r1", "memory");
  return result;
}

/// Writes a NUL-terminated string to the host console (QEMU: its stdout/stderr).
inline void write0(const char* text) noexcept {
  call(Op::kWrite0, text);
}

/// Ends the program with `status` as the emulator's exit code (QEMU: qemu-system-arm exits
/// with it). Uses SYS_EXIT_EXTENDED, falling back to SYS_EXIT (pass/fail only) if the host
/// returns; never returns.
[[noreturn]] inline void exit(int status) noexcept {
  const std::uint32_t block[2] = {kApplicationExit, static_cast<std::uint32_t>(status)};
  call(Op::kExitExtended, block);
  // 32-bit SYS_EXIT carries only the reason: ApplicationExit means 0, anything else non-zero.
  call(Op::kExit, reinterpret_cast<const void*>(
                      static_cast<std::uintptr_t>(status == 0 ? kApplicationExit : 0x20023)));
  for (;;) {
    asm volatile("wfi");
  }
}

}  // namespace sgmcmc::cortex_m::semihosting
