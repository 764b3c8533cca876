// Test support: small deterministic models and a tiny RNG meeting the port contract, shared by
// the core and conformance tests (the statistical targets live in targets.hpp).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "local_rng.hpp"
#include "sgmcmc/core/state.hpp"
#include "sgmcmc/core/types.hpp"

namespace sgmcmc_test {

/// The shared test RNG (xoshiro256**), meets include/sgmcmc/port/rng.hpp.
using TinyRng = LocalRng;

// Models are templates over the argument types (core/model.hpp): the engine passes Eigen maps of
// compile-time size Dim, tests may pass fixed-size vectors.

/// U(θ) = Σ θ_i⁴/4 + ½ θᵀAθ with A = I + 0.3 (ones - I): a non-quadratic, coupled potential.
template <class Scalar, int Dim>
struct QuarticModel {
  template <class Theta, class Grad>
  void gradient(const Theta& th, Grad& g) const {
    const Scalar s = th.sum();
    for (int i = 0; i < Dim; ++i)
      g[i] = th[i] * th[i] * th[i] + Scalar(0.7) * th[i] + Scalar(0.3) * s;
  }
  template <class Theta>
  Scalar potential(const Theta& th) const {
    const Scalar s = th.sum();
    return th.array().pow(4).sum() / Scalar(4) + Scalar(0.35) * th.squaredNorm() +
           Scalar(0.15) * s * s;
  }
};

/// Returns a gradient with one entry replaced by bad (NaN or Inf).
template <class Scalar, int Dim>
struct BadGradientModel {
  Scalar bad = std::numeric_limits<Scalar>::quiet_NaN();
  template <class Theta, class Grad>
  void gradient(const Theta& th, Grad& g) const {
    g = th;
    g[Dim - 1] = bad;
  }
  template <class Theta>
  Scalar potential(const Theta& th) const {
    return th.squaredNorm() / 2;
  }
};

/// A model that allocates on every gradient: the positive control of the allocation counter.
template <class Scalar, int Dim>
struct AllocatingModel {
  template <class Theta, class Grad>
  void gradient(const Theta& th, Grad& g) const {
    std::vector<Scalar> tmp(th.data(), th.data() + Dim);
    for (int i = 0; i < Dim; ++i) g[i] = tmp[static_cast<std::size_t>(i)];
  }
  template <class Theta>
  Scalar potential(const Theta& th) const {
    return th.squaredNorm() / 2;
  }
};

/// A State's or StateMap's value as stored (core/state.hpp): the header (the current-copy index
/// and the per-chain bookkeeping, bytes as stored) and the current copy of z (every block with its
/// padding). What a step commits changes these bytes; the other copy and the scratch are not part
/// of the value.
template <class St>
struct StoredValue {
  using Shape = typename St::ShapeType;
  using Scalar = typename Shape::Scalar;
  static constexpr std::size_t header_bytes = std::size_t(Shape::header_size) * sizeof(Scalar);
  static constexpr std::size_t value_bytes = std::size_t(Shape::value_stride) * sizeof(Scalar);
  static constexpr std::size_t bytes = header_bytes + value_bytes;

  static const unsigned char* header(const St& z) {
    return reinterpret_cast<const unsigned char*>(z.data());
  }
  static const unsigned char* current(const St& z) {
    const int front = sgmcmc::detail::StateAccess::front(z);
    return reinterpret_cast<const unsigned char*>(z.data() + Shape::copy_offset(front));
  }
  /// Copies the value's bytes to out[0 .. bytes).
  static void save(const St& z, unsigned char* out) {
    std::memcpy(out, header(z), header_bytes);
    std::memcpy(out + header_bytes, current(z), value_bytes);
  }
  /// True iff z's value has exactly the saved bytes.
  static bool same(const St& z, const unsigned char* saved) {
    return std::memcmp(header(z), saved, header_bytes) == 0 &&
           std::memcmp(current(z), saved + header_bytes, value_bytes) == 0;
  }
  /// True iff two states' values have the same bytes.
  static bool same(const St& a, const St& b) {
    return std::memcmp(header(a), header(b), header_bytes) == 0 &&
           std::memcmp(current(a), current(b), value_bytes) == 0;
  }
};

/// Bit-for-bit equality of two states (distinguishes -0 from +0, equal NaNs). For a State or
/// StateMap: the stored bytes of the header (index and bookkeeping) and of the current copy of z
/// (StoredValue), not operator==, which compares copies of the bookkeeping whose padding bytes
/// are indeterminate. For a BlockState: its flat vector.
template <class State>
bool bit_identical(const State& a, const State& b) {
  if constexpr (sgmcmc::detail::IsState<State>::value) {
    return StoredValue<State>::same(a, b);
  } else {
    const auto fa = a.flat();
    const auto fb = b.flat();
    for (int i = 0; i < fa.size(); ++i) {
      if (std::memcmp(&fa[i], &fb[i], sizeof(fa[i])) != 0) return false;
    }
    return true;
  }
}

}  // namespace sgmcmc_test
