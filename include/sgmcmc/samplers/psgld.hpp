// SPDX-License-Identifier: MIT
// pSGLD (Li, Chen, Carlson & Carin 2016): SGLD preconditioned by RMSprop's running average of
// squared gradients, G = diag(1/(λ + √V)), with its Γ term (PSGLD) or without it (NaivePSGLD).
// The derivation of Γ, and which Γ makes the chain consistent, is in docs/samplers/psgld.md.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include <Eigen/Core>
#include <unsupported/Eigen/AutoDiff>

#include "sgmcmc/core/model.hpp"
#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/core/recipe.hpp"
#include "sgmcmc/core/state.hpp"
#include "sgmcmc/core/status.hpp"
#include "sgmcmc/samplers/sampler.hpp"

// The step's loops read and write disjoint arrays (θ and θ', the two V buffers, scratch).
#if defined(__clang__)
#define SGMCMC_PSGLD_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#elif defined(__GNUC__)
#define SGMCMC_PSGLD_IVDEP _Pragma("GCC ivdep")
#else
#define SGMCMC_PSGLD_IVDEP
#endif

namespace sgmcmc {

// ---------------------------------------------------------------------------------------------
// The model's Hessian diagonal (what PSGLD's Γ needs beyond the gradient).

/// A model may provide, besides gradient(θ, g),
///   template <class Theta, class Out> void hessian_diagonal(const Theta& theta, Out& h) const;
/// writing h_i = ∂²Ũ/∂θ_i² at θ, for the same minibatch potential Ũ as the gradient (PSGLD calls it
/// right after gradient(θ, g), at the same θ). Like gradient(), it receives Eigen maps of
/// compile-time size (any d), or, for small d, fixed-size vectors.
template <class Model, class Scalar, int Dim, class = void>
struct HasMapHessianDiagonal : std::false_type {};
template <class Model, class Scalar, int Dim>
struct HasMapHessianDiagonal<Model, Scalar, Dim,
                             std::void_t<decltype(std::declval<const Model&>().hessian_diagonal(
                                 std::declval<const ConstVectorMap<Scalar, Dim>&>(),
                                 std::declval<VectorMap<Scalar, Dim>&>()))>> : std::true_type {};
template <class Model, class Scalar, int Dim, class = void>
struct HasVectorHessianDiagonal : std::false_type {};
template <class Model, class Scalar, int Dim>
struct HasVectorHessianDiagonal<
    Model, Scalar, Dim,
    std::void_t<decltype(std::declval<const Model&>().hessian_diagonal(
        std::declval<const Vector<Scalar, Dim>&>(), std::declval<Vector<Scalar, Dim>&>()))>>
    : std::true_type {};
template <class Model, class Scalar, int Dim>
struct HasHessianDiagonal
    : std::bool_constant<HasMapHessianDiagonal<Model, Scalar, Dim>::value ||
                         (HasVectorHessianDiagonal<Model, Scalar, Dim>::value &&
                          Dim * int(sizeof(Scalar)) <= kLegacyModelBytes)> {};

namespace detail {
/// out[0 .. Dim) = diag ∇²Ũ(theta) through the model, whichever spelling it has.
template <class Scalar, int Dim, class Model>
void call_hessian_diagonal(const Model& model, const Scalar* theta, Scalar* out) noexcept {
  if constexpr (HasMapHessianDiagonal<Model, Scalar, Dim>::value) {
    const ConstVectorMap<Scalar, Dim> th(theta);
    VectorMap<Scalar, Dim> h(out);
    model.hessian_diagonal(th, h);
  } else {
    const Vector<Scalar, Dim> th = ConstVectorMap<Scalar, Dim>(theta);
    Vector<Scalar, Dim> h;
    model.hessian_diagonal(th, h);
    VectorMap<Scalar, Dim> o(out);
    o = h;
  }
}
}  // namespace detail

/// Gives a model whose gradient is a template over the scalar type (so that it accepts
/// Eigen::AutoDiffScalar vectors) the hessian_diagonal PSGLD needs, by forward automatic
/// differentiation: Dim evaluations of the gradient in dual numbers, each giving one ∂g_i/∂θ_i.
/// Small d only (the dual vectors live on the stack); for large d write hessian_diagonal.
///   const auto m = sgmcmc::HessianDiagonalByAD<MyModel>{model};
template <class Model>
struct HessianDiagonalByAD {
  const Model& model;

  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& g) const noexcept {
    model.gradient(theta, g);
  }
  template <class Theta, class M = Model>
  auto potential(const Theta& theta) const noexcept
      -> decltype(std::declval<const M&>().potential(theta)) {
    return model.potential(theta);
  }
  template <class Theta, class Out>
  void hessian_diagonal(const Theta& theta, Out& out) const noexcept {
    using S = typename Theta::Scalar;
    constexpr int n = Theta::SizeAtCompileTime;
    static_assert(n > 0 && 4 * n * int(sizeof(S)) <= kLegacyModelBytes,
                  "sgmcmc: HessianDiagonalByAD keeps dual vectors of size Dim on the stack: small "
                  "d only; write the model's hessian_diagonal for large d");
    using AD = Eigen::AutoDiffScalar<Vector<S, 1>>;
    Vector<AD, n> x;
    Vector<AD, n> gx;
    for (Index i = 0; i < n; ++i) x[i] = AD(theta[i], Vector<S, 1>::Zero());
    for (Index j = 0; j < n; ++j) {
      x[j].derivatives()[0] = S(1);
      model.gradient(x, gx);
      out[j] = gx[j].derivatives()[0];
      x[j].derivatives()[0] = S(0);
    }
  }
};

