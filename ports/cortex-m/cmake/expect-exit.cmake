# ctest script: running ELF through RUN must exit with status EXPECT and print REGEX.
execute_process(COMMAND ${RUN} ${ELF} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "exit status ${rc}, output:\n${out}")
if(NOT rc EQUAL EXPECT)
  message(FATAL_ERROR "expected exit status ${EXPECT}, got ${rc}\n${err}")
endif()
if(NOT out MATCHES "${REGEX}")
  message(FATAL_ERROR "output does not match '${REGEX}'")
endif()
