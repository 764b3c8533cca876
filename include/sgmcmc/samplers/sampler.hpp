// SPDX-License-Identifier: MIT
// The one interface every sampler satisfies, written once (in the spirit of manif's LieGroupBase):
// SamplerBase declares every public entry point; a sampler supplies private hooks. RecipeSampler
// is the common body of the samplers that are one recipe declaration.
#pragma once

#include <type_traits>
#include <utility>

#include "sgmcmc/core/recipe.hpp"
#include "sgmcmc/core/state.hpp"
#include "sgmcmc/core/status.hpp"

namespace sgmcmc {

/// The interface of every sampler. Public API (all noexcept, allocation-free):
///   types    Scalar, Params, State (owned), StateMap (over caller memory), StateType (= State);
///            dim (d)
///   start    State start(θ0)                    a new state (small states: returned by value)
///            Status start(z, θ0)                resets z in place (any size; State or StateMap)
///            Status start(z, θ0, rng)           also draws the auxiliary variables where the
///                                               sampler has an exact law for them
///   step     Status step(z, model, rng)         one transition; on failure z is unchanged
///   params   const Params& params(), Status set_params(p)   (validated; the new status)
///            Scalar step_size(), Status set_step_size(h)
///   status   Status status()                    Ok iff the parameters are valid
/// Per-chain bookkeeping (step counters, refresh countdowns, the last transition's acceptance)
/// lives in the state's extra(), so one call steps every sampler and one sampler object serves
/// any number of chains.
/// A sampler (Derived) provides, privately (SamplerBase is its friend):
///   Status init_state(z, θ0) const               [init_state(z, θ0, rng) optional]
///   Status step_state(z, model, rng) const
///   Status current_status() const;  Status apply_params(const Params&)
///   Scalar get_step_size() const;   and a member params_ of type Params.
template <class Derived, class Scalar_, int Dim, class State_, class StateMap_, class Params_>
class SamplerBase {
 public:
  using Scalar = Scalar_;
  using Params = Params_;
  using State = State_;
  using StateMap = StateMap_;
  using StateType = State_;
  /// This base, by name (for code that holds samplers through it).
  using SamplerBaseType = SamplerBase;
  static constexpr int dim = Dim;
  static_assert(Dim > 0, "Dim must be positive");

  /// A new state at θ0 (the rest of z at the sampler's documented start). Small states only: for
  /// large d declare a `static State` or a StateMap and call start(z, θ0).
  template <class X>
  State start(const Eigen::MatrixBase<X>& theta0) const noexcept {
    State z;
    static_cast<void>(start(z, theta0));
    return z;
  }
  /// A new state at θ0 with the auxiliary variables drawn from their exact laws where known.
  template <class X, class Rng>
  State start(const Eigen::MatrixBase<X>& theta0, Rng& rng) const noexcept {
    State z;
    static_cast<void>(start(z, theta0, rng));
    return z;
  }
  /// The same from a position vector, so that a braced list works: start({0.0f, -1.0f}).
  State start(const Vector<Scalar, Dim>& theta0) const noexcept {
    return start<Vector<Scalar, Dim>>(theta0);
  }
  template <class Rng>
  State start(const Vector<Scalar, Dim>& theta0, Rng& rng) const noexcept {
    return start<Vector<Scalar, Dim>, Rng>(theta0, rng);
  }
  /// Resets z (any State or StateMap of this sampler) to θ0. InvalidParameter (z untouched) if
  /// the sampler is invalid or θ0 is not finite.
  template <class St, class X>
  Status start(St& z, const Eigen::MatrixBase<X>& theta0) const noexcept {
    static_assert(X::SizeAtCompileTime == Dim, "θ0 has the position's size");
    if (Status s = status(); !s) return s;
    if (!detail::all_finite(theta0.derived())) return StatusCode::NonFiniteState;
    z.set_zero();
    z.position() = theta0;
    return derived().init_state(z, theta0);
  }
  template <class St, class X, class Rng>
  Status start(St& z, const Eigen::MatrixBase<X>& theta0, Rng& rng) const noexcept {
    check_rng<Rng>();
    if constexpr (RandomInit<Derived, St, X, Rng>::value) {
      if (Status s = status(); !s) return s;
      if (!detail::all_finite(theta0.derived())) return StatusCode::NonFiniteState;
      // The new state is built in the copy z does not show; a draw that fails (CapReached)
      // switches back, so z is exactly as it was.
      const auto saved = z.extra();
      detail::StateAccess::flip(z);
      detail::StateAccess::zero_copy(z, detail::StateAccess::front(z));
      z.set_extra({});
      z.position() = theta0;
      const Status s = derived().init_state(z, theta0, rng);
      if (!s) {
        detail::StateAccess::flip(z);
        z.set_extra(saved);
      }
      return s;
    } else {
      static_cast<void>(rng);
      return start(z, theta0);
    }
  }

