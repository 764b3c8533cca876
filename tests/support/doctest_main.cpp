// SPDX-License-Identifier: MIT
// doctest's implementation and main(), compiled once and linked into every suite that
// sgmcmc_add_test builds (cmake/sgmcmc_tests.cmake) and into scripts/cm4-host-test's, instead of
// once per suite: each copy cost several seconds of compile time.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
