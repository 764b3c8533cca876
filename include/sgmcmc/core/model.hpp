// SPDX-License-Identifier: MIT
// The model concept: what a user's type must provide, checked with plain-English messages.
#pragma once

#include <type_traits>
#include <utility>

#include "sgmcmc/core/types.hpp"

namespace sgmcmc {

/// A model is any type with
///   void gradient(const Vector<Scalar, Dim>& theta, Vector<Scalar, Dim>& grad) const;
/// writing grad = ∇Ũ(θ), the gradient of the (minibatch) potential U = -log density (not the
/// log-density), and optionally
///   Scalar potential(const Vector<Scalar, Dim>& theta) const;   // full-data U, for HMC's test
/// Neither may allocate. A minibatch model draws its batch inside gradient() (it may keep a
/// mutable batch buffer) or is re-pointed at a new batch by the caller before each step.
template <class Model, class Scalar, int Dim, class = void>
struct HasGradient : std::false_type {};
template <class Model, class Scalar, int Dim>
struct HasGradient<
    Model, Scalar, Dim,
    std::void_t<decltype(std::declval<const Model&>().gradient(
        std::declval<const Vector<Scalar, Dim>&>(), std::declval<Vector<Scalar, Dim>&>()))>>
    : std::true_type {};

template <class Model, class Scalar, int Dim, class = void>
struct HasPotential : std::false_type {};
template <class Model, class Scalar, int Dim>
struct HasPotential<Model, Scalar, Dim,
                    std::void_t<decltype(std::declval<const Model&>().potential(
                        std::declval<const Vector<Scalar, Dim>&>()))>>
    : std::is_convertible<decltype(std::declval<const Model&>().potential(
                              std::declval<const Vector<Scalar, Dim>&>())),
                          Scalar> {};

template <class Model, class Scalar, int Dim>
constexpr void check_gradient_model() noexcept {
  static_assert(HasGradient<Model, Scalar, Dim>::value,
                "sgmcmc: the model needs a const member "
                "gradient(const Vector<Scalar, Dim>& theta, Vector<Scalar, Dim>& grad) "
                "writing the gradient of the potential U = -log density");
}

template <class Model, class Scalar, int Dim>
constexpr void check_potential_model() noexcept {
  check_gradient_model<Model, Scalar, Dim>();
  static_assert(HasPotential<Model, Scalar, Dim>::value,
                "sgmcmc: this sampler's Metropolis test needs a const member "
                "potential(const Vector<Scalar, Dim>& theta) returning the full-data U");
}

}  // namespace sgmcmc