  /// One transition of z with the model's gradient and the port RNG. On any failure z (values and
  /// bookkeeping) is left exactly as it was.
  template <class St, class Model, class Rng>
  Status step(St& z, const Model& model, Rng& rng) const noexcept {
    check_rng<Rng>();
    check_gradient_model<Model, Scalar, Dim>();
    static_assert(std::is_same_v<typename St::ShapeType, typename State::ShapeType>,
                  "sgmcmc: this is not the sampler's State or StateMap type");
    constexpr bool narrow = detail::narrow_step_fits<Scalar, typename State::LayoutType>();
    constexpr std::size_t bytes = std::size_t(Dim) * sizeof(Scalar);
    return detail::dispatched<narrow, bytes>(
        [&]() noexcept { return derived().step_state(z, model, rng); });
  }

  /// Ok iff every parameter is valid; step() returns this otherwise.
  Status status() const noexcept { return derived().current_status(); }
  const Params& params() const noexcept { return derived().params_; }
  /// Replaces every parameter and re-validates; returns the new status (an invalid set is
  /// stored too: status() then says why and step() refuses).
  Status set_params(const Params& p) noexcept { return derived().apply_params(p); }
  /// h, in MATH.md's convention.
  Scalar step_size() const noexcept { return derived().get_step_size(); }
  /// Changes h only; returns the new status.
  Status set_step_size(Scalar h) noexcept {
    Params p = params();
    derived().put_step_size(p, h);
    return set_params(p);
  }

 protected:
  SamplerBase() = default;

 private:
  // Whether Derived draws its auxiliary variables in start(z, θ0, rng). Detected here, inside
  // the base every sampler befriends, because init_state is private.
  // D is Derived, a parameter so that the expression is dependent: clang would otherwise look
  // init_state up when SamplerBase is instantiated, while Derived is still incomplete.
  template <class D, class St, class X, class Rng, class = void>
  struct RandomInit : std::false_type {};
  template <class D, class St, class X, class Rng>
  struct RandomInit<D, St, X, Rng,
                    std::void_t<decltype(std::declval<const D&>().init_state(
                        std::declval<St&>(), std::declval<const X&>(), std::declval<Rng&>()))>>
      : std::true_type {};

