# Included by ports/cortex-m/CMakeLists.txt: the double-well demo firmware (-Os only), run by
# `scripts/demo --target cortex-m4`. As a ctest it is a loose sanity check only: exit status 0
# (no step returned a failed Status); the accuracy figures are for reading, not asserted.
sgmcmc_firmware_variant(demo_double_well Os ${CMAKE_CURRENT_SOURCE_DIR}/demo/double_well.cpp)
add_test(NAME demo_double_well COMMAND demo_double_well)
set_tests_properties(demo_double_well PROPERTIES TIMEOUT 120 LABELS "cortex-m")
