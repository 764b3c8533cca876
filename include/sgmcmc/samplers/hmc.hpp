// SPDX-License-Identifier: MIT
// HMC (MATH.md §2.2) as a recipe declaration plus its accept step: z = (θ, r), H = U + rᵀr/(2m),
// D = 0, Q = [[0,-I],[I,0]], leapfrog in the engine (on x86, a small state's trajectory in local
// vectors with the engine's values: local_transition); r ~ N(0, mI), L leapfrog steps, Metropolis
// test on the full-data H. With metropolis = false and a noisy gradient it is the SGHMC paper's
// "naive SGHMC" (biased).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstring>

#include "sgmcmc/core/math.hpp"
#include "sgmcmc/samplers/sampler.hpp"

namespace sgmcmc {

/// Where HMC and NUTS take ∇U at the start of a transition (their last template parameter).
///   Evaluate  from the model, every transition (the default).
///   Keep      from the state, where the last transition kept it: ∇U at the position it
///             returned, taken only where the position is still bit for bit that one (a new or
///             moved state evaluates it). One gradient evaluation fewer per transition, the same
///             chain. Only for a model that is the same function at every step of the state (no
///             change of data, metric, temperature or minibatch between steps, so not for naive
///             SGHMC): the kept gradient is the last model's. A new step size is harmless. The
///             state holds the kept gradient and the position's key (HMC: one pair per copy of z,
///             4 more scratch vectors; NUTS: 3 more). A compile-time choice, so that Evaluate
///             costs no code, flash or state.
enum class StartGradient : unsigned char { Evaluate, Keep };

namespace detail {
/// HMC's trajectory runs in local vectors (HMC's local_transition) for blocks of up to this many
/// bytes, where the step runs wide loads; past it the engine's passes are faster. Measured on
/// the bench's Xeon (docs/PERFORMANCE.md): in a build with AVX, where Eigen's packets are as wide
/// as the step's loops, the local vectors won up to 2 KiB (float d = 512) and lost at 4 KiB; in a
/// dispatched portable build, whose Eigen packets stay 16 bytes while the step's copy runs AVX2,
/// they won up to 256 bytes and lost from 400. At most three such vectors on the stack.
#if defined(__AVX__)
inline constexpr bool kEigenAsWideAsStep = true;  // Eigen's packets as wide as the step's loops
#else
inline constexpr bool kEigenAsWideAsStep = false;  // a portable build: 16-byte Eigen packets
#endif
inline constexpr int kLocalTrajectoryBytes = kEigenAsWideAsStep ? 2048 : 256;
/// Scratch vectors of an HMC state: 0 the gradient (the engine's), 1 the momentum's normals,
/// then with StartGradient::Keep for each copy c of z the kept gradient (2 + c) and the key of
/// the position it belongs to (4 + c; detail::store_position_key). Each (key, gradient) pair is
/// written together, so it always holds ∇U at the keyed position.
inline constexpr int kHMCKeptG = 2;
inline constexpr int kHMCKey = 4;
template <StartGradient G>
inline constexpr int kHMCScratch = G == StartGradient::Keep ? 6 : 2;
}  // namespace detail

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
  bool divergent = false;        ///< a non-finite value met inside the trajectory
  bool reused_gradient = false;  ///< the start's ∇U was the kept one (StartGradient::Keep)
  /// Zero: the bytes that would be padding, named so that a state's bytes are all determinate
  /// (two chains with one seed are byte-identical, bookkeeping included).
  unsigned char reserved[sizeof(Scalar) - 3] = {};
  Scalar energy_error = Scalar(0);  ///< H(end) - H(start)
  Scalar accept_prob = Scalar(0);   ///< min(1, e^{-energy_error}) (0 if divergent)

  friend bool operator==(const HMCInfo& a, const HMCInfo& b) noexcept {
    return a.accepted == b.accepted && a.divergent == b.divergent &&
           a.reused_gradient == b.reused_gradient &&
           detail::same_bits_of(a.energy_error, b.energy_error) &&
           detail::same_bits_of(a.accept_prob, b.accept_prob);
  }
};
static_assert(sizeof(HMCInfo<float>) == 4 + 2 * sizeof(float) &&
                  sizeof(HMCInfo<double>) == 8 + 2 * sizeof(double),
              "HMCInfo has no padding");

