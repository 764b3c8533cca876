# The SGMG-style multiple-well experiment (issue 4, docs/experiments/multiwell.md): the program
# sgmcmc_multiwell. include() this file from src/experiments/CMakeLists.txt (it needs the
# sgmcmc_common target of src/common); it defines its target once however often it is included.
if(NOT TARGET sgmcmc_multiwell AND TARGET sgmcmc_common)
  add_executable(sgmcmc_multiwell ${CMAKE_CURRENT_LIST_DIR}/multiwell.cpp)
  target_link_libraries(sgmcmc_multiwell PRIVATE sgmcmc::sgmcmc sgmcmc::host sgmcmc_common
                        sgmcmc_warnings)
  target_include_directories(sgmcmc_multiwell PRIVATE ${CMAKE_CURRENT_LIST_DIR}/..)
  target_compile_options(sgmcmc_multiwell PRIVATE -fno-exceptions -fno-rtti)
  set_target_properties(sgmcmc_multiwell PROPERTIES
                        RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/src)
endif()
