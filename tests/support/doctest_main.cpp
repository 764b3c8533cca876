// SPDX-License-Identifier: MIT
// doctest's implementation and main(), compiled once and linked into every suite that
// sgmcmc_add_test builds (tests/CMakeLists.txt), instead of once per suite: each copy cost
// several seconds of compile time.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
