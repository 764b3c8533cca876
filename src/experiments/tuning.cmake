# The tuning measurements (docs/tuning.md): the program sgmcmc_tuning. include() this file from
# src/experiments/CMakeLists.txt (it needs the sgmcmc_common target of src/common).
if(NOT TARGET sgmcmc_tuning AND TARGET sgmcmc_common)
  add_executable(sgmcmc_tuning ${CMAKE_CURRENT_LIST_DIR}/tuning.cpp)
  target_link_libraries(sgmcmc_tuning PRIVATE sgmcmc::sgmcmc sgmcmc::host sgmcmc_common
                        sgmcmc_warnings)
  target_compile_options(sgmcmc_tuning PRIVATE -fno-exceptions -fno-rtti)
  set_target_properties(sgmcmc_tuning PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                        ${PROJECT_BINARY_DIR}/src)
endif()
