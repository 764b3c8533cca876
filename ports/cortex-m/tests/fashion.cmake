# Included by ports/cortex-m/CMakeLists.txt (issue 11, part 5): fashion_softmax_{Os,O2}, SGHMC
# sampling a Bayesian softmax layer on FashionMNIST PCA scores that the host computes at build
# time (tests/fashion_features.py: Debian's python3-numpy and dataset-fashion-mnist). Without
# either, the test is not built and configuration says why.
set(SGMCMC_FASHION_DATA /usr/share/datasets/fashion-mnist CACHE PATH
    "FashionMNIST directory (Debian: dataset-fashion-mnist)")
find_program(SGMCMC_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(SGMCMC_PYTHON3)
  execute_process(COMMAND ${SGMCMC_PYTHON3} -c "import numpy" RESULT_VARIABLE sgmcmc_numpy_missing
                  OUTPUT_QUIET ERROR_QUIET)
endif()
if(NOT SGMCMC_PYTHON3 OR sgmcmc_numpy_missing)
  message(STATUS "sgmcmc: /usr/bin/python3 with numpy not found (Debian: python3-numpy); "
                 "the FashionMNIST firmware test fashion_softmax is not built")
elseif(NOT EXISTS ${SGMCMC_FASHION_DATA}/train-images-idx3-ubyte.gz)
  message(STATUS "sgmcmc: ${SGMCMC_FASHION_DATA} has no FashionMNIST (Debian: "
                 "dataset-fashion-mnist); the firmware test fashion_softmax is not built")
else()
  set(sgmcmc_features_dir ${CMAKE_CURRENT_BINARY_DIR}/generated/fashion)
  add_custom_command(
    OUTPUT ${sgmcmc_features_dir}/fashion_features.hpp
    COMMAND ${CMAKE_COMMAND} -E make_directory ${sgmcmc_features_dir}
    COMMAND ${SGMCMC_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/tests/fashion_features.py
            --data ${SGMCMC_FASHION_DATA} --out ${sgmcmc_features_dir}/fashion_features.hpp
            --features 32 --train 2000 --test 1000 --basis 10000
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/tests/fashion_features.py
    COMMENT "FashionMNIST PCA scores for the firmware (tests/fashion_features.py)")
  add_custom_target(fashion_features DEPENDS ${sgmcmc_features_dir}/fashion_features.hpp)
  sgmcmc_firmware(fashion_softmax ${CMAKE_CURRENT_SOURCE_DIR}/tests/fashion_softmax.cpp)
  foreach(opt IN LISTS SGMCMC_OPT_LEVELS)
    target_include_directories(fashion_softmax_${opt} PRIVATE ${sgmcmc_features_dir})
    add_dependencies(fashion_softmax_${opt} fashion_features)
    # About 10⁹ emulated instructions: 4–9 s under QEMU here, up to a minute on a busy machine.
    set_tests_properties(fashion_softmax_${opt} PROPERTIES TIMEOUT 300)
  endforeach()
endif()
