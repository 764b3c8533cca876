// SPDX-License-Identifier: MIT
// Board hooks and constants of the Cortex-M port; a board overrides the weak hooks in its code.
#pragma once

#include <cstdint>

#ifndef SGMCMC_CORTEX_M_CPU_HZ
/// Core clock in Hz. QEMU's mps2-an385/an386 boards model a 25 MHz system clock (SYSCLK).
#define SGMCMC_CORTEX_M_CPU_HZ 25000000u
#endif

extern "C" {
/// Seed for sgmcmc::cortex_m::Rng::from_board(). The port's weak default returns a fixed
/// constant (reproducible runs); a board with a TRNG or unique ID defines its own (strong)
/// version, e.g. `extern "C" std::uint64_t sgmcmc_board_seed(void) { return read_trng(); }`.
std::uint64_t sgmcmc_board_seed(void);
}