  const Derived& derived() const noexcept { return static_cast<const Derived&>(*this); }
  Derived& derived() noexcept { return static_cast<Derived&>(*this); }
};

/// Params of every recipe sampler carry step_size; the recipe carries h, T and V̂.
/// RecipeSampler holds the Params and the recipe built from them (by Derived::make_recipe), and
/// offers what every recipe sampler shares: temperature, gradient noise V̂, step_with_noise, and
/// read access to its recipe (the engine's pieces: drift, Γ) for users and tests.
template <class Derived, class RecipeT, class Params_, int Scratch = 1, class Extra = NoExtra>
class RecipeSampler
    : public SamplerBase<
          Derived, typename RecipeT::Scalar, RecipeT::dim,
          sgmcmc::State<typename RecipeT::Scalar, typename RecipeT::LayoutType, Scratch, Extra>,
          sgmcmc::StateMap<typename RecipeT::Scalar, typename RecipeT::LayoutType, Scratch, Extra>,
          Params_> {
 public:
  using Scalar = typename RecipeT::Scalar;
  using RecipeType = RecipeT;
  using NoiseVector = typename RecipeT::NoiseVector;
  /// Normals one step draws (with T > 0).
  static constexpr int noise_dim = RecipeT::noise_dim;
  /// Scalars step_with_noise reads (the real-time split, run/realtime.hpp).
  static constexpr int noise_size = noise_dim;
  /// True iff step_with_noise is the whole of step. A sampler whose step also keeps bookkeeping
  /// or draws more than normals (SGMGT's resampling, the learned refresh) sets it false: its
  /// step_with_noise does not compile, and recipe().step_with_noise is the dynamics alone.
  static constexpr bool has_noise_tick = true;
  /// Draws what one step_with_noise(z, model, out) reads: noise_size normals.
  template <class Rng>
  static void fill_noise(Rng& rng, Scalar* out) noexcept {
    check_noise_tick();
    fill_normal(rng, out, noise_size);
  }

  /// The recipe this sampler is (read-only: parameters change through set_params).
  const RecipeT& recipe() const noexcept { return recipe_; }

  /// The temperature T ≥ 0 (1: exp(−H); 0: the optimiser limit). Re-validates.
  Scalar temperature() const noexcept { return recipe_.temperature(); }
  Status set_temperature(Scalar t) noexcept {
    temperature_ = t;
    return rebuild();
  }
  /// V̂ = v I, or diag(v): the covariance of the minibatch gradient's noise (README "Step size
  /// convention"). Re-validates 2D − hB̂ ⪰ 0.
  Status set_gradient_noise(Scalar v) noexcept {
    vhat_kind_ = VhatKind::Isotropic;
    vhat_iso_ = v;
    return rebuild();
  }
  template <class X>
  Status set_gradient_noise(const Eigen::MatrixBase<X>& v) noexcept {
    vhat_kind_ = VhatKind::Values;
    vhat_values_ = v;
    return rebuild();
  }
  /// diag(v) over caller-owned memory (any d; the caller keeps it alive).
  Status set_gradient_noise(ConstVectorMap<Scalar, RecipeT::dim> v) noexcept {
    vhat_kind_ = VhatKind::External;
    vhat_external_ = v.data();
    return rebuild();
  }
  /// V̂ (small states).
  auto gradient_noise() const noexcept { return recipe_.gradient_noise(); }

  /// One step with the given standard normals (noise_dim of them, in the engine's order: see
  /// Recipe::step_with_noise): the real-time "tick" when the normals were drawn ahead of time.
  template <class St, class Model>
  Status step_with_noise(St& z, const Model& model, const Scalar* zeta) const noexcept {
    check_noise_tick();
    if (Status s = this->status(); !s) return s;
    return recipe_.step_with_noise(z, model, zeta);
  }
  template <class St, class Model>
  Status step_with_noise(St& z, const Model& model, const NoiseVector& zeta) const noexcept {
    return step_with_noise(z, model, zeta.data());
  }

 protected:
  explicit RecipeSampler(const Params_& p) noexcept : params_(p), recipe_(Derived::make_recipe(p)) {
    vhat_values_.setZero();
    static_cast<void>(rebuild());
  }

  // Hooks for SamplerBase (a derived sampler may override some by name).
  Status current_status() const noexcept { return recipe_.status(); }
  Scalar get_step_size() const noexcept { return params_.step_size; }
  static void put_step_size(Params_& p, Scalar h) noexcept { p.step_size = h; }
  Status apply_params(const Params_& p) noexcept {
    params_ = p;
    recipe_ = Derived::make_recipe(p);
    return rebuild();
  }
  template <class St, class X>
  Status init_state(St&, const X&) const noexcept {
    return StatusCode::Ok;
  }
  template <class St, class Model, class Rng>
  Status step_state(St& z, const Model& model, Rng& rng) const noexcept {
    return recipe_.step(z, model, rng);
  }

  Params_ params_;
  RecipeT recipe_;

 private:
  template <class, class, int, class, class, class>
  friend class SamplerBase;
  enum class VhatKind : unsigned char { Isotropic, Values, External };

  static constexpr void check_noise_tick() noexcept {
    static_assert(Derived::has_noise_tick,
                  "sgmcmc: this sampler's step keeps bookkeeping or draws more than normals "
                  "(SGMGT's resampling, the learned refresh), so it has no step_with_noise; "
                  "recipe().step_with_noise is its dynamics alone (no counter, no resampling)");
  }

  /// Re-applies T and V̂ (kept across set_params) to the recipe; the recipe's status.
  Status rebuild() noexcept {
    static_cast<void>(recipe_.set_temperature(temperature_));
    switch (vhat_kind_) {
      case VhatKind::Isotropic:
        return recipe_.set_gradient_noise(vhat_iso_);
      case VhatKind::Values:
        if constexpr (detail::GradientNoise<Scalar, RecipeT::dim>::inline_values) {
          return recipe_.set_gradient_noise(vhat_values_);
        }
        return StatusCode::Unsupported;
      case VhatKind::External:
        return recipe_.set_gradient_noise(ConstVectorMap<Scalar, RecipeT::dim>(vhat_external_));
    }
    return recipe_.status();
  }

  Scalar temperature_ = RecipeT::cold ? Scalar(0) : Scalar(1);
  VhatKind vhat_kind_ = VhatKind::Isotropic;
  Scalar vhat_iso_ = Scalar(0);
  std::conditional_t<detail::GradientNoise<Scalar, RecipeT::dim>::inline_values,
                     Vector<Scalar, RecipeT::dim>, Vector<Scalar, 1>>
      vhat_values_;
  const Scalar* vhat_external_ = nullptr;
};

}  // namespace sgmcmc
