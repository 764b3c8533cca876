#!/usr/bin/env bash
# Runs one Cortex-M4F firmware ELF on QEMU's mps2-an386 board; exit status = the firmware's.
# Used as CMAKE_CROSSCOMPILING_EMULATOR: ctest calls `run-qemu.sh fw.elf [args...]`.
# Semihosting output goes to stdout (a stdio chardev); QEMU's own messages to stderr.
#   SGMCMC_QEMU_TIMEOUT  seconds before a hung firmware is killed (default 300; exit 124)
#   SGMCMC_QEMU_ICOUNT   icount shift; default 0 = one instruction per virtual nanosecond, so
#                        SysTick (25 MHz) ticks once per 40 instructions, deterministically.
#                        Set to "off" to run on the host's real-time clock instead.
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 firmware.elf" >&2
  exit 2
fi
elf=$1
shift
icount=()
if [ "${SGMCMC_QEMU_ICOUNT:-0}" != "off" ]; then
  icount=(-icount "shift=${SGMCMC_QEMU_ICOUNT:-0}")
fi
exec timeout --foreground -k 5 "${SGMCMC_QEMU_TIMEOUT:-300}" \
  qemu-system-arm -M mps2-an386 -nographic -monitor none -serial none \
  -chardev stdio,id=semihost -semihosting-config enable=on,target=native,chardev=semihost \
  "${icount[@]}" -kernel "$elf" "$@"
