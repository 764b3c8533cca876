// SPDX-License-Identifier: MIT
// The library's version (semantic versioning; before 1.0 a minor version may break the API).
#pragma once

#define SGMCMC_VERSION_MAJOR 0
#define SGMCMC_VERSION_MINOR 2
#define SGMCMC_VERSION_PATCH 0
/// MAJOR * 10000 + MINOR * 100 + PATCH.
#define SGMCMC_VERSION \
  (SGMCMC_VERSION_MAJOR * 10000 + SGMCMC_VERSION_MINOR * 100 + SGMCMC_VERSION_PATCH)

namespace sgmcmc {
/// The version as "MAJOR.MINOR.PATCH".
inline constexpr const char* version_string = "0.2.0";
}  // namespace sgmcmc
