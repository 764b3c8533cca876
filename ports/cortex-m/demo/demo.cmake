# Included by ports/cortex-m/CMakeLists.txt: the double-well demo firmware (-Os only), run by
# `scripts/demo --target cortex-m4`. As a ctest it is a loose sanity check only: exit status 0
# (no step returned a failed Status); the accuracy figures are for reading, not asserted.
sgmcmc_firmware_variant(demo_double_well Os ${CMAKE_CURRENT_SOURCE_DIR}/demo/double_well.cpp)
add_test(NAME demo_double_well COMMAND demo_double_well)
set_tests_properties(demo_double_well PROPERTIES TIMEOUT 120 LABELS "cortex-m")

# The control-loop demo (docs/REALTIME.md): SysTick steps SGLD at a fixed rate under -icount,
# the main loop refills noise; exit 0 iff no deadline is missed over 10^5 ticks and the negative
# control (a period shorter than a tick) misses. In `scripts/target-test cortex-m`.
sgmcmc_firmware_variant(demo_control_loop O2 ${CMAKE_CURRENT_SOURCE_DIR}/demo/control_loop.cpp)
add_test(NAME demo_control_loop COMMAND demo_control_loop)
# sleep=off: while the core sleeps in WFI, virtual time jumps to the next interrupt instead of
# following the host's clock, so the run is deterministic on a loaded machine.
set_tests_properties(demo_control_loop PROPERTIES TIMEOUT 300 LABELS "cortex-m"
  ENVIRONMENT "SGMCMC_QEMU_ICOUNT=0,sleep=off")
