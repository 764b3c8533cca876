// SPDX-License-Identifier: MIT
// Conformance cases for SGRLD, SGRHMC and gSGRHMC in the shape tests/core/test_conformance.cpp
// stamps over (make, invalid, the hand-written zero-noise rule); add them to its case list.
#pragma once

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "geometry_models.hpp"
#include "sgmcmc/samplers/sgrhmc.hpp"
#include "sgmcmc/samplers/sgrld.hpp"

namespace geo {

using SeparableMetric =
    sgmcmc::InverseMetric<sgmcmc::DiagonalShape, SeparableDiagInverse, /*Separable=*/true>;

// supports_vhat = false in every case below: a state-dependent D is checked against V̂ at each
// step, not when V̂ is set (set_gradient_noise(1e6) returns Ok and the next step NoiseNotPSD, with
// the state unchanged; test_geometry_conformance.cpp checks exactly that).

/// SGRLD with G⁻¹ = diag(0.5 + 1/(1 + θ_i²)), Γ by automatic differentiation (one direction).
template <class Scalar_, int Dim_>
struct SGRLDCase {
  using Scalar = Scalar_;
  static constexpr int Dim = Dim_;
  using Sampler = sgmcmc::SGRLD<Scalar, Dim, SeparableMetric>;
  static constexpr bool recipe = true;
  static constexpr bool noisy = true;
  static constexpr bool supports_vhat = true;
  static Sampler make(Scalar h) { return Sampler({h, {}, {}}); }
  static Sampler invalid() { return Sampler({Scalar(-1), {}, {}}); }  // h ≤ 0
  /// MATH.md §2.2 without noise: θ ← θ − hG⁻¹g + hΓ.
  template <class Z, class G>
  static void deterministic(Z& z, const G& g, Scalar h) {
    const Vector<Scalar, Dim> th = z.position();
    z.position() = th - h * SeparableDiagInverse{}(th).cwiseProduct(g) +
                   h * SeparableDiagInverseDivergence{}(th);
  }
};

/// SGRHMC with the same metric; Integrator KickDrift (default) or ExplicitEuler (Algorithm 1).
template <class Scalar_, int Dim_, class Integrator = sgmcmc::KickDrift>
struct SGRHMCCase {
  using Scalar = Scalar_;
  static constexpr int Dim = Dim_;
  using Sampler = sgmcmc::SGRHMC<Scalar, Dim, SeparableMetric, sgmcmc::AutoGamma, Integrator>;
  static constexpr bool recipe = true;
  static constexpr bool noisy = true;
  static constexpr bool supports_vhat = true;
  static Sampler make(Scalar h) { return Sampler({h, {}, {}}); }
  static Sampler invalid() { return Sampler({Scalar(0), {}, {}}); }  // h ≤ 0
  /// MATH.md §2.2 without noise: r' = r − hSg − hG⁻¹r + h∇·S; θ' = θ + hSr (Euler: old r,
  /// kick–drift: new r), S = diag(√g_i), everything at θ_t.
  template <class Z, class G>
  static void deterministic(Z& z, const G& g, Scalar h) {
    const Vector<Scalar, Dim> th = z.position(), r = z.momentum();
    const Vector<Scalar, Dim> ginv = SeparableDiagInverse{}(th);
    const Vector<Scalar, Dim> s = ginv.cwiseSqrt();
    const Vector<Scalar, Dim> r1 = r - h * s.cwiseProduct(g) - h * ginv.cwiseProduct(r) +
                                   h * SeparableDiagSqrtDivergence{}(th);
    const bool euler = std::is_same_v<Integrator, sgmcmc::ExplicitEuler>;
    z.position() = th + h * s.cwiseProduct(euler ? r : r1);
    z.momentum() = r1;
  }
};

/// gSGRHMC with the synthetic metric G⁻¹ = 1.5 √max(|U + 0.5|, 0.01) I (Algorithm 1, analytic Γ);
/// needs a model with potential(θ) (the conformance models have it).
template <class Scalar_, int Dim_>
struct GSGRHMCCase {
  using Scalar = Scalar_;
  static constexpr int Dim = Dim_;
  using Sampler = sgmcmc::GSGRHMC<Scalar, Dim>;
  static constexpr bool recipe = true;
  static constexpr bool noisy = true;
  static constexpr bool supports_vhat = true;
  static Sampler make(Scalar h) { return Sampler({h, {}}); }
  static Sampler invalid() { return Sampler({Scalar(-0.5), {}}); }  // h ≤ 0
  /// Algorithm 1 without noise, with the potential of tests/support's QuarticModel.
  template <class Z, class G>
  static void deterministic(Z& z, const G& g, Scalar h) {
    const Vector<Scalar, Dim> th = z.position(), r = z.momentum();
    const Scalar s_ = th.sum();
    const Scalar u = th.array().pow(4).sum() / Scalar(4) + Scalar(0.35) * th.squaredNorm() +
                     Scalar(0.15) * s_ * s_;
    const Scalar x = u + Scalar(0.5);
    const Scalar a = std::max(std::abs(x), Scalar(0.01));
    const Scalar ginv = Scalar(1.5) * std::sqrt(a);
    const Scalar s = std::sqrt(ginv);
    const Scalar ds = std::abs(x) > Scalar(0.01)
                          ? (x > 0 ? Scalar(1) : Scalar(-1)) * std::sqrt(Scalar(1.5)) / Scalar(4) /
                                std::pow(a, Scalar(0.75))
                          : Scalar(0);
    z.position() = th + h * s * r;
    z.momentum() = r - h * s * g - h * ginv * r + h * ds * g;
  }
};

}  // namespace geo
