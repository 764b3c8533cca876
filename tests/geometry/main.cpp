// SPDX-License-Identifier: MIT
// doctest entry point for the geometry tests (SGRLD, SGRHMC, the naive controls).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
