# FashionMNIST network programs (issue 11, docs/experiments/fashion.md, docs/models/mlp.md):
#   sgmcmc_fashion_core  the experiment's runs (fashion_core.cpp), also linked by tests/fashion;
#   sgmcmc_fashion       the experiment (scripts/fashion);
#   sgmcmc_fashion_timing  one thread's epoch of the network (gradient + an update), which
#                        scripts/fashion-torch-timing runs beside PyTorch's.
# Needs sgmcmc_idx (zlib); the programs also sgmcmc_common. include() from
# src/experiments/CMakeLists.txt or tests/fashion; defines its targets once.
if(NOT TARGET sgmcmc_fashion_core AND TARGET sgmcmc_idx)
  add_library(sgmcmc_fashion_core STATIC ${CMAKE_CURRENT_LIST_DIR}/fashion_core.cpp)
  target_include_directories(sgmcmc_fashion_core PUBLIC ${CMAKE_CURRENT_LIST_DIR}/..)
  target_link_libraries(sgmcmc_fashion_core PUBLIC sgmcmc::sgmcmc sgmcmc::host
                        PRIVATE sgmcmc_warnings)
  target_compile_options(sgmcmc_fashion_core PRIVATE -fno-exceptions -fno-rtti)
  if(SGMCMC_NATIVE)
    target_compile_options(sgmcmc_fashion_core PRIVATE -march=native)
  endif()
endif()

if(NOT TARGET sgmcmc_fashion_timing AND TARGET sgmcmc_idx AND TARGET sgmcmc_common)
  foreach(program fashion fashion_timing)
    add_executable(sgmcmc_${program} ${CMAKE_CURRENT_LIST_DIR}/${program}.cpp)
    target_link_libraries(sgmcmc_${program} PRIVATE sgmcmc::sgmcmc sgmcmc::host sgmcmc_idx
                          sgmcmc_common sgmcmc_warnings)
    target_include_directories(sgmcmc_${program} PRIVATE ${CMAKE_CURRENT_LIST_DIR}/..)
    target_compile_options(sgmcmc_${program} PRIVATE -fno-exceptions -fno-rtti)
    if(SGMCMC_NATIVE)
      target_compile_options(sgmcmc_${program} PRIVATE -march=native)
    endif()
    set_target_properties(sgmcmc_${program} PROPERTIES
                          RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/src)
  endforeach()
  target_link_libraries(sgmcmc_fashion PRIVATE sgmcmc_fashion_core)
endif()
