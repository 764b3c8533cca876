// SPDX-License-Identifier: MIT
// SGLD (MATH.md §2.1–2.2): z = θ, H = U, D = D₀ constant SPD, Q = 0, Γ = 0.
//   θ ← θ - h D₀ g + N(0, h(2TD₀ - h D₀V̂D₀)).   Welling–Teh's ε: h = ε/2, D₀ = I.
#pragma once

#include "sgmcmc/samplers/sampler.hpp"

namespace sgmcmc {

/// The recipe declaration behind SGLD with diffusion structure DS (Scaled, Diagonal, DiagonalMap
/// or Dense); Cold = true is SGD.
template <class Scalar, int Dim, class DS, bool Cold = false>
using SGLDRecipe =
    Recipe<Scalar, Layout<Dim>, Energy<>, Diffusion<DS>, Curl<>, ExplicitEuler, Cold>;

/// Parameters of SGLD.
template <class Scalar, class DS>
struct SGLDParams {
  Scalar step_size{Scalar(1e-3)};  ///< h (MATH.md convention; Welling–Teh ε = 2h)
  DS diffusion{};                  ///< D₀, default the identity
};

/// Stochastic-gradient Langevin dynamics with a constant preconditioner D₀ of structure DS:
/// Scaled<Scalar> (D₀ = s I, default s = 1), Diagonal<Scalar, Dim>, DiagonalMap<Scalar, Dim>
/// (any d, values in caller memory) or Dense<Scalar, Dim, Dim> (symmetric positive definite).
template <class Scalar, int Dim, class DS = Scaled<Scalar>>
class SGLD : public RecipeSampler<SGLD<Scalar, Dim, DS>, SGLDRecipe<Scalar, Dim, DS>,
                                  SGLDParams<Scalar, DS>> {
  using Base =
      RecipeSampler<SGLD<Scalar, Dim, DS>, SGLDRecipe<Scalar, Dim, DS>, SGLDParams<Scalar, DS>>;

 public:
  using Params = SGLDParams<Scalar, DS>;
  explicit SGLD(const Params& p = Params{}) noexcept : Base(p) {}

  /// The recipe of parameters p.
  static SGLDRecipe<Scalar, Dim, DS> make_recipe(const Params& p) noexcept {
    return {Energy<>{}, Diffusion<DS>{{p.diffusion}}, Curl<>{}, p.step_size};
  }
};

template <int Dim>
using SGLDf = SGLD<float, Dim>;
template <int Dim>
using SGLDd = SGLD<double, Dim>;

}  // namespace sgmcmc
