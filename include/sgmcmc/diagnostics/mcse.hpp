// SPDX-License-Identifier: MIT
// The mean of a stored chain with its Monte Carlo standard error √(var/ESS), ESS by Geyer's
// initial monotone sequence (diagnostics/ess.hpp): the tolerance of a statistical check.
#pragma once

#include <cmath>
#include <cstddef>

#include "sgmcmc/diagnostics/ess.hpp"

namespace sgmcmc {

/// A chain's mean, its Monte Carlo standard error and the ESS behind it.
template <class Scalar>
struct MeanEstimate {
  Scalar mean;  ///< (1/n) Σ x_t
  Scalar se;    ///< √(γ₀/ESS), γ₀ the (1/n) variance; NaN where the ESS is
  Scalar ess;   ///< Geyer ESS (ess_geyer)
};

/// Mean and standard error of x[0], x[stride], ..., x[(n−1) stride]. NaN se and ESS for n < 4 or
/// a constant chain (as ess_geyer).
template <class Scalar>
MeanEstimate<Scalar> mean_with_error(const Scalar* x, std::size_t n,
                                     std::size_t stride = 1) noexcept {
  Scalar mean = 0;
  for (std::size_t t = 0; t < n; ++t) mean += x[t * stride];
  mean = n > 0 ? mean / Scalar(n) : mean;
  Scalar var = 0;
  for (std::size_t t = 0; t < n; ++t) var += (x[t * stride] - mean) * (x[t * stride] - mean);
  var = n > 0 ? var / Scalar(n) : var;
  const ESSEstimate<Scalar> e = ess_geyer(x, n, stride);
  return {mean, std::sqrt(var / e.ess), e.ess};
}

}  // namespace sgmcmc
