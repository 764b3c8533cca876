// SPDX-License-Identifier: MIT
// HMC (MATH.md §2.2) as a recipe declaration plus its accept step: z = (θ, r), H = U + rᵀr/(2m),
// D = 0, Q = [[0,-I],[I,0]], leapfrog in the engine; r ~ N(0, mI), L leapfrog steps, Metropolis
// test on the full-data H. With metropolis = false and a noisy gradient it is the SGHMC paper's
// "naive SGHMC" (biased).
#pragma once

#include <cmath>

#include "sgmcmc/core/math.hpp"
#include "sgmcmc/samplers/sampler.hpp"

namespace sgmcmc {

/// The recipe behind HMC: no diffusion, the symplectic pair, leapfrog.
template <class Scalar, int Dim>
using HMCRecipe =
    Recipe<Scalar, Layout<Dim, Dim>, Energy<GaussianKinetic<Scalar>>, Diffusion<Zero, Zero>,
           Curl<SkewPair<Momentum, Position, Identity>>, Leapfrog>;

/// Parameters of HMC.
template <class Scalar>
struct HMCParams {
  Scalar step_size{Scalar(0.1)};  ///< h of the leapfrog
  int steps{10};                  ///< L leapfrog steps per proposal
  Scalar mass{Scalar(1)};         ///< m, M = m I
  bool metropolis{true};          ///< false: accept every trajectory (biased; for comparisons)
};

/// What the last transition of a chain did (the state's bookkeeping: z.extra()).
template <class Scalar>
struct HMCInfo {
  bool accepted = false;
  bool divergent = false;  ///< a non-finite value met inside the trajectory
  /// Zero: the bytes that would be padding, named so that a state's bytes are all determinate
  /// (two chains with one seed are byte-identical, bookkeeping included).
  unsigned char reserved[sizeof(Scalar) - 2] = {};
  Scalar energy_error = Scalar(0);  ///< H(end) - H(start)
  Scalar accept_prob = Scalar(0);   ///< min(1, e^{-energy_error}) (0 if divergent)

