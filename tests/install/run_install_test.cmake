# Installs sgmcmc into a temporary prefix and builds the consumer against it with find_package,
# then builds the same consumer with add_subdirectory. Run by ctest (see CMakeLists.txt here).
file(REMOVE_RECURSE "${WORK}")
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()
set(gen_args -DCMAKE_BUILD_TYPE=Release -DSGMCMC_BUILD_TESTS=OFF -DSGMCMC_BUILD_BENCH=OFF
             -DSGMCMC_BUILD_EXAMPLES=OFF)
run(${CMAKE_COMMAND} -S "${SRC}" -B "${WORK}/lib" ${gen_args} -DSGMCMC_INSTALL=ON
    "-DCMAKE_INSTALL_PREFIX=${WORK}/prefix")
run(${CMAKE_COMMAND} --build "${WORK}/lib")
run(${CMAKE_COMMAND} --install "${WORK}/lib")
run(${CMAKE_COMMAND} -S "${SRC}/tests/install/consumer" -B "${WORK}/found"
    -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=${WORK}/prefix")
run(${CMAKE_COMMAND} --build "${WORK}/found")
run("${WORK}/found/consumer")
run(${CMAKE_COMMAND} -S "${SRC}/tests/install/consumer" -B "${WORK}/subdir"
    -DCMAKE_BUILD_TYPE=Release "-DSGMCMC_SOURCE_DIR=${SRC}")
run(${CMAKE_COMMAND} --build "${WORK}/subdir")
run("${WORK}/subdir/consumer")
message(STATUS "install and add_subdirectory consumers built and ran")
