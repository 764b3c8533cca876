// SPDX-License-Identifier: MIT
// Biased negative controls (MATH.md §2.2): naive SGRHMC (recipe paper Eq. 27) and SGRLD without
// Γ. They sample the WRONG distribution whenever the metric varies; use them only to show that.
#pragma once

#include "sgmcmc/samplers/sgrhmc.hpp"
#include "sgmcmc/samplers/sgrld.hpp"

namespace sgmcmc {

/// Parameters of the naive controls (no divergence to give).
template <class Scalar, class MetricT>
struct NaiveParams {
  Scalar step_size{Scalar(1e-2)};  ///< h
  MetricT metric{};                ///< G(θ) or G⁻¹(θ)
};

/// BIASED. Naive SGRHMC, the recipe paper's Eq. (27): SGRHMC with the correction ∇·S dropped,
///   θ' = θ + hSr;  r' = r − hSg − hG⁻¹r + N(0, h(2G⁻¹ − hSV̂S)).
/// Its Fokker–Planck residual is −r s′(θ) ≠ 0 wherever G varies (MATH.md §2.2); it coincides with
/// SGHMC for a constant G. Built from the same recipe as SGRHMC with Γ declared zero (ZeroGamma).
template <class Scalar, int Dim, class MetricT, class Integrator = KickDrift>
class NaiveSGRHMC : public RecipeSampler<NaiveSGRHMC<Scalar, Dim, MetricT, Integrator>,
                                         SGRHMCRecipe<Scalar, Dim, MetricT, ZeroGamma, Integrator>,
                                         NaiveParams<Scalar, MetricT>> {
  using Base = RecipeSampler<NaiveSGRHMC<Scalar, Dim, MetricT, Integrator>,
                             SGRHMCRecipe<Scalar, Dim, MetricT, ZeroGamma, Integrator>,
                             NaiveParams<Scalar, MetricT>>;

 public:
  using Params = NaiveParams<Scalar, MetricT>;
  explicit NaiveSGRHMC(const Params& p = Params{}) noexcept : Base(p) {}
  static SGRHMCRecipe<Scalar, Dim, MetricT, ZeroGamma, Integrator> make_recipe(
      const Params& p) noexcept {
    return detail::sgrhmc_recipe<Scalar, Dim, MetricT, ZeroGamma, Integrator>(
        SGRHMCParams<Scalar, MetricT, ZeroGamma>{p.step_size, p.metric, {}});
  }
};

/// Parameters of naive gSGRHMC.
template <class Scalar>
struct NaiveGSGRHMCParams {
  Scalar step_size{Scalar(1e-2)};    ///< h
  PotentialMetric<Scalar> metric{};  ///< D, C and the floor
};

/// BIASED. Naive SGRHMC with the synthetic metric of the recipe paper's Figure 2 (MATH.md §5.1);
/// the counterpart of GSGRHMC, explicit Euler by default as Eq. (27) is written.
template <class Scalar, int Dim, class Integrator = ExplicitEuler>
class NaiveGSGRHMC
    : public RecipeSampler<
          NaiveGSGRHMC<Scalar, Dim, Integrator>,
          SGRHMCRecipe<Scalar, Dim, PotentialInverseMetric<Scalar>, ZeroGamma, Integrator>,
          NaiveGSGRHMCParams<Scalar>> {
  using Base = RecipeSampler<
      NaiveGSGRHMC<Scalar, Dim, Integrator>,
      SGRHMCRecipe<Scalar, Dim, PotentialInverseMetric<Scalar>, ZeroGamma, Integrator>,
      NaiveGSGRHMCParams<Scalar>>;

 public:
  using Params = NaiveGSGRHMCParams<Scalar>;
  explicit NaiveGSGRHMC(const Params& p = Params{}) noexcept : Base(p) {}
  static SGRHMCRecipe<Scalar, Dim, PotentialInverseMetric<Scalar>, ZeroGamma, Integrator>
  make_recipe(const Params& p) noexcept {
    SGRHMCParams<Scalar, PotentialInverseMetric<Scalar>, ZeroGamma> q;
    q.step_size = p.step_size;
    q.metric.fn = p.metric;
    return detail::sgrhmc_recipe<Scalar, Dim, PotentialInverseMetric<Scalar>, ZeroGamma,
                                 Integrator>(q);
  }
};

/// BIASED. SGRLD without Γ: θ ← θ − hG⁻¹g + N(0, h(2G⁻¹ − hG⁻¹V̂G⁻¹)). Its drift misses
/// Σ_j ∂_j G⁻¹_ij, so it samples exp(−U) only when G is constant (1-D residual g″ − U′g′,
/// g = G⁻¹; MATH.md §1.4 row 2 discusses the sign-flipped variant).
template <class Scalar, int Dim, class MetricT>
class NaiveSGRLD : public RecipeSampler<NaiveSGRLD<Scalar, Dim, MetricT>,
                                        SGRLDRecipe<Scalar, Dim, MetricT, ZeroGamma>,
                                        NaiveParams<Scalar, MetricT>> {
  using Base =
      RecipeSampler<NaiveSGRLD<Scalar, Dim, MetricT>, SGRLDRecipe<Scalar, Dim, MetricT, ZeroGamma>,
                    NaiveParams<Scalar, MetricT>>;

 public:
  using Params = NaiveParams<Scalar, MetricT>;
  explicit NaiveSGRLD(const Params& p = Params{}) noexcept : Base(p) {}
  static SGRLDRecipe<Scalar, Dim, MetricT, ZeroGamma> make_recipe(const Params& p) noexcept {
    return SGRLD<Scalar, Dim, MetricT, ZeroGamma>::make_recipe(
        SGRLDParams<Scalar, MetricT, ZeroGamma>{p.step_size, p.metric, {}});
  }
};

}  // namespace sgmcmc