// ---------------------------------------------------------------------------------------------
// pSGLD.

/// The per-chain bookkeeping of pSGLD: which scratch vector holds the current V (1 or 2). A step
/// writes the new V to the other one and switches only on success, so a failed step leaves V as
/// it was (as the state's two copies of θ do).
struct PSGLDExtra {
  std::uint32_t v_buffer = 0;  ///< 0: V in scratch 1, 1: V in scratch 2
  std::uint32_t reserved = 0;
};

/// Parameters of pSGLD (Li et al. 2016 defaults for α and λ).
template <class Scalar>
struct PSGLDParams {
  Scalar step_size{Scalar(1e-3)};    ///< h > 0 (Li et al.'s ε = 2h)
  Scalar decay{Scalar(0.99)};        ///< α ∈ [0, 1]: V ← αV + (1 − α) g⊙g (1: V frozen)
  Scalar regularizer{Scalar(1e-5)};  ///< λ > 0: G = diag(1/(λ + √V))
};

namespace detail {

/// Which Γ a pSGLD step adds (docs/samplers/psgld.md §2):
///   None      Γ = 0: Li et al.'s practical algorithm (NaivePSGLD, biased);
///   Tracking  Γ_i = −G_ii² g_i H_ii/√V_i: the derivative of the preconditioner V tracks,
///             V → E[ĝ_i(θ)²] (PSGLD; consistent as h → 0 for α < 1; zero for α = 1);
///   OneStep   (1 − α) times that: ∂G_t/∂θ_t with V_{t−1} held fixed, the literal reading of the
///             paper's Σ_j ∂G_ij/∂θ_j (biased; kept for the measurement in the docs and tests).
enum class PSGLDCorrection { None, Tracking, OneStep };

/// pSGLD with the Γ of Correction (the public names are PSGLD and NaivePSGLD, below):
/// SamplerBase's interface plus temperature, isotropic V̂, noise-injected steps and access to V.
/// State: scratch 0 the gradient, 1 and 2 the two V buffers, 3 the Hessian diagonal (with Γ).
template <class Scalar_, int Dim, PSGLDCorrection Correction>
class PSGLDSampler
    : public SamplerBase<
          PSGLDSampler<Scalar_, Dim, Correction>, Scalar_, Dim,
          State<Scalar_, Layout<Dim>, Correction == PSGLDCorrection::None ? 3 : 4, PSGLDExtra>,
          StateMap<Scalar_, Layout<Dim>, Correction == PSGLDCorrection::None ? 3 : 4, PSGLDExtra>,
          PSGLDParams<Scalar_>> {
  template <class, class, int, class, class, class>
  friend class sgmcmc::SamplerBase;
  static constexpr bool with_gamma = Correction != PSGLDCorrection::None;

 public:
  using Scalar = Scalar_;
  using Params = PSGLDParams<Scalar>;
  static_assert(std::is_floating_point_v<Scalar>, "Scalar must be float or double");
  /// Normals one step draws (with T > 0), in coordinate order.
  static constexpr int noise_dim = Dim;
  using NoiseVector = Vector<Scalar, Dim>;

  /// The temperature T ≥ 0 (1: exp(−U); 0: RMSprop, the optimiser limit). Re-validates.
  Scalar temperature() const noexcept { return temperature_; }
  Status set_temperature(Scalar t) noexcept {
    temperature_ = t;
    return validate();
  }
  /// Isotropic V̂ = v I ≥ 0, the minibatch gradient's noise covariance: the noise becomes
  /// N(0, h(2TG − hGV̂G)), which must stay ≥ 0 at every step (else NoiseNotPSD, state unchanged).
  Scalar gradient_noise() const noexcept { return vhat_; }
  Status set_gradient_noise(Scalar v) noexcept {
    vhat_ = v;
    return validate();
  }

  /// V of z (the current running average of squared gradients), a view valid until z's next step.
  template <class St>
  ConstVectorMap<Scalar, Dim> preconditioner_state(const St& z) const noexcept {
    check_state<St>();
    return ConstVectorMap<Scalar, Dim>(z.data() + St::ShapeType::scratch_offset(v_slot(z)));
  }
  /// Replaces V of z (e.g. a warm start from another chain). InvalidParameter, z unchanged, unless
  /// every entry is finite and ≥ 0.
  template <class St, class X>
  Status set_preconditioner_state(St& z, const Eigen::MatrixBase<X>& v) const noexcept {
    check_state<St>();
    static_assert(X::SizeAtCompileTime == Dim, "V has the position's size");
    for (Index i = 0; i < Dim; ++i) {
      if (!(v.derived().coeff(i) >= Scalar(0)) ||
          !(v.derived().coeff(i) <= std::numeric_limits<Scalar>::max())) {
        return StatusCode::InvalidParameter;
      }
    }
    VectorMap<Scalar, Dim> out(StateAccess::scratch(z, v_slot(z)));
    out = v;
    return StatusCode::Ok;
  }

  explicit PSGLDSampler(const Params& p = Params{}) noexcept : params_(p) {
    static_cast<void>(validate());
  }

  /// One step with the given Dim standard normals (coordinate order): the real-time "tick".
  template <class St, class Model>
  Status step_with_noise(St& z, const Model& model, const Scalar* zeta) const noexcept {
    check_state<St>();
    check_gradient_model<Model, Scalar, Dim>();
    ArrayNoise<Scalar> noise{zeta};
    return run(z, model, noise);
  }
  template <class St, class Model>
  Status step_with_noise(St& z, const Model& model, const NoiseVector& zeta) const noexcept {
    return step_with_noise(z, model, zeta.data());
  }

 private:
  Params params_;

  template <class St>
  static constexpr void check_state() noexcept {
    static_assert(IsState<St>::value, "sgmcmc: pass a State or StateMap of this sampler");
    static_assert(
        std::is_same_v<typename St::ShapeType, typename PSGLDSampler::StateType::ShapeType>,
        "sgmcmc: this is not the sampler's State or StateMap type");
  }
  template <class St>
  static int v_slot(const St& z) noexcept {
    return 1 + static_cast<int>(z.extra().v_buffer & 1U);
  }

  // Hooks for SamplerBase.
  Status current_status() const noexcept { return status_; }
  Scalar get_step_size() const noexcept { return params_.step_size; }
  static void put_step_size(Params& p, Scalar h) noexcept { p.step_size = h; }
  Status apply_params(const Params& p) noexcept {
    params_ = p;
    return validate();
  }
  template <class St, class X>
  Status init_state(St&, const X&) const noexcept {
    return StatusCode::Ok;  // V = 0 (start zeroed the state), as Li et al. initialise it
  }
  template <class St, class Model, class Rng>
  Status step_state(St& z, const Model& model, Rng& rng) const noexcept {
    RngNoise<Scalar, Rng> noise{&rng};
    return run(z, model, noise);
  }

  Status validate() noexcept {
    const Scalar big = std::numeric_limits<Scalar>::max();
    const Params& p = params_;
    if (!(p.step_size > Scalar(0) && p.step_size <= big))
      return status_ = StatusCode::InvalidStepSize;
    const bool ok = p.decay >= Scalar(0) && p.decay <= Scalar(1) && p.regularizer > Scalar(0) &&
                    p.regularizer <= big && temperature_ >= Scalar(0) && temperature_ <= big &&
                    vhat_ >= Scalar(0) && vhat_ <= big;
    return status_ = ok ? StatusCode::Ok : StatusCode::InvalidParameter;
  }

  /// The weight of −G_ii² g_i H_ii/√V_i in Γ_i.
  Scalar gamma_weight() const noexcept {
    if constexpr (Correction == PSGLDCorrection::Tracking) {
      return params_.decay < Scalar(1) ? Scalar(1) : Scalar(0);  // α = 1: V frozen, G constant
    } else if constexpr (Correction == PSGLDCorrection::OneStep) {
      return Scalar(1) - params_.decay;
    } else {
      return Scalar(0);
    }
  }

  /// One step (MATH.md §2.2 SGRLD with D = G(θ_t; V_t), docs/samplers/psgld.md §1), one pass over
  /// the coordinates: V_t = αV_{t−1} + (1 − α)g⊙g, G = diag(1/(λ + √V_t)), and
  ///   θ ← θ − hGg + hTΓ + N(0, h(2TG − hGV̂G)),
  /// writing θ' to the state's other copy and V_t to the other V buffer; both are committed only
  /// if every value is finite and the noise variance is ≥ 0.
  template <class St, class Model, class Noise>
  Status run(St& z, const Model& model, Noise& noise) const noexcept {
    check_gradient_model<Model, Scalar, Dim>();
    if constexpr (with_gamma) {
      static_assert(HasHessianDiagonal<Model, Scalar, Dim>::value,
                    "sgmcmc: PSGLD's Γ needs the model's Hessian diagonal: a const member "
                    "hessian_diagonal(theta, h) writing ∂²Ũ/∂θ_i² on the gradient's minibatch "
                    "(samplers/psgld.hpp); HessianDiagonalByAD<Model> supplies it for small d if "
                    "the gradient is a template over the scalar type; NaivePSGLD drops Γ (biased, "
                    "docs/samplers/psgld.md)");
    }
    if (!status_) return status_;
    const int front = StateAccess::front(z);
    const Scalar* theta = StateAccess::block(z, front, 0);
    Scalar* next = StateAccess::block(z, 1 - front, 0);
    Scalar* grad = StateAccess::scratch(z, 0);
    PSGLDExtra e = z.extra();
    const int vb = static_cast<int>(e.v_buffer & 1U);
    const Scalar* v_old = StateAccess::scratch(z, 1 + vb);
    Scalar* v_new = StateAccess::scratch(z, 2 - vb);
    Scalar* hess = nullptr;
    call_gradient<Scalar, Dim>(model, theta, grad);
    Flags flags;
    // Γ enters as hTΓ: skipped, Hessian and all, at T = 0 and where its weight is 0 (α = 1).
    if (with_gamma && temperature_ > Scalar(0) && gamma_weight() != Scalar(0)) {
      if constexpr (with_gamma) {
        hess = StateAccess::scratch(z, 3);
        call_hessian_diagonal<Scalar, Dim>(model, theta, hess);
      }
      pass<true, true>(theta, grad, hess, v_old, v_new, next, noise, flags);
    } else if (temperature_ > Scalar(0)) {
      pass<true, false>(theta, grad, hess, v_old, v_new, next, noise, flags);
    } else {
      pass<false, false>(theta, grad, hess, v_old, v_new, next, noise, flags);
    }
    if (Status s = flags.status(); !s) return s;
    StateAccess::flip(z);
    e.v_buffer = 1U - static_cast<std::uint32_t>(vb);
    z.set_extra(e);
    return StatusCode::Ok;
  }

  struct Flags {
    BitsOf<Scalar> gradient = 0;  ///< g and the Hessian diagonal
    BitsOf<Scalar> metric = 0;    ///< V_t
    BitsOf<Scalar> state = 0;     ///< θ'
    bool negative_v = false;      ///< V_t < 0: a corrupted V (set_preconditioner_state refuses it)
    bool not_psd = false;         ///< 2TG − hGV̂G < 0 somewhere
    Status status() const noexcept {
      if (!finite_bits(gradient)) return StatusCode::NonFiniteGradient;
      if (!finite_bits(metric) || negative_v) return StatusCode::NonFiniteMetric;
      if (not_psd) return StatusCode::NoiseNotPSD;
      if (!finite_bits(state)) return StatusCode::NonFiniteState;
      return StatusCode::Ok;
    }
  };

  /// Coordinates per chunk (the step's stack buffers hold one chunk each).
  static constexpr int chunk = Dim < 128 ? Dim : 128;
  /// The buffers' alignment: the state's, and at least the 16 bytes the packet maps assume.
  static constexpr int kBufferAlign = kAlignBytes > 16 ? kAlignBytes : 16;

  /// The coordinate passes. UseGamma (with Γ, T > 0, weight ≠ 0) reads the Hessian diagonal.
  template <bool NoiseOn, bool UseGamma, class Noise>
  void pass(const Scalar* theta, const Scalar* grad, const Scalar* hess, const Scalar* v_old,
            Scalar* v_new, Scalar* next, Noise& noise, Flags& flags) const noexcept {
    const Scalar h = params_.step_size;
    const Scalar a = params_.decay;
    const Scalar b = Scalar(1) - a;
    const Scalar lambda = params_.regularizer;
    const Scalar t = temperature_;
    const Scalar ht_w = h * t * gamma_weight();  // h T × the Γ weight (≠ 0 iff UseGamma)
    const Scalar root_b = std::sqrt(b);
    constexpr Scalar tiny = std::numeric_limits<Scalar>::min();
    const Scalar two_t = Scalar(2) * t;
    const Scalar h_vhat = h * vhat_;
    BitsOf<Scalar> gbits = 0;
    BitsOf<Scalar> vbits = 0;
    BitsOf<Scalar> sbits = 0;
    BitsOf<Scalar> negative_v = 0;  // integer flags (bools would stop the vectoriser)
    BitsOf<Scalar> not_psd = 0;
    // Per chunk, three short loops over buffers in L1, so that each vectorises: the square roots
    // are taken by Eigen's packet sqrt (no errno branch), and no division is conditional.
    using ChunkArray = Eigen::Array<Scalar, chunk, 1>;
    using ChunkMap = Eigen::Map<ChunkArray, Eigen::Aligned16>;
    alignas(kBufferAlign) Scalar zbuf[chunk];
    alignas(kBufferAlign) Scalar vbuf[chunk];  // V_t, then √V_t
    alignas(kBufferAlign) Scalar xbuf[chunk];  // θ' before the noise
    alignas(kBufferAlign) Scalar sbuf[chunk];  // the noise's variance, then its standard deviation
    for (Index c0 = 0; c0 < Dim; c0 += chunk) {
      const Index n = Dim - c0 < chunk ? Dim - c0 : chunk;
      const Scalar* zeta = zbuf;
      if constexpr (NoiseOn) zeta = noise.take(zbuf, n);
      static_cast<void>(zeta);
      const Scalar* g = grad + c0;
      const Scalar* vo = v_old + c0;
      Scalar* vn = v_new + c0;
      SGMCMC_PSGLD_IVDEP
      for (Index j = 0; j < n; ++j) {
        const Scalar v = a * vo[j] + b * g[j] * g[j];
        or_nonfinite(g[j], gbits);
        or_nonfinite(v, vbits);
        negative_v |= BitsOf<Scalar>(v < Scalar(0));
        vbuf[j] = v;
        vn[j] = v;
      }
      for (Index j = n; j < chunk; ++j) vbuf[j] = Scalar(0);  // the last chunk's tail
      ChunkMap roots(vbuf);
      roots = roots.max(Scalar(0)).sqrt();
      const Scalar* th = theta + c0;
      const Scalar* hs = UseGamma ? hess + c0 : nullptr;
      SGMCMC_PSGLD_IVDEP
      for (Index j = 0; j < n; ++j) {
        const Scalar s = vbuf[j];
        const Scalar gi = Scalar(1) / (lambda + s);  // G_ii
        Scalar x = th[j] - h * gi * g[j];
        if constexpr (UseGamma) {
          or_nonfinite(hs[j], gbits);
          // g_i/√V_i. √V_i ≥ √(1−α)|g_i| exactly, so the denominator max(√V_i, √(1−α)|g_i|,
          // smallest normal) changes it only where g_i² underflowed (to the exact ±1/√(1−α)) or
          // g_i = V_i = 0 (to 0); all maxima, so that the loop vectorises.
          const Scalar den = std::max(std::max(s, root_b * std::abs(g[j])), tiny);
          x -= ht_w * gi * gi * (g[j] / den) * hs[j];  // + hT Γ_i
        } else {
          static_cast<void>(hs);
        }
        xbuf[j] = x;
        if constexpr (NoiseOn) {
          const Scalar var = h * (two_t * gi - h_vhat * gi * gi);
          not_psd |= BitsOf<Scalar>(var < Scalar(0));
          sbuf[j] = var;
        } else {
          static_cast<void>(two_t);
          static_cast<void>(h_vhat);
        }
      }
      Scalar* out = next + c0;
      if constexpr (NoiseOn) {
        for (Index j = n; j < chunk; ++j) sbuf[j] = Scalar(0);
        ChunkMap sd(sbuf);
        sd = sd.max(Scalar(0)).sqrt();
        SGMCMC_PSGLD_IVDEP
        for (Index j = 0; j < n; ++j) {
          const Scalar x = xbuf[j] + sbuf[j] * zeta[j];
          out[j] = x;
          or_nonfinite(x, sbits);
        }
      } else {
        SGMCMC_PSGLD_IVDEP
        for (Index j = 0; j < n; ++j) {
          out[j] = xbuf[j];
          or_nonfinite(xbuf[j], sbits);
        }
      }
    }
    flags.gradient |= gbits;
    flags.metric |= vbits;
    flags.state |= sbits;
    flags.negative_v = flags.negative_v || negative_v != 0;
    flags.not_psd = flags.not_psd || not_psd != 0;
  }

  Scalar temperature_ = Scalar(1);
  Scalar vhat_ = Scalar(0);
  Status status_;
};

}  // namespace detail

