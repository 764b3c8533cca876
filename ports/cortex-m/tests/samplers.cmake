# Included by ports/cortex-m/CMakeLists.txt: one on-target sampler firmware per sampler, each
# at -Os and -O2, each a ctest under QEMU (conformance + stationarity, float).
foreach(sampler SGLD SGHMC SGNHT HMC OPTIMISERS)
  string(TOLOWER ${sampler} lower)
  foreach(opt IN LISTS SGMCMC_OPT_LEVELS)
    set(target sampler_${lower}_${opt})
    sgmcmc_firmware_variant(${target} ${opt} ${CMAKE_CURRENT_SOURCE_DIR}/tests/samplers.cpp)
    target_compile_definitions(${target} PRIVATE SGMCMC_FW_${sampler})
    add_test(NAME ${target} COMMAND ${target})
    set_tests_properties(${target} PROPERTIES TIMEOUT 120 LABELS "cortex-m")
  endforeach()
endforeach()
