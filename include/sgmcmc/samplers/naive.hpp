// SPDX-License-Identifier: MIT
// Biased negative controls (MATH.md §2.2): naive SGRHMC (recipe paper Eq. 27) and SGRLD without
// Γ. They sample the WRONG distribution whenever the metric varies; use them only to show that.
#pragma once

#include "sgmcmc/samplers/sgrhmc.hpp"
#include "sgmcmc/samplers/sgrld.hpp"

namespace sgmcmc {

/// BIASED. Naive SGRHMC, the recipe paper's Eq. (27): SGRHMC with the correction ∇·S dropped,
///   θ' = θ + hSr;  r' = r − hSg − hG⁻¹r + N(0, h(2G⁻¹ − hSV̂S)).
/// Its Fokker–Planck residual is −r s′(θ) ≠ 0 wherever G varies (MATH.md §2.2); it coincides with
/// SGHMC for a constant G. Built from the same recipe as SGRHMC with Γ declared zero (ZeroGamma).
template <class Scalar, int Dim, class MetricT, class Integrator = KickDrift>
class NaiveSGRHMC : public SGRHMC<Scalar, Dim, MetricT, ZeroGamma, Integrator> {
  using Base = SGRHMC<Scalar, Dim, MetricT, ZeroGamma, Integrator>;

 public:
  struct Params {
    Scalar step_size{Scalar(1e-2)};  ///< h
    MetricT metric{};                ///< G(θ) or G⁻¹(θ)
  };
  explicit NaiveSGRHMC(const Params& p) noexcept
      : Base(typename Base::Params{p.step_size, p.metric, {}}) {}
};

/// BIASED. Naive SGRHMC with the synthetic metric of the recipe paper's Figure 2 (MATH.md §5.1);
/// the counterpart of GSGRHMC, explicit Euler by default as Eq. (27) is written.
template <class Scalar, int Dim, class Integrator = ExplicitEuler>
class NaiveGSGRHMC : public NaiveSGRHMC<Scalar, Dim, PotentialInverseMetric<Scalar>, Integrator> {
  using Base = NaiveSGRHMC<Scalar, Dim, PotentialInverseMetric<Scalar>, Integrator>;

 public:
  struct Params {
    Scalar step_size{Scalar(1e-2)};    ///< h
    PotentialMetric<Scalar> metric{};  ///< D, C and the floor
  };
  explicit NaiveGSGRHMC(const Params& p) noexcept
      : Base(typename Base::Params{p.step_size, PotentialInverseMetric<Scalar>{p.metric}}) {}
};

/// BIASED. SGRLD without Γ: θ ← θ − hG⁻¹g + N(0, h(2G⁻¹ − hG⁻¹V̂G⁻¹)). Its drift misses
/// Σ_j ∂_j G⁻¹_ij, so it samples exp(−U) only when G is constant (1-D residual g″ − U′g′,
/// g = G⁻¹; MATH.md §1.4 row 2 discusses the sign-flipped variant).
template <class Scalar, int Dim, class MetricT>
class NaiveSGRLD : public SGRLD<Scalar, Dim, MetricT, ZeroGamma> {
  using Base = SGRLD<Scalar, Dim, MetricT, ZeroGamma>;

 public:
  struct Params {
    Scalar step_size{Scalar(1e-3)};  ///< h
    MetricT metric{};                ///< G(θ) or G⁻¹(θ)
  };
  explicit NaiveSGRLD(const Params& p) noexcept
      : Base(typename Base::Params{p.step_size, p.metric, {}}) {}
};

}  // namespace sgmcmc