/// Preconditioned SGLD (Li, Chen, Carlson & Carin 2016) with its Γ term. Per step, from θ_t and
/// the state's V_{t−1} (docs/samplers/psgld.md):
///   g = ∇Ũ(θ_t), H = diag ∇²Ũ(θ_t) (the model's hessian_diagonal, same minibatch);
///   V_t = αV_{t−1} + (1 − α) g⊙g;  G = diag(1/(λ + √V_t));
///   Γ_i = −G_ii² g_i H_ii / √V_i   (0 where V_i = 0, and for α = 1);
///   θ_{t+1} = θ_t − hGg + hTΓ + N(0, h(2TG − hGV̂G)).
/// Γ is the derivative of the preconditioner that V tracks, G(θ) = diag(1/(λ + √E[ĝ(θ)²])): the
/// correction that makes the chain consistent (bias → 0 with h, for any fixed α < 1; measured
/// in the docs). It is 1/(1 − α) times the paper's Σ_j ∂G_ij/∂θ_j read with V_{t−1} fixed, which
/// leaves a bias of about α times NaivePSGLD's. α = 1 freezes V: G is the constant diag from the
/// state's V (set_preconditioner_state), Γ = 0 and the step is SGLD with that D₀. T = 0 is RMSprop.
/// One pass over the coordinates, any d (scratch in the state: 4 position-sized vectors).
/// Status: NonFiniteGradient (g or H), NonFiniteMetric (V overflowed), NoiseNotPSD (V̂ too large
/// for G somewhere), NonFiniteState, InvalidStepSize / InvalidParameter: z (θ and V) unchanged.
template <class Scalar, int Dim>
using PSGLD = detail::PSGLDSampler<Scalar, Dim, detail::PSGLDCorrection::Tracking>;

