// SPDX-License-Identifier: MIT
// Fixed-size Eigen aliases shared by every header. No dynamic sizes anywhere in the core.
#pragma once

#include <Eigen/Core>

namespace sgmcmc {

using Index = Eigen::Index;

/// Column vector with a compile-time size.
template <class Scalar, int N>
using Vector = Eigen::Matrix<Scalar, N, 1>;

/// Matrix with compile-time sizes.
template <class Scalar, int Rows, int Cols>
using Matrix = Eigen::Matrix<Scalar, Rows, Cols>;

/// Tolerances per scalar type (Sophus style): used by validators, never in the step.
template <class Scalar>
struct Constants;
template <>
struct Constants<float> {
  static constexpr float epsilon() noexcept { return 1e-5f; }
};
template <>
struct Constants<double> {
  static constexpr double epsilon() noexcept { return 1e-10; }
};

}  // namespace sgmcmc
