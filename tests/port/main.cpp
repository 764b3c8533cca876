// SPDX-License-Identifier: MIT
// doctest entry point for the port tests.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
