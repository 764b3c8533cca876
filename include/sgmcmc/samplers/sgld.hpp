// SPDX-License-Identifier: MIT
// SGLD (MATH.md §2.1–2.2): z = θ, H = U, D = D₀ constant SPD, Q = 0, Γ = 0.
//   θ ← θ - h D₀ g + N(0, h(2D₀ - h D₀V̂D₀)).   Welling–Teh's ε: h = ε/2, D₀ = I.
#pragma once

#include "sgmcmc/core/recipe.hpp"

namespace sgmcmc {

/// The recipe declaration behind SGLD with diffusion structure DS (Scaled, Diagonal or Dense).
template <class Scalar, int Dim, class DS, bool Cold = false>
using SGLDRecipe =
    Recipe<Scalar, Layout<Dim>, Energy<>, Diffusion<DS>, Curl<>, ExplicitEuler, Cold>;

/// Stochastic-gradient Langevin dynamics with a constant preconditioner D₀ of structure DS:
/// Scaled<Scalar> (D₀ = s I, default s = 1), Diagonal<Scalar, Dim> or Dense<Scalar, Dim, Dim>.
template <class Scalar, int Dim, class DS = Scaled<Scalar>>
class SGLD : public SGLDRecipe<Scalar, Dim, DS> {
  using Base = SGLDRecipe<Scalar, Dim, DS>;

 public:
  static_assert(Dim > 0, "Dim must be positive");
  struct Params {
    Scalar step_size{Scalar(1e-3)};  ///< h (MATH.md convention; Welling–Teh ε = 2h)
    DS diffusion{};                  ///< D₀, default the identity
  };

  explicit SGLD(const Params& p) noexcept
      : Base(Energy<>{}, Diffusion<DS>{{p.diffusion}}, Curl<>{}, p.step_size) {}

  /// The state for a start position.
  typename Base::StateType start(const Vector<Scalar, Dim>& theta0) const noexcept {
    typename Base::StateType z;
    z.position() = theta0;
    return z;
  }
};

template <int Dim>
using SGLDf = SGLD<float, Dim>;
template <int Dim>
using SGLDd = SGLD<double, Dim>;

}  // namespace sgmcmc
