# ctest script: building TARGET in BUILD_DIR must fail at link time on an undefined __wrap_
# allocator symbol (the firmware's zero-heap link); any other outcome fails the test.
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "${TARGET} linked although it allocates: the zero-heap proof is broken")
endif()
string(REGEX MATCH "undefined reference to `__wrap_[_a-z]+'" why "${out}")
if(NOT why)
  message(FATAL_ERROR "${TARGET} failed for another reason than the heap:\n${out}")
endif()
message(STATUS "${TARGET} failed to link as expected: ${why}")