/// Hamiltonian Monte Carlo with a fixed number of leapfrog steps; G: where a transition takes
/// ∇U at its start (StartGradient).
/// Class invariant: status() is Ok iff step_size > 0, steps >= 1, mass > 0, all finite.
template <class Scalar, int Dim, StartGradient G = StartGradient::Evaluate>
class HMC : public SamplerBase<
                HMC<Scalar, Dim, G>, Scalar, Dim,
                State<Scalar, Layout<Dim, Dim>, detail::kHMCScratch<G>, HMCInfo<Scalar>>,
                StateMap<Scalar, Layout<Dim, Dim>, detail::kHMCScratch<G>, HMCInfo<Scalar>>,
                HMCParams<Scalar>> {
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
    inv_mass_ = Scalar(1) / params_.mass;
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
  /// (docs/REALTIME.md): with fixed L its cost does not depend on the random numbers (on x86 but
  /// for the commit's branch, StateAccess::flip_if). The same result as step() with an RNG that
  /// would have produced them.
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
    if constexpr (kLocalTrajectory) {
      return local_transition(z, model, normals, uniform);
    } else {
      if (!z.all_finite()) return StatusCode::NonFiniteState;
      Scalar* g = detail::StateAccess::scratch(z, 0);
      const int front = detail::StateAccess::front(z);
      const bool reused = kept_gradient(z, front, z.position().data());
      if (reused) {
        const Scalar* kept = detail::StateAccess::scratch(z, detail::kHMCKeptG + front);
        for (int i = 0; i < Dim; ++i) g[i] = kept[i];
      } else {
        detail::call_gradient<Scalar, Dim>(model, z.position().data(), g);
        if (!detail::all_finite(g, Dim)) return StatusCode::NonFiniteGradient;
      }
      Scalar u0(0);
      if (Status s = start_potential(model, z.position().data(), u0); !s) return s;
      // From here the transition cannot fail: the refresh is an exact Gibbs move, and a divergent
      // trajectory is a rejection.
      // r = √m ζ. Where the step runs wide vector loads (x86: SGMCMC_RESTORE_GRADIENT) and the
      // state is small, written by Eigen (the plain loop below is unrolled there into scalar
      // stores, since the normals and r share the state and the compiler cannot prove them
      // apart) and re-stored in the engine's vector width where that is wider
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
      const Scalar h0 = u0 + kinetic().energy(r);
      if constexpr (kKeep) {
        if (!reused) keep_gradient(z, front, z.position().data(), g);
      }
      const bool divergent =
          !recipe_.template integrate<detail::PassChecks::None>(z, model, params_.steps);
      const int back = 1 - front;
      // The engine leaves ∇U at the end point in g (a divergent end is never current).
      if constexpr (kKeep) {
        if (!divergent) keep_gradient(z, back, detail::StateAccess::block(z, back, 0), g);
      }
      return conclude(z, model, detail::StateAccess::block(z, back, 0),
                      detail::StateAccess::block(z, back, 1), h0, divergent, uniform, reused);
    }
  }

  /// transition() with the trajectory in local vectors (kLocalTrajectory), which the compiler
  /// keeps in registers at small d. On the engine's path each leapfrog pass writes θ and r to the
  /// state and the model reads θ back, in vector widths of their own: at small d every such round
  /// trip is a store-forwarding wait on the one chain of dependences a trajectory is
  /// (docs/PERFORMANCE.md). The engine's operations in its order, so the same values (test_hmc):
  /// r ← r − (h/2)∇U, θ ← θ + h (r/m), ∇U at θ, r ← r − (h/2)∇U; r/m is r exactly when m = 1,
  /// and that loop skips the multiplication. One finiteness check at the end sees every failure:
  /// a non-finite ∇U makes r non-finite, a non-finite r makes θ non-finite at the next drift, and
  /// a non-finite value stays so under every later update (the engine's own end-of-trajectory
  /// check rests on the same fact). The refreshed r goes to the current copy, the end point to
  /// the other copy and its gradient to scratch 0, as on the engine's path.
  template <class St, class Model>
  Status local_transition(St& z, const Model& model, const Scalar* normals,
                          Scalar uniform) const noexcept {
    using V = Vector<Scalar, Dim>;
    const int front = detail::StateAccess::front(z);
    alignas(64) V q = ConstVectorMap<Scalar, Dim>(detail::StateAccess::block(z, front, 0));
    {
      const ConstVectorMap<Scalar, Dim> r0(detail::StateAccess::block(z, front, 1));
      if (!detail::all_finite_packets(q, r0)) return StatusCode::NonFiniteState;
    }
    alignas(64) V g;
    const bool reused = kept_gradient(z, front, q.data());
    if (reused) {
      g = ConstVectorMap<Scalar, Dim>(detail::StateAccess::scratch(z, detail::kHMCKeptG + front));
    } else {
      detail::model_gradient<Scalar, Dim>(model, q.data(), g.data());
      if (!detail::all_finite_packets(g)) return StatusCode::NonFiniteGradient;
    }
    Scalar u0(0);
    if (Status s = start_potential(model, q.data(), u0); !s) return s;
    if constexpr (kKeep) {
      if (!reused) keep_gradient(z, front, q.data(), g.data());
    }
    alignas(64) V r = momentum_sd_ * ConstVectorMap<Scalar, Dim>(normals);
    VectorMap<Scalar, Dim> r_kept(detail::StateAccess::block(z, front, 1));
    r_kept = r;
    const Scalar h0 = u0 + kinetic().energy(r);
    const Scalar h = params_.step_size;
    const Scalar half = h * Scalar(1) / Scalar(2);
    const Scalar inv_mass = inv_mass_;
    if (inv_mass == Scalar(1)) {
      for (int l = 0; l < params_.steps; ++l) {
        r -= half * g;
        q += h * r;
        detail::model_gradient<Scalar, Dim>(model, q.data(), g.data());
        r -= half * g;
      }
    } else {
      for (int l = 0; l < params_.steps; ++l) {
        r -= half * g;
        q += h * (r * inv_mass);
        detail::model_gradient<Scalar, Dim>(model, q.data(), g.data());
        r -= half * g;
      }
    }
    VectorMap<Scalar, Dim> q_out(detail::StateAccess::block(z, 1 - front, 0));
    VectorMap<Scalar, Dim> r_out(detail::StateAccess::block(z, 1 - front, 1));
    VectorMap<Scalar, Dim> g_out(detail::StateAccess::scratch(z, 0));
    q_out = q;
    r_out = r;
    g_out = g;
    const bool divergent = !detail::all_finite_packets(q, r);
    if constexpr (kKeep) {
      if (!divergent) keep_gradient(z, 1 - front, q.data(), g.data());
    }
    return conclude(z, model, q.data(), r.data(), h0, divergent, uniform, reused);
  }

  /// With StartGradient::Keep: whether copy c's kept gradient belongs to theta (its key
  /// matches); false otherwise.
  template <class St>
  static bool kept_gradient(St& z, int c, const Scalar* theta) noexcept {
    if constexpr (kKeep) {
      return detail::matches_position_key(
          theta, detail::StateAccess::scratch(z, detail::kHMCKey + c), Dim);
    } else {
      static_cast<void>(z);
      static_cast<void>(c);
      static_cast<void>(theta);
      return false;
    }
  }
  /// Keeps g = ∇U(theta) for copy c, with theta's key (StartGradient::Keep only).
  template <class St>
  static void keep_gradient(St& z, int c, const Scalar* theta, const Scalar* g) noexcept {
    Scalar* kept = detail::StateAccess::scratch(z, detail::kHMCKeptG + c);
    for (int i = 0; i < Dim; ++i) kept[i] = g[i];
    detail::store_position_key(theta, detail::StateAccess::scratch(z, detail::kHMCKey + c), Dim);
  }
  const GaussianKinetic<Scalar>& kinetic() const noexcept {
    return std::get<0>(recipe_.energy().terms);
  }

  /// U at the start (zero without the Metropolis test); NonFinitePotential if it is not finite.
  template <class Model>
  Status start_potential(const Model& model, const Scalar* theta, Scalar& u0) const noexcept {
    if (params_.metropolis) {
      check_potential_model<Model, Scalar, Dim>();
      if constexpr (HasPotential<Model, Scalar, Dim>::value) {
        u0 = detail::call_potential<Scalar, Dim>(model, theta);
      }
      if (!std::isfinite(u0)) return StatusCode::NonFinitePotential;
    }
    return StatusCode::Ok;
  }

  /// The Metropolis test of the end point (θ₁, r₁) against H₀ = h0, the commit and the record.
  template <class St, class Model>
  Status conclude(St& z, const Model& model, const Scalar* theta1, const Scalar* r1, Scalar h0,
                  bool divergent, Scalar uniform, bool reused) const noexcept {
    Info info;
    info.divergent = divergent;
    info.reused_gradient = reused;
    bool accept = !info.divergent;
    if (accept && params_.metropolis) {
      Scalar u1(0);
      if constexpr (HasPotential<Model, Scalar, Dim>::value) {
        u1 = detail::call_potential<Scalar, Dim>(model, theta1);
      }
      info.energy_error = u1 + kinetic().energy(ConstVectorMap<Scalar, Dim>(r1)) - h0;
      if (!std::isfinite(info.energy_error)) {
        info.divergent = true;
        accept = false;
      } else {
        // min(1, e^{-ΔE}) without a branch on ΔE: e^min(0, -ΔE), by detail::exp_nonpositive
        // (e^0 = 1 exactly, gradual underflow to 0, no errno, a constant instruction count), so
        // the real-time tick costs the same whether the trajectory is accepted or not
        // (docs/REALTIME.md).
        const Scalar e = info.energy_error;
        info.accept_prob = detail::exp_nonpositive(detail::clamp_above(-e, Scalar(0)));
        accept = uniform < info.accept_prob;
      }
    } else if (accept) {
      info.accept_prob = Scalar(1);
    }
    info.accepted = accept;
    detail::StateAccess::flip_if(z, accept);
    store_info(z, info);
    return StatusCode::Ok;
  }

  /// z.set_extra(info), member by member: the members are still in registers, and the whole
  /// object would be copied through memory it has just been written to in narrower stores (a
  /// store-forwarding wait, ~7 % of a small transition).
  template <class St>
  static void store_info(St& z, const Info& info) noexcept {
    static_assert(sizeof(Info) == sizeof info.accepted + sizeof info.divergent +
                                      sizeof info.reused_gradient + sizeof info.reserved +
                                      sizeof info.energy_error + sizeof info.accept_prob,
                  "store_info writes every member of HMCInfo");
    unsigned char* e = detail::StateAccess::extra_bytes(z);
    std::memcpy(e + offsetof(Info, accepted), &info.accepted, sizeof info.accepted);
    std::memcpy(e + offsetof(Info, divergent), &info.divergent, sizeof info.divergent);
    std::memcpy(e + offsetof(Info, reused_gradient), &info.reused_gradient,
                sizeof info.reused_gradient);
    std::memcpy(e + offsetof(Info, reserved), info.reserved, sizeof info.reserved);
    std::memcpy(e + offsetof(Info, energy_error), &info.energy_error, sizeof info.energy_error);
    std::memcpy(e + offsetof(Info, accept_prob), &info.accept_prob, sizeof info.accept_prob);
  }

  /// Small states where the step runs wide vector loads (x86, SGMCMC_WIDE_STEP): the trajectory
  /// in local vectors, which the compiler keeps in registers (local_transition).
  static constexpr bool kKeep = G == StartGradient::Keep;
  static constexpr bool kLocalTrajectory =
      SGMCMC_WIDE_STEP && Dim * int(sizeof(Scalar)) <= detail::kLocalTrajectoryBytes;

  Params params_;
  RecipeType recipe_;
  Status status_ = StatusCode::Ok;  // derive()
  Scalar momentum_sd_ = Scalar(1);  // derive(): √m, the refresh's scale
  Scalar inv_mass_ = Scalar(1);     // derive(): 1/m, the local trajectory's drift factor
};

template <int Dim, StartGradient G = StartGradient::Evaluate>
using HMCf = HMC<float, Dim, G>;
template <int Dim, StartGradient G = StartGradient::Evaluate>
using HMCd = HMC<double, Dim, G>;

}  // namespace sgmcmc
