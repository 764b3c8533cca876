// SPDX-License-Identifier: MIT
// Cortex-M4F startup for QEMU mps2-an386: vector table, FPU enable, stack paint, .data/.bss
// init, static constructors, SysTick clock, then main(); its return value is the exit status.
#include <cstdint>
#include <cstring>

#include "sgmcmc/cortex_m/board.hpp"
#include "sgmcmc/cortex_m/console.hpp"
#include "sgmcmc/cortex_m/semihosting.hpp"
#include "sgmcmc/cortex_m/stack.hpp"

extern "C" {
extern std::uint32_t __data_load__[];
extern std::uint32_t __data_start__[];
extern std::uint32_t __data_end__[];
extern std::uint32_t __bss_start__[];
extern std::uint32_t __bss_end__[];
extern void (*__preinit_array_start[])();
extern void (*__preinit_array_end[])();
extern void (*__init_array_start[])();
extern void (*__init_array_end[])();

// main() itself may not be called or named from C++; bind to its symbol instead.
int sgmcmc_cortex_m_main() __asm__("main");
void Reset_Handler();
void sgmcmc_cortex_m_start();
void Default_Handler();
void HardFault_Handler();
void SysTick_Handler();
void NMI_Handler() __attribute__((weak, alias("Default_Handler")));
void MemManage_Handler() __attribute__((weak, alias("HardFault_Handler")));
void BusFault_Handler() __attribute__((weak, alias("HardFault_Handler")));
void UsageFault_Handler() __attribute__((weak, alias("HardFault_Handler")));
void SVC_Handler() __attribute__((weak, alias("Default_Handler")));
void DebugMon_Handler() __attribute__((weak, alias("Default_Handler")));
void PendSV_Handler() __attribute__((weak, alias("Default_Handler")));

volatile std::uint32_t sgmcmc_systick_wraps = 0;
}

namespace {

using Handler = void (*)();

/// 16 system exceptions + 32 external interrupts (QEMU's mps2 NVIC has 32 IRQ lines).
constexpr int kVectorCount = 16 + 32;

struct VectorTable {
  std::uint32_t* initial_sp;
  Handler handlers[kVectorCount - 1];
};

}  // namespace

/// The vector table, placed at address 0 by the linker script.
__attribute__((section(".vectors"), used)) extern const VectorTable sgmcmc_vector_table = {
    __stack_top__,
    {
        Reset_Handler,       // 1  reset
        NMI_Handler,         // 2
        HardFault_Handler,   // 3
        MemManage_Handler,   // 4
        BusFault_Handler,    // 5
        UsageFault_Handler,  // 6
        nullptr,
        nullptr,
        nullptr,
        nullptr,
        SVC_Handler,       // 11
        DebugMon_Handler,  // 12
        nullptr,
        PendSV_Handler,   // 14
        SysTick_Handler,  // 15
        // 16..47: external interrupts
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
        Default_Handler,
    }};

/// Reset entry. Written without C++ so that no FPU instruction can run before CPACR grants
/// access and nothing touches the stack while it is painted: enable CP10/CP11 (full access),
/// paint [__stack_bottom__, sp) with the high-water pattern, continue in C++.
extern "C" __attribute__((naked, noreturn)) void Reset_Handler() {
  asm volatile(
      "ldr r0, =0xE000ED88\n\t"  // SCB->CPACR
      "ldr r1, [r0]\n\t"
      "orr r1, r1, #0x00F00000\n\t"  // CP10, CP11 full access
      "str r1, [r0]\n\t"
      "dsb\n\t"
      "isb\n\t"
      "ldr r0, =__stack_bottom__\n\t"
      "mov r1, sp\n\t"
      "ldr r2, =0xC5A5C5A5\n\t"  // sgmcmc::cortex_m::stack::kPaint
      "1:\n\t"
      "cmp r0, r1\n\t"
      "bhs 2f\n\t"
      "str r2, [r0], #4\n\t"
      "b 1b\n\t"
      "2:\n\t"
      "b sgmcmc_cortex_m_start\n\t"
      ".ltorg");
}

static_assert(sgmcmc::cortex_m::stack::kPaint == 0xC5A5C5A5u, "keep Reset_Handler in sync");

/// C++ part of reset: memory init, SysTick, constructors, main, exit.
extern "C" __attribute__((noreturn, used)) void sgmcmc_cortex_m_start() {
  std::memcpy(__data_start__, __data_load__,
              static_cast<std::size_t>(reinterpret_cast<char*>(__data_end__) -
                                       reinterpret_cast<char*>(__data_start__)));
  std::memset(__bss_start__, 0,
              static_cast<std::size_t>(reinterpret_cast<char*>(__bss_end__) -
                                       reinterpret_cast<char*>(__bss_start__)));

  // SysTick: reload 2^24 - 1, processor clock, wrap interrupt on (clock.hpp widens it).
  auto reg = [](std::uintptr_t a) -> volatile std::uint32_t& {
    return *reinterpret_cast<volatile std::uint32_t*>(a);
  };
  reg(0xE000E014u) = 0x00FFFFFFu;  // SYST_RVR
  reg(0xE000E018u) = 0u;           // SYST_CVR
  reg(0xE000E010u) = 0x7u;         // SYST_CSR: CLKSOURCE | TICKINT | ENABLE

  for (auto* f = __preinit_array_start; f != __preinit_array_end; ++f) (*f)();
  for (auto* f = __init_array_start; f != __init_array_end; ++f) (*f)();

  sgmcmc::cortex_m::semihosting::exit(sgmcmc_cortex_m_main());
}

extern "C" void SysTick_Handler() {
  sgmcmc_systick_wraps = sgmcmc_systick_wraps + 1u;
}

/// Unexpected interrupt: report and exit with status 3.
extern "C" void Default_Handler() {
  std::uint32_t ipsr;
  asm volatile("mrs %0, ipsr" : "=r"(ipsr));
  sgmcmc::cortex_m::Line() << "unexpected exception " << static_cast<unsigned>(ipsr & 0x1FFu)
                           << '\n';
  sgmcmc::cortex_m::semihosting::exit(3);
}

/// Faults (including a stack overflow into the unmapped hole below RAM): report and exit 2.
extern "C" void HardFault_Handler() {
  const std::uint32_t cfsr = *reinterpret_cast<volatile std::uint32_t*>(0xE000ED28u);
  const std::uint32_t hfsr = *reinterpret_cast<volatile std::uint32_t*>(0xE000ED2Cu);
  sgmcmc::cortex_m::Line() << "HardFault: CFSR=" << static_cast<unsigned>(cfsr)
                           << " HFSR=" << static_cast<unsigned>(hfsr) << '\n';
  sgmcmc::cortex_m::semihosting::exit(2);
}

/// Weak default board seed: a fixed constant, so runs are reproducible.
extern "C" __attribute__((weak)) std::uint64_t sgmcmc_board_seed(void) {
  return 0x5EED5EED2024ABCDull;
}

/// No exceptions, no exit handlers: abort() (e.g. from an assertion) ends the run with 134.
extern "C" void abort(void) {
  sgmcmc::cortex_m::semihosting::write0("abort()\n");
  sgmcmc::cortex_m::semihosting::exit(134);
}

/// Called if a pure virtual function is ever invoked.
extern "C" void __cxa_pure_virtual() {
  abort();
}
