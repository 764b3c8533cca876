// SPDX-License-Identifier: MIT
// HMC (MATH.md §2.2): r ~ N(0, mI); L leapfrog steps; Metropolis test on the full-data H.
// With metropolis = false and a noisy gradient it is the SGHMC paper's "naive SGHMC" (biased).
#pragma once

#include <cmath>

#include "sgmcmc/core/kinetic.hpp"
#include "sgmcmc/core/layout.hpp"
#include "sgmcmc/core/model.hpp"
#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/core/status.hpp"

namespace sgmcmc {

/// Hamiltonian Monte Carlo with a fixed number of leapfrog steps.
/// Class invariant: status() is Ok iff step_size > 0, steps >= 1, mass > 0, all finite.
template <class Scalar, int Dim>
class HMC {
 public:
  static_assert(Dim > 0, "Dim must be positive");
  using StateType = State<Scalar, Layout<Dim, Dim>>;
  using PositionVector = Vector<Scalar, Dim>;

  struct Params {
    Scalar step_size{Scalar(0.1)};  ///< h of the leapfrog
    int steps{10};                  ///< L leapfrog steps per proposal
    Scalar mass{Scalar(1)};         ///< m, M = m I
    bool metropolis{true};          ///< false: accept every trajectory (biased; for comparisons)
  };

  /// What one step did.
  struct Info {
    bool accepted = false;
    bool divergent = false;           ///< a non-finite value met inside the trajectory
    Scalar energy_error = Scalar(0);  ///< H(end) - H(start)
  };

  explicit HMC(const Params& p) noexcept : p_(p), kinetic_{p.mass} {
    const bool ok =
        p.step_size > Scalar(0) && std::isfinite(p.step_size) && p.steps >= 1 && kinetic_.valid();
    status_ = ok ? Status(StatusCode::Ok)
                 : Status(!(p.step_size > Scalar(0)) || !std::isfinite(p.step_size)
                              ? StatusCode::InvalidStepSize
                              : StatusCode::InvalidParameter);
  }

  Status status() const noexcept { return status_; }
  const Params& params() const noexcept { return p_; }

  StateType start(const PositionVector& theta0) const noexcept {
    StateType z;
    z.position() = theta0;
    return z;
  }

  /// L leapfrog steps from z (deterministic, no refresh, no test). Returns NonFiniteGradient
  /// and leaves z unchanged if a gradient is not finite. The flow is reversible and volume
  /// preserving (tested).
  template <class Model>
  Status leapfrog(StateType& z, const Model& model) const noexcept {
    check_gradient_model<Model, Scalar, Dim>();
    if (!status_) return status_;
    StateType w = z;
    PositionVector g;
    model.gradient(w.position(), g);
    if (!detail::all_finite(g)) return StatusCode::NonFiniteGradient;
    if (!integrate(w, g, model)) return StatusCode::NonFiniteGradient;
    z = w;
    return StatusCode::Ok;
  }

  /// Refresh r ~ N(0, mI), integrate, accept with probability min(1, exp(H₀ - H_L)).
  /// On rejection (or a divergent trajectory) θ is kept and r is the refreshed draw.
  template <class Model, class Rng>
  Status step(StateType& z, const Model& model, Rng& rng, Info* info = nullptr) const noexcept {
    check_gradient_model<Model, Scalar, Dim>();
    check_rng<Rng>();
    if (!status_) return status_;
    if (!detail::all_finite(z.position())) return StatusCode::NonFiniteState;
    PositionVector g;
    model.gradient(z.position(), g);
    if (!detail::all_finite(g)) return StatusCode::NonFiniteGradient;
    Scalar u0(0);
    if (p_.metropolis) {
      check_potential_model<Model, Scalar, Dim>();
      if constexpr (HasPotential<Model, Scalar, Dim>::value)
        u0 = Scalar(model.potential(z.position()));
      if (!std::isfinite(u0)) return StatusCode::NonFinitePotential;
    }
    StateType w = z;
    kinetic_.sample(rng, w.momentum());
    const Scalar h0 = u0 + kinetic_.energy(w.momentum());
    StateType proposal = w;
    Info local;
    local.divergent = !integrate(proposal, g, model);
    bool accept = !local.divergent;
    if (accept && p_.metropolis) {
      Scalar u1(0);
      if constexpr (HasPotential<Model, Scalar, Dim>::value) {
        u1 = Scalar(model.potential(proposal.position()));
      }
      local.energy_error = u1 + kinetic_.energy(proposal.momentum()) - h0;
      if (!std::isfinite(local.energy_error)) {
        local.divergent = true;
        accept = false;
      } else if (local.energy_error > Scalar(0)) {
        accept = std::log(uniform_open01<Scalar>(rng)) < -local.energy_error;
      }
    }
    local.accepted = accept;
    z = accept ? proposal : w;
    if (info) *info = local;
    return StatusCode::Ok;
  }

 private:
  /// L leapfrog steps in place; g holds ∇U at w.position() on entry. False if non-finite.
  template <class Model>
  bool integrate(StateType& w, PositionVector& g, const Model& model) const noexcept {
    const Scalar h = p_.step_size;
    const Scalar half = h / Scalar(2);
    const Scalar inv_m = Scalar(1) / kinetic_.mass;
    for (int l = 0; l < p_.steps; ++l) {
      w.momentum() -= half * g;
      w.position() += (h * inv_m) * w.momentum();
      model.gradient(w.position(), g);
      if (!detail::all_finite(g)) return false;
      w.momentum() -= half * g;
    }
    return w.all_finite();
  }

  Params p_;
  GaussianKinetic<Scalar> kinetic_;
  Status status_;
};

template <int Dim>
using HMCf = HMC<float, Dim>;
template <int Dim>
using HMCd = HMC<double, Dim>;

}  // namespace sgmcmc
