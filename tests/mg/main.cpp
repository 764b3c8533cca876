// SPDX-License-Identifier: MIT
// doctest entry point for the monomial-gamma and trajectory-length sampler tests.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
