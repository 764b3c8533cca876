# FashionMNIST network programs (issue 11, docs/models/mlp.md): sgmcmc_fashion_timing, one
# thread's epoch of the 784-100-10 network (gradient + momentum update), which
# scripts/fashion-torch-timing runs beside PyTorch's. Needs sgmcmc_idx (zlib) and sgmcmc_common;
# include() from src/experiments/CMakeLists.txt; defines its target once.
if(NOT TARGET sgmcmc_fashion_timing AND TARGET sgmcmc_idx AND TARGET sgmcmc_common)
  add_executable(sgmcmc_fashion_timing ${CMAKE_CURRENT_LIST_DIR}/fashion_timing.cpp)
  target_link_libraries(sgmcmc_fashion_timing PRIVATE sgmcmc::sgmcmc sgmcmc_idx sgmcmc_common
                        sgmcmc_warnings)
  target_include_directories(sgmcmc_fashion_timing PRIVATE ${CMAKE_CURRENT_LIST_DIR}/..)
  target_compile_options(sgmcmc_fashion_timing PRIVATE -fno-exceptions -fno-rtti)
  if(SGMCMC_NATIVE)
    target_compile_options(sgmcmc_fashion_timing PRIVATE -march=native)
  endif()
  set_target_properties(sgmcmc_fashion_timing PROPERTIES
                        RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/src)
endif()