/// BIASED. pSGLD without Γ, Li et al.'s practical algorithm (their Algorithm 1):
///   θ_{t+1} = θ_t − hGg + N(0, h(2TG − hGV̂G)),  G, V as in PSGLD.
/// For α < 1 it samples, as h → 0, about exp(−U)/E[G | θ] instead of exp(−U) (on θ²/2 with
/// λ = 1: E θ² = 1.44, docs/samplers/psgld.md); the bias is small only while V changes slowly
/// against θ (α → 1 at fixed h). Needs no Hessian. Exact (up to SGLD's O(h)) for α = 1.
template <class Scalar, int Dim>
using NaivePSGLD = detail::PSGLDSampler<Scalar, Dim, detail::PSGLDCorrection::None>;

namespace detail {
/// BIASED, for the measurement of docs/samplers/psgld.md only: Γ read as ∂G_t/∂θ_t with V_{t−1}
/// held fixed, (1 − α) times PSGLD's.
template <class Scalar, int Dim>
using OneStepPSGLD = PSGLDSampler<Scalar, Dim, PSGLDCorrection::OneStep>;
}  // namespace detail

template <int Dim>
using PSGLDf = PSGLD<float, Dim>;
template <int Dim>
using PSGLDd = PSGLD<double, Dim>;

}  // namespace sgmcmc
