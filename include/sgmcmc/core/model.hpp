// SPDX-License-Identifier: MIT
// The model concept: what a user's type must provide, checked with plain-English messages, and
// how the engine calls it (fixed-size maps, with the older fixed-size-vector spelling adapted).
#pragma once

#include <type_traits>
#include <utility>

#include "sgmcmc/core/types.hpp"

namespace sgmcmc {

/// A model is any type with a const member
///   template <class Theta, class Grad> void gradient(const Theta& theta, Grad& grad) const;
/// writing grad = ∇Ũ(θ), the gradient of the (minibatch) potential U = −log density (not the
/// log-density), and optionally
///   template <class Theta> Scalar potential(const Theta& theta) const;  // full-data U (HMC, NUTS)
/// The engine passes θ as a ConstVectorMap<Scalar, Dim> and grad as a VectorMap<Scalar, Dim>
/// (Eigen maps with compile-time sizes over the state's memory), so any d works. Models written
/// for fixed-size vectors, gradient(const Vector<Scalar, Dim>&, Vector<Scalar, Dim>&), still work
/// for states up to kLegacyModelBytes (θ and grad are copied through stack vectors).
/// Neither may allocate. A minibatch model draws its batch inside gradient() (it may keep a
/// mutable batch buffer) or is re-pointed at a new batch by the caller before each step.
template <class Model, class Scalar, int Dim, class = void>
struct HasMapGradient : std::false_type {};
template <class Model, class Scalar, int Dim>
struct HasMapGradient<Model, Scalar, Dim,
                      std::void_t<decltype(std::declval<const Model&>().gradient(
                          std::declval<const ConstVectorMap<Scalar, Dim>&>(),
                          std::declval<VectorMap<Scalar, Dim>&>()))>> : std::true_type {};

template <class Model, class Scalar, int Dim, class = void>
struct HasVectorGradient : std::false_type {};
template <class Model, class Scalar, int Dim>
struct HasVectorGradient<
    Model, Scalar, Dim,
    std::void_t<decltype(std::declval<const Model&>().gradient(
        std::declval<const Vector<Scalar, Dim>&>(), std::declval<Vector<Scalar, Dim>&>()))>>
    : std::true_type {};

/// Largest θ (in bytes) for which a fixed-size-vector model is adapted by copying.
inline constexpr int kLegacyModelBytes = 16384;

template <class Model, class Scalar, int Dim>
struct HasGradient : std::bool_constant<HasMapGradient<Model, Scalar, Dim>::value ||
                                        (HasVectorGradient<Model, Scalar, Dim>::value &&
                                         Dim * int(sizeof(Scalar)) <= kLegacyModelBytes)> {};

template <class Model, class Scalar, int Dim, class = void>
struct HasMapPotential : std::false_type {};
template <class Model, class Scalar, int Dim>
struct HasMapPotential<Model, Scalar, Dim,
                       std::void_t<decltype(std::declval<const Model&>().potential(
                           std::declval<const ConstVectorMap<Scalar, Dim>&>()))>>
    : std::is_convertible<decltype(std::declval<const Model&>().potential(
                              std::declval<const ConstVectorMap<Scalar, Dim>&>())),
                          Scalar> {};

template <class Model, class Scalar, int Dim, class = void>
struct HasVectorPotential : std::false_type {};
template <class Model, class Scalar, int Dim>
struct HasVectorPotential<Model, Scalar, Dim,
                          std::void_t<decltype(std::declval<const Model&>().potential(
                              std::declval<const Vector<Scalar, Dim>&>()))>>
    : std::is_convertible<decltype(std::declval<const Model&>().potential(
                              std::declval<const Vector<Scalar, Dim>&>())),
                          Scalar> {};

template <class Model, class Scalar, int Dim>
struct HasPotential : std::bool_constant<HasMapPotential<Model, Scalar, Dim>::value ||
                                         (HasVectorPotential<Model, Scalar, Dim>::value &&
                                          Dim * int(sizeof(Scalar)) <= kLegacyModelBytes)> {};

template <class Model, class Scalar, int Dim>
constexpr void check_gradient_model() noexcept {
  static_assert(HasGradient<Model, Scalar, Dim>::value,
                "sgmcmc: the model needs a const member gradient(theta, grad) writing the "
                "gradient of the potential U = -log density; write it as a template "
                "(template <class Theta, class Grad> void gradient(const Theta&, Grad&) const): "
                "the engine passes Eigen maps of compile-time size Dim (core/model.hpp)");
}

template <class Model, class Scalar, int Dim>
constexpr void check_potential_model() noexcept {
  check_gradient_model<Model, Scalar, Dim>();
  static_assert(HasPotential<Model, Scalar, Dim>::value,
                "sgmcmc: this sampler's Metropolis test needs a const member "
                "potential(theta) returning the full-data U (a template over the Eigen type of "
                "theta, core/model.hpp)");
}

namespace detail {

/// Re-stores a gradient of one 32-byte group (32 to 63 bytes: float d = 8-15, double d = 4-7) in
/// one 32-byte store, read 16 bytes at a time (x86; GCC 12 or Clang), where Eigen's best packet
/// for Dim is narrower (every such Dim in a portable build; float d = 9-15 and double d = 5-7
/// natively). The engine reads the gradient right after the model has written it, in 32-byte
/// vectors where the step runs AVX2 code, and a load that spans two pending 16-byte stores cannot
/// be forwarded from them: it waits until they reach the cache, on the step's critical path.
/// Loads of 16 bytes from those stores forward, and the engine's loads then forward from this
/// store. The same values; nothing past the gradient is read or written. Two or more groups were
/// measured slower and are left as written (docs/PERFORMANCE.md).
template <class Scalar, int Dim>
inline void restore_in_32_bytes(Scalar* g) noexcept {
#if (defined(__x86_64__) || defined(__i386__)) && \
    ((defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12) || defined(__clang__))
  constexpr int bytes = Dim * int(sizeof(Scalar));
  if constexpr (bytes >= 32 && bytes < 64 && kEigenPacketBytes<Scalar, Dim> < 32) {
    typedef Scalar Half __attribute__((vector_size(16)));   // NOLINT: GCC drops it from `using`
    typedef Scalar Whole __attribute__((vector_size(32)));  // NOLINT
    constexpr int n = 16 / int(sizeof(Scalar));
    Half lo;
    Half hi;
    __builtin_memcpy(&lo, g, 16);
    __builtin_memcpy(&hi, g + n, 16);
    Whole w;
    if constexpr (n == 4) {
      w = __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7);
    } else {
      w = __builtin_shufflevector(lo, hi, 0, 1, 2, 3);
    }
    __builtin_memcpy(g, &w, 32);
  } else {
    static_cast<void>(g);
  }
#else
  static_cast<void>(g);
#endif
}

/// grad[0 .. Dim) = ∇Ũ(theta[0 .. Dim)) through the model, whichever spelling it has.
template <class Scalar, int Dim, class Model>
void call_gradient(const Model& model, const Scalar* theta, Scalar* grad) noexcept {
  check_gradient_model<Model, Scalar, Dim>();
  if constexpr (HasMapGradient<Model, Scalar, Dim>::value) {
    const ConstVectorMap<Scalar, Dim> th(theta);
    VectorMap<Scalar, Dim> g(grad);
    model.gradient(th, g);
  } else {
    const Vector<Scalar, Dim> th = ConstVectorMap<Scalar, Dim>(theta);
    Vector<Scalar, Dim> g;
    model.gradient(th, g);
    VectorMap<Scalar, Dim> out(grad);
    out = g;
  }
  restore_in_32_bytes<Scalar, Dim>(grad);
}

/// The model's U(theta), whichever spelling it has.
template <class Scalar, int Dim, class Model>
Scalar call_potential(const Model& model, const Scalar* theta) noexcept {
  check_potential_model<Model, Scalar, Dim>();
  if constexpr (HasMapPotential<Model, Scalar, Dim>::value) {
    return Scalar(model.potential(ConstVectorMap<Scalar, Dim>(theta)));
  } else {
    const Vector<Scalar, Dim> th = ConstVectorMap<Scalar, Dim>(theta);
    return Scalar(model.potential(th));
  }
}

/// The model's potential at θ held in a Vector of any scalar T (automatic differentiation's
/// included): called with the Vector when the model takes one (a template over the Eigen type or
/// over the scalar), else through an aligned copy viewed as ConstVectorMap<T, Dim> (small d).
template <class Model, class T, int Dim>
T potential_at(const Model& model, const Vector<T, Dim>& theta) noexcept {
  if constexpr (HasVectorPotential<Model, T, Dim>::value) {
    return T(model.potential(theta));
  } else {
    static_assert(HasMapPotential<Model, T, Dim>::value,
                  "sgmcmc: this metric reads the model's potential: give the model a const "
                  "potential(theta) written as a template over the Eigen type of theta (automatic "
                  "differentiation calls it with its own scalar type, core/model.hpp)");
    static_assert(Dim * int(sizeof(T)) <= kLegacyModelBytes,
                  "sgmcmc: potential_at copies θ; at this size give the model a potential that "
                  "takes Vector<T, Dim> or any Eigen type");
    alignas(kAlignBytes) T buf[Dim];
    for (int i = 0; i < Dim; ++i) buf[i] = theta[i];
    return T(model.potential(ConstVectorMap<T, Dim>(buf)));
  }
}

}  // namespace detail

}  // namespace sgmcmc
