# Included by ports/cortex-m/CMakeLists.txt: one on-target sampler firmware per sampler, each
# at -Os and -O2, each a ctest under QEMU (conformance + stationarity, float).
#   sgmcmc_sampler_firmware(SOURCE NAME...): sampler_<name>_<opt> built from SOURCE with
#   SGMCMC_FW_<NAME> defined (SOURCE selects the suite by that macro).
function(sgmcmc_sampler_firmware source)
  foreach(sampler IN LISTS ARGN)
    string(TOLOWER ${sampler} lower)
    foreach(opt IN LISTS SGMCMC_OPT_LEVELS)
      set(target sampler_${lower}_${opt})
      sgmcmc_firmware_variant(${target} ${opt} ${CMAKE_CURRENT_SOURCE_DIR}/tests/${source})
      target_compile_definitions(${target} PRIVATE SGMCMC_FW_${sampler})
      add_test(NAME ${target} COMMAND ${target})
      set_tests_properties(${target} PROPERTIES TIMEOUT 120 LABELS "cortex-m")
    endforeach()
  endforeach()
endfunction()

sgmcmc_sampler_firmware(samplers.cpp SGLD SGHMC SGNHT HMC OPTIMISERS)
# State-dependent geometry: SGRLD, SGRHMC and gSGRHMC (Γ by automatic differentiation in float).
if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/tests/samplers_geometry.cpp)
  sgmcmc_sampler_firmware(samplers_geometry.cpp SGRLD SGRHMC GSGRHMC)
endif()
# The monomial-gamma family, learned-friction SGHMC and NUTS.
if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/tests/samplers_mg.cpp)
  sgmcmc_sampler_firmware(samplers_mg.cpp SGMGT SGMGTD SGHMC_LEARNED NUTS)
endif()
