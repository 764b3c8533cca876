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

/// Gradients up to this many bytes are re-stored for the engine's wide loads (below); past it
/// the extra pass cost more than the stall it removes (docs/PERFORMANCE.md).
inline constexpr int kRestoreMaxBytes = 512;

#if SGMCMC_WIDE_STEP && \
    ((defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12) || defined(__clang__))
/// Whether call_gradient can re-store the gradient (restore_for_wide_loads, below): GCC 12 or
/// Clang, where the step runs 32-byte or wider loads (SGMCMC_WIDE_STEP; a baseline-only build has
/// none to serve).
#define SGMCMC_RESTORE_GRADIENT 1
/// out = lo and hi joined: two vectors of n lanes into one of 2n (GCC 12 or Clang vector
/// extensions; wider vectors by reference only, since a baseline translation unit has no ABI for
/// them).
template <class Narrow, class Wider>
[[gnu::always_inline]] inline void join_vectors(const Narrow& lo, const Narrow& hi,
                                                Wider& out) noexcept {
  constexpr int lanes = int(sizeof(Narrow) / sizeof(lo[0]));
  static_assert(lanes == 2 || lanes == 4 || lanes == 8, "join_vectors: 2, 4 or 8 lanes");
  if constexpr (lanes == 2) {
    out = __builtin_shufflevector(lo, hi, 0, 1, 2, 3);
  } else if constexpr (lanes == 4) {
    out = __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7);
  } else {
    out = __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  }
}

/// The first `bytes` (32 or 64) bytes of g read 16 at a time, joined, and stored in one store.
template <int bytes, class Scalar>
[[gnu::always_inline]] inline void restore_group(Scalar* g) noexcept {
  using V16 = typename GnuVector<Scalar, 16>::type;
  using V32 = typename GnuVector<Scalar, 32>::type;
  constexpr int n = 16 / int(sizeof(Scalar));
  V16 p[bytes / 16];
  for (int i = 0; i < bytes / 16; ++i) {
    __builtin_memcpy(&p[i], g + i * n, 16);
  }
  V32 lo;
  join_vectors(p[0], p[1], lo);
  if constexpr (bytes == 32) {
    __builtin_memcpy(g, &lo, 32);
  } else {
    V32 hi;
    join_vectors(p[2], p[3], hi);
    typename GnuVector<Scalar, 64>::type w;
    join_vectors(lo, hi, w);
    __builtin_memcpy(g, &w, 64);
  }
}

/// The engine's widest loads: 64 bytes where the translation unit has AVX-512, else 32.
#ifdef __AVX512F__
inline constexpr int kRestoreBytes = 64;
#else
inline constexpr int kRestoreBytes = 32;
#endif
#else
#define SGMCMC_RESTORE_GRADIENT 0
inline constexpr int kRestoreBytes = 0;
#endif

/// Whether call_gradient re-stores a gradient of Dim Scalars (restore_for_wide_loads): at most
/// 512 bytes, with at least one 64-byte group (where kRestoreBytes is 64) or 32-byte group that
/// Eigen writes in narrower packets.
template <class Scalar, int Dim>
constexpr bool restores_gradient() noexcept {
  constexpr int bytes = Dim * int(sizeof(Scalar));
  constexpr int packet = kEigenPacketBytes<Scalar, Dim>;
  return kRestoreBytes > 0 && bytes <= kRestoreMaxBytes &&
         ((kRestoreBytes == 64 && bytes >= 64 && packet < 64) || (bytes >= 32 && packet < 32));
}
template <class Scalar, int Dim>
inline constexpr bool kRestoresGradient = restores_gradient<Scalar, Dim>();

/// Re-stores a gradient of 32 to 512 bytes in the engine's vector width (x86; GCC 12 or Clang):
/// 32-byte groups, or 64-byte ones where the translation unit has AVX-512 (then 32 for what is
/// left), each read 16 bytes at a time and stored whole, where Eigen's best packet for Dim is
/// narrower than the group. The engine reads the gradient right after the model has written it,
/// in 32-byte vectors where the step runs AVX2 code (64 natively with AVX-512 preferred), and a
/// load that spans two pending narrower stores cannot be forwarded from them: it waits until they
/// reach the cache, on the step's critical path. Loads of 16 bytes from Eigen's stores forward,
/// and the engine's loads then forward from these. The same values; nothing past the gradient is
/// read or written. Above 512 bytes the extra pass measured slower than the stall it removes
/// (docs/PERFORMANCE.md). Works only inlined into the step's copy (call_gradient is forced inline
/// there): compiled for the baseline, a 32-byte store is two 16-byte ones.
template <class Scalar, int Dim>
[[gnu::always_inline]] inline void restore_for_wide_loads(Scalar* g) noexcept {
#if SGMCMC_RESTORE_GRADIENT
  if constexpr (kRestoresGradient<Scalar, Dim>) {
    constexpr int s = int(sizeof(Scalar));
    int k = 0;
    if constexpr (kRestoreBytes == 64 && kEigenPacketBytes<Scalar, Dim> < 64) {
      for (; k + 64 / s <= Dim; k += 64 / s) restore_group<64>(g + k);
    }
    if constexpr (kEigenPacketBytes<Scalar, Dim> < 32) {
      for (; k + 32 / s <= Dim; k += 32 / s) restore_group<32>(g + k);
    }
  }
#endif
  static_cast<void>(g);
}

/// grad[0 .. Dim) = ∇Ũ(theta[0 .. Dim)) through the model, whichever spelling it has.
template <class Scalar, int Dim, class Model>
void model_gradient(const Model& model, const Scalar* theta, Scalar* grad) noexcept {
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
}

/// model_gradient, then re-stored for the engine's wide loads where that pays
/// (kRestoresGradient). Then this call is forced into the caller, the step's copy, since the
/// re-store is wide only there (GCC's heuristics had kept it out of line, as baseline code, at
/// float d = 32 in bench_step); the model's own call is left to GCC. Forcing the model inline as
/// well made bench_step's small steps faster still (SGLD float d = 32 23 → 21.5 ns) but spends
/// more of the unit's inlining budget, which real models need (docs/PERFORMANCE.md); forcing
/// this call inline where nothing is re-stored made GCC leave the model's Eigen copy out of line
/// in HMC at double d = 100 (25 % slower).
template <class Scalar, int Dim, class Model>
SGMCMC_ENGINE_INLINE inline std::enable_if_t<kRestoresGradient<Scalar, Dim>> call_gradient(
    const Model& model, const Scalar* theta, Scalar* grad) noexcept {
  model_gradient<Scalar, Dim>(model, theta, grad);
  restore_for_wide_loads<Scalar, Dim>(grad);
}

template <class Scalar, int Dim, class Model>
std::enable_if_t<!kRestoresGradient<Scalar, Dim>> call_gradient(const Model& model,
                                                                const Scalar* theta,
                                                                Scalar* grad) noexcept {
  model_gradient<Scalar, Dim>(model, theta, grad);
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
