# The doctest suites' helpers, for every folder that adds a test (tests/, examples/): included by
# the top-level CMakeLists.txt when SGMCMC_BUILD_TESTS is on.
find_package(doctest REQUIRED)

# sgmcmc_doctest_flags(TARGET): doctest without exceptions or RTTI (the core promises neither).
function(sgmcmc_doctest_flags target)
  target_link_libraries(${target} PRIVATE doctest::doctest)
  target_compile_options(${target} PRIVATE -fno-exceptions -fno-rtti)
  target_compile_definitions(${target} PRIVATE DOCTEST_CONFIG_NO_EXCEPTIONS_BUT_WITH_ALL_ASSERTS)
endfunction()

# doctest's implementation and main(), compiled once for all suites (tests/support/doctest_main.cpp).
add_library(sgmcmc_doctest_main STATIC ${PROJECT_SOURCE_DIR}/tests/support/doctest_main.cpp)
sgmcmc_doctest_flags(sgmcmc_doctest_main)
target_link_libraries(sgmcmc_doctest_main PRIVATE sgmcmc_warnings)

# sgmcmc_add_test(NAME [OWN_MAIN] SOURCES...): a doctest executable linked to the library and host
# port, registered with ctest. Its sources hold test cases only; doctest's main() comes from
# sgmcmc_doctest_main, unless OWN_MAIN says a source defines DOCTEST_CONFIG_IMPLEMENT itself
# (tests/parallel/test_mpi.cpp, which starts MPI around doctest).
function(sgmcmc_add_test name)
  cmake_parse_arguments(arg "OWN_MAIN" "" "" ${ARGN})
  add_executable(${name} ${arg_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE sgmcmc::sgmcmc sgmcmc::host sgmcmc_warnings)
  if(NOT arg_OWN_MAIN)
    target_link_libraries(${name} PRIVATE sgmcmc_doctest_main)
  endif()
  sgmcmc_doctest_flags(${name})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
  add_test(NAME ${name} COMMAND ${name})
endfunction()
