// SPDX-License-Identifier: MIT
// detail::call_gradient's re-store of the gradient for the engine's wide loads (core/model.hpp):
// the same bits as the model wrote, nothing outside grad[0 .. Dim) read or written, in the step's
// dispatched copy and in the baseline, for sizes with and without a re-store and with and
// without a tail after the last whole group; both model spellings.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>

#include "sgmcmc/core/model.hpp"

namespace sgmcmc {
namespace {

/// ∇U = 2θ - 1 through Eigen maps (the engine's spelling). 2θ is exact, so the value is the same
/// whether or not the compiler fuses the multiply and the subtraction.
struct MapModel {
  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& g) const noexcept {
    using S = typename Theta::Scalar;
    g = S(2) * theta.array() - S(1);
  }
};

/// The same through Eigen vectors (the legacy spelling, small states only).
struct VectorModel {
  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& g) const noexcept {
    using S = typename Theta::Scalar;
    g = (S(2) * theta.array() - S(1)).matrix();
  }
};

constexpr int kGuard = 16;  // scalars either side of the gradient
constexpr unsigned char kFill = 0xA5;

template <class Scalar, int Dim, class Model, class Call>
void check(const Call& call) {
  alignas(64) Scalar theta[Dim];
  alignas(64) Scalar buffer[Dim + 2 * kGuard];
  for (int i = 0; i < Dim; ++i) {
    theta[i] = Scalar(0.25) * Scalar(i) - Scalar(1.5) + Scalar(1) / Scalar(3 + i);
  }
  std::memset(buffer, kFill, sizeof(buffer));
  Scalar* g = buffer + kGuard;
  call(Model{}, theta, g);
  for (int i = 0; i < Dim; ++i) {
    const Scalar expect = Scalar(2) * theta[i] - Scalar(1);
    CHECK(std::memcmp(&g[i], &expect, sizeof(Scalar)) == 0);
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(buffer);
  bool guards_intact = true;
  for (std::size_t b = 0; b < kGuard * sizeof(Scalar); ++b) {
    guards_intact = guards_intact && bytes[b] == kFill && bytes[sizeof(buffer) - 1 - b] == kFill;
  }
  CHECK(guards_intact);
}

template <class Scalar, int Dim, class Model>
void check_both_copies() {
  CAPTURE(Dim);
  CAPTURE(sizeof(Scalar));
  // The baseline copy (this translation unit's instruction set).
  check<Scalar, Dim, Model>([](const Model& m, const Scalar* th, Scalar* g) {
    detail::call_gradient<Scalar, Dim>(m, th, g);
  });
  // The copy a step of this size is dispatched to (in a portable build AVX2 on a CPU that has
  // it, AVX-512 from 512 bytes on a CPU with AVX-512).
  check<Scalar, Dim, Model>([](const Model& m, const Scalar* th, Scalar* g) {
    constexpr std::size_t bytes = std::size_t(Dim) * sizeof(Scalar);
    detail::dispatched<false, bytes>([&] { detail::call_gradient<Scalar, Dim>(m, th, g); });
  });
}

template <class Scalar, int... Dims>
void check_sizes() {
  (check_both_copies<Scalar, Dims, MapModel>(), ...);
}

TEST_CASE("the re-stored gradient has the model's bits and nothing past it is touched") {
  // float: below one group, one group, one group and a tail, several, 512 bytes, past 512 bytes.
  check_sizes<float, 3, 7, 8, 10, 15, 16, 32, 37, 100, 128, 129, 200>();
  check_sizes<double, 3, 4, 5, 7, 8, 10, 16, 37, 64, 65, 100>();
  check_both_copies<float, 10, VectorModel>();
  check_both_copies<double, 6, VectorModel>();
}

TEST_CASE("the re-store is compiled where the test expects it") {
  // Not vacuous: on x86 with GCC 12 or Clang the sizes above include re-stored ones.
#if SGMCMC_RESTORE_GRADIENT
  CHECK(detail::kRestoreBytes >= 32);
  CHECK(detail::kRestoresGradient<float, 37> == (detail::kEigenPacketBytes<float, 37> < 32));
  CHECK(detail::kRestoresGradient<float, 10>);
  CHECK(detail::kRestoresGradient<double, 10>);
  CHECK_FALSE(detail::kRestoresGradient<float, 7>);    // 28 bytes: below one group
  CHECK_FALSE(detail::kRestoresGradient<float, 129>);  // 516 bytes: past the limit
  CHECK_FALSE(detail::kRestoresGradient<double, 65>);  // 520 bytes
#else
  CHECK(detail::kRestoreBytes == 0);
  CHECK_FALSE(detail::kRestoresGradient<float, 10>);
#endif
}

}  // namespace
}  // namespace sgmcmc