  friend bool operator==(const HMCInfo& a, const HMCInfo& b) noexcept {
    return a.accepted == b.accepted && a.divergent == b.divergent &&
           detail::same_bits_of(a.energy_error, b.energy_error) &&
           detail::same_bits_of(a.accept_prob, b.accept_prob);
  }
};
static_assert(sizeof(HMCInfo<float>) == 4 + 2 * sizeof(float) &&
                  sizeof(HMCInfo<double>) == 8 + 2 * sizeof(double),
              "HMCInfo has no padding");

/// Hamiltonian Monte Carlo with a fixed number of leapfrog steps.
/// Class invariant: status() is Ok iff step_size > 0, steps >= 1, mass > 0, all finite.
template <class Scalar, int Dim>
class HMC : public SamplerBase<
                HMC<Scalar, Dim>, Scalar, Dim, State<Scalar, Layout<Dim, Dim>, 2, HMCInfo<Scalar>>,
                StateMap<Scalar, Layout<Dim, Dim>, 2, HMCInfo<Scalar>>, HMCParams<Scalar>> {
  template <class, class, int, class, class, class>
  friend class SamplerBase;

 public:
  using Params = HMCParams<Scalar>;
  using Info = HMCInfo<Scalar>;
  using RecipeType = HMCRecipe<Scalar, Dim>;

  explicit HMC(const Params& p = Params{}) noexcept : params_(p), recipe_(make_recipe(p)) {
    derive();
  }

  static RecipeType make_recipe(const Params& p) noexcept {
    return {Energy<GaussianKinetic<Scalar>>{{GaussianKinetic<Scalar>{p.mass}}},
            Diffusion<Zero, Zero>{}, Curl<SkewPair<Momentum, Position, Identity>>{}, p.step_size};
  }
  /// The leapfrog recipe (read-only).
  const RecipeType& recipe() const noexcept { return recipe_; }

  /// L leapfrog steps from z (deterministic, no refresh, no test), committed if every value
  /// stays finite; otherwise the first failure is returned and z is unchanged. Reversible and
  /// volume preserving (tested).
  template <class St, class Model>
  Status leapfrog(St& z, const Model& model) const noexcept {
    if (Status s = current_status(); !s) return s;
    detail::call_gradient<Scalar, Dim>(model, z.position().data(),
                                       detail::StateAccess::scratch(z, 0));
    if (!detail::all_finite(detail::StateAccess::scratch(z, 0), Dim)) {
      return StatusCode::NonFiniteGradient;
    }
    if (Status s = recipe_.integrate(z, model, params_.steps); !s) return s;
    detail::StateAccess::flip(z);
    return StatusCode::Ok;
  }

 private:
  /// Kept from the last construction or set_params (the only ways params_ and recipe_ change),
  /// so that a step neither re-validates them nor takes the square root of the mass.
  Status current_status() const noexcept { return status_; }
  void derive() noexcept {
    status_ = compute_status();
    momentum_sd_ = detail::sqrt(params_.mass);
  }
  Status compute_status() const noexcept {
    if (!(params_.step_size > Scalar(0)) || !std::isfinite(params_.step_size)) {
      return StatusCode::InvalidStepSize;
    }
    if (params_.steps < 1 || !recipe_.status()) return StatusCode::InvalidParameter;
    return StatusCode::Ok;
  }
  Scalar get_step_size() const noexcept { return params_.step_size; }
  static void put_step_size(Params& p, Scalar h) noexcept { p.step_size = h; }
  Status apply_params(const Params& p) noexcept {
    params_ = p;
    recipe_ = make_recipe(p);
    derive();
    return status_;
  }
  template <class St, class X>
  Status init_state(St&, const X&) const noexcept {
    return StatusCode::Ok;
  }

  /// Refresh r ~ N(0, mI), integrate, accept with probability min(1, exp(H₀ - H_L)).
  /// On rejection (or a divergent trajectory) θ is kept and r is the refreshed draw.
  template <class St, class Model, class Rng>
  Status step_state(St& z, const Model& model, Rng& rng) const noexcept {
    if (Status s = current_status(); !s) return s;
    Scalar* r = detail::StateAccess::scratch(z, 1);
    fill_normal(rng, r, Dim);
    return transition(z, model, r, uniform_open01<Scalar>(rng));
  }

 public:
  /// Normals and the uniform one transition consumes (noise_dim = d normals for the momentum,
  /// then one uniform in (0, 1) for the Metropolis test: noise_size = d + 1 scalars).
  static constexpr int noise_dim = Dim;
  static constexpr int noise_size = Dim + 1;
  /// Draws what one step_with_noise(z, model, out) reads: d normals, then a uniform in (0, 1).
  template <class Rng>
  static void fill_noise(Rng& rng, Scalar* out) noexcept {
    fill_normal(rng, out, Dim);
    out[Dim] = uniform_open01<Scalar>(rng);
  }
  /// step_with_noise with the noise_size scalars fill_noise draws.
  template <class St, class Model>
  Status step_with_noise(St& z, const Model& model, const Scalar* noise) const noexcept {
    return step_with_noise(z, model, noise, noise[Dim]);
  }

  /// One transition with the random numbers drawn ahead of time: `normals` holds d standard
  /// normals (the momentum is √m times them), `uniform` one draw in (0, 1). The real-time tick
  /// (docs/REALTIME.md): with fixed L its cost does not depend on the random numbers. The same
  /// result as step() with an RNG that would have produced them.
  template <class St, class Model>
  Status step_with_noise(St& z, const Model& model, const Scalar* normals,
                         Scalar uniform) const noexcept {
    if (Status s = current_status(); !s) return s;
    if (!(uniform > Scalar(0) && uniform < Scalar(1))) return StatusCode::InvalidParameter;
    Scalar* r = detail::StateAccess::scratch(z, 1);
    for (int i = 0; i < Dim; ++i) r[i] = normals[i];
    return transition(z, model, r, uniform);
  }

 private:
  template <class St, class Model>
  Status transition(St& z, const Model& model, const Scalar* normals,
                    Scalar uniform) const noexcept {
    if (!z.all_finite()) return StatusCode::NonFiniteState;
    Scalar* g = detail::StateAccess::scratch(z, 0);
    detail::call_gradient<Scalar, Dim>(model, z.position().data(), g);
    if (!detail::all_finite(g, Dim)) return StatusCode::NonFiniteGradient;
    Scalar u0(0);
    if (params_.metropolis) {
      check_potential_model<Model, Scalar, Dim>();
      if constexpr (HasPotential<Model, Scalar, Dim>::value) {
        u0 = detail::call_potential<Scalar, Dim>(model, z.position().data());
      }
      if (!std::isfinite(u0)) return StatusCode::NonFinitePotential;
    }
    // From here the transition cannot fail: the refresh is an exact Gibbs move, and a divergent
    // trajectory is a rejection.
    const auto& kinetic = std::get<0>(recipe_.energy().terms);
    // r = √m ζ. Where the step runs wide vector loads (x86: SGMCMC_RESTORE_GRADIENT) and the
    // state is small, written by Eigen (the plain loop below is unrolled there into scalar
    // stores, since the normals and r share the state and the compiler cannot prove them apart)
    // and re-stored in the engine's vector width where that is wider
    // (detail::restore_for_wide_loads): the kinetic energy and the first leapfrog pass read r
    // right away, and a load spanning several pending narrower stores waits for them to reach
    // the cache. Elsewhere (larger states, which the loop vectorises, and targets without wide
    // loads, where Eigen's unrolled copy only costs flash) the loop. The same values either way.
    auto r = z.momentum();
    if constexpr (SGMCMC_RESTORE_GRADIENT &&
                  Dim * int(sizeof(Scalar)) <= detail::kRestoreMaxBytes) {
      r = momentum_sd_ * ConstVectorMap<Scalar, Dim>(normals);
      detail::restore_for_wide_loads<Scalar, Dim>(r.data());
    } else {
      for (int i = 0; i < Dim; ++i) r[i] = momentum_sd_ * normals[i];
    }
    const Scalar h0 = u0 + kinetic.energy(r);
    Info info;
    info.divergent = !recipe_.integrate(z, model, params_.steps);
    bool accept = !info.divergent;
    const int back = 1 - detail::StateAccess::front(z);
    if (accept && params_.metropolis) {
      Scalar u1(0);
      if constexpr (HasPotential<Model, Scalar, Dim>::value) {
        u1 = detail::call_potential<Scalar, Dim>(model, detail::StateAccess::block(z, back, 0));
      }
      const ConstVectorMap<Scalar, Dim> r1(detail::StateAccess::block(z, back, 1));
      info.energy_error = u1 + kinetic.energy(r1) - h0;
      if (!std::isfinite(info.energy_error)) {
        info.divergent = true;
        accept = false;
      } else {
        // min(1, e^{-ΔE}) without a branch on ΔE: e^min(0, -ΔE), by detail::exp_nonpositive
        // (e^0 = 1 exactly, gradual underflow to 0, no errno, a constant instruction count), so
        // the real-time tick costs the same whether the trajectory is accepted or not
        // (docs/REALTIME.md).
        const Scalar e = info.energy_error;
        info.accept_prob = detail::exp_nonpositive(detail::select(e > Scalar(0), -e, Scalar(0)));
        accept = uniform < info.accept_prob;
      }
    } else if (accept) {
      info.accept_prob = Scalar(1);
    }
    info.accepted = accept;
    detail::StateAccess::flip_if(z, accept);
    z.set_extra(info);
    return StatusCode::Ok;
  }

  Params params_;
  RecipeType recipe_;
  Status status_ = StatusCode::Ok;  // derive()
  Scalar momentum_sd_ = Scalar(1);  // derive(): √m, the refresh's scale
};

template <int Dim>
using HMCf = HMC<float, Dim>;
template <int Dim>
using HMCd = HMC<double, Dim>;

}  // namespace sgmcmc
