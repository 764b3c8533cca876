// SPDX-License-Identifier: MIT
// Fixed-size Eigen aliases shared by every header. No dynamic sizes anywhere in the core.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

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

namespace detail {

/// Bits of x - x OR-ed into acc: x - x is ±0 for a finite x and NaN for ±Inf or NaN, so acc has
/// no bit but the sign bit set iff every entry seen is finite. Exact; a plain loop that compilers
/// inline and vectorise, where Eigen's allFinite() is a scalar loop with an early exit, which the
/// step paid three to five times. Like allFinite(), blind under -ffinite-math-only (-ffast-math).
template <class Derived, class Bits>
void accumulate_nonfinite(const Eigen::PlainObjectBase<Derived>& x, Bits& acc) noexcept {
  using S = typename Derived::Scalar;
  static_assert(sizeof(S) == sizeof(Bits), "one word of bits per scalar");
  const S* p = x.data();
  for (Index i = 0; i < x.size(); ++i) {
    const S d = p[i] - p[i];
    Bits b;
    std::memcpy(&b, &d, sizeof b);
    acc |= b;
  }
}
/// Unsigned word of a scalar's size.
template <class S>
using BitsOf = std::conditional_t<sizeof(S) == 4, std::uint32_t, std::uint64_t>;
/// True iff bits OR-ed by accumulate_nonfinite came from finite entries only (the sign bit, set
/// by -0 under a downward rounding mode, is ignored).
template <class Bits>
constexpr bool finite_bits(Bits acc) noexcept {
  return static_cast<Bits>(acc << 1) == 0;
}
/// True iff every entry of x is finite (see accumulate_nonfinite).
template <class Derived>
bool all_finite(const Eigen::PlainObjectBase<Derived>& x) noexcept {
  BitsOf<typename Derived::Scalar> acc = 0;
  accumulate_nonfinite(x, acc);
  return finite_bits(acc);
}
/// Expressions and maps: evaluated first.
template <class Derived>
bool all_finite(const Eigen::MatrixBase<Derived>& x) noexcept {
  return all_finite(x.eval());
}

}  // namespace detail

}  // namespace sgmcmc
