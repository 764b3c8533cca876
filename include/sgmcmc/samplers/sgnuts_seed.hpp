// SPDX-License-Identifier: MIT
// BIASED negative control: the seed's SGNUTS (shared/seeds/002, MATH.md §4.1) as its code does it,
// kept only to check the seed's claims side by side (docs/samplers/sgnuts-seed.md). Not a sampler
// of the posterior: use SGHMCLearnedRefresh (its sound counterpart) or NUTS (exact, full data).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "sgmcmc/core/model.hpp"
#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/core/state.hpp"
#include "sgmcmc/samplers/nuts.hpp"
#include "sgmcmc/samplers/sampler.hpp"

namespace sgmcmc {

/// Parameters of SGNUTSSeed, in the seed's names (kernel/sgnuts.py).
template <class Scalar>
struct SGNUTSSeedParams {
  Scalar learning_rate{Scalar(1e-6)};     ///< η > 0: step h = √η
  Scalar momentum_decay{Scalar(0.01)};    ///< α ≥ 0: friction C = α/h
  std::uint32_t resample_every{50};       ///< r ~ N(0, I) on iterations 0, n, 2n, ... (n ≥ 1)
  Scalar max_energy_error{Scalar(1000)};  ///< a leaf with E − E₀ above this is "diverging"
  /// E₀'s potential: true (the seed's cache) the Ũ of the last proposal, computed on the previous
  /// iteration's minibatch; false: Ũ_S(θ) on this iteration's minibatch (one more evaluation).
  bool cached_energy{true};
};

/// What the last SGNUTSSeed iteration of a chain did, and the chain's counters (z.extra()).
template <class Scalar>
struct SGNUTSSeedInfo {
  std::uint32_t iteration = 0;  ///< iterations done (the momentum-resampling clock)
  int depth = 0;                ///< doublings kept
  int leaves = 0;               ///< base steps (gradient evaluations) of the iteration
  bool turned = false;         ///< stopped by a U-turn (of the latest subtree or of the whole tree)
  bool diverging = false;      ///< a kept subtree met a leaf with E − E₀ > max_energy_error
  bool resampled = false;      ///< r was redrawn at the start of the iteration
  bool has_potential = false;  ///< potential holds a cached Ũ (false before the first iteration)
  Scalar potential = 0;        ///< Ũ of the returned proposal, on its iteration's minibatch

  friend bool operator==(const SGNUTSSeedInfo& a, const SGNUTSSeedInfo& b) noexcept {
    return a.iteration == b.iteration && a.depth == b.depth && a.leaves == b.leaves &&
           a.turned == b.turned && a.diverging == b.diverging && a.resampled == b.resampled &&
           a.has_potential == b.has_potential && detail::same_bits_of(a.potential, b.potential);
  }
};

namespace detail {

/// Whether the model has Scalar potential_and_gradient(θ, g) (one pass for both, e.g. a network's
/// batch_potential_and_gradient behind an adaptor).
template <class Model, class Scalar, int Dim, class = void>
struct HasPotentialAndGradient : std::false_type {};
template <class Model, class Scalar, int Dim>
struct HasPotentialAndGradient<
    Model, Scalar, Dim,
    std::void_t<decltype(std::declval<const Model&>().potential_and_gradient(
        std::declval<const ConstVectorMap<Scalar, Dim>&>(),
        std::declval<VectorMap<Scalar, Dim>&>()))>> : std::true_type {};

/// log(e^a + e^b) with −∞ allowed (a weight of 0), errno-free.
template <class Scalar>
Scalar log_add_exp(Scalar a, Scalar b) noexcept {
  const Scalar hi = a > b ? a : b;
  const Scalar lo = a > b ? b : a;
  if (!(hi > -std::numeric_limits<Scalar>::infinity())) return hi;
  return hi + std::log1p(exp_nonpositive(lo - hi));
}

/// Pyro's turning test (MATH.md §4.1 item 6): with ρ' = ρ − (a + b)/2, turned iff a·ρ' ≤ 0 or
/// b·ρ' ≤ 0 (a NaN product never turns, as in the seed). W partial sums per product.
template <class Scalar, int Dim>
bool seed_is_turning(const Scalar* a, const Scalar* b, const Scalar* rho) noexcept {
  constexpr int W = 64 / int(sizeof(Scalar));
  Scalar left[W] = {};
  Scalar right[W] = {};
  Index i = 0;
  for (; i + W <= Dim; i += W) {
    for (int l = 0; l < W; ++l) {
      const Index k = i + l;
      const Scalar c = rho[k] - Scalar(0.5) * (a[k] + b[k]);
      left[l] += a[k] * c;
      right[l] += b[k] * c;
    }
  }
  for (; i < Dim; ++i) {
    const Scalar c = rho[i] - Scalar(0.5) * (a[i] + b[i]);
    left[0] += a[i] * c;
    right[0] += b[i] * c;
  }
  Scalar sl(0);
  Scalar sr(0);
  for (int l = 0; l < W; ++l) {
    sl += left[l];
    sr += right[l];
  }
  return sl <= Scalar(0) || sr <= Scalar(0);
}

}  // namespace detail

template <class Scalar, int Dim, int MaxDepth = 10>
class SGNUTSSeed;

/// BIASED. The seed's "Stochastic Gradient No-U-Turn Sampler" exactly as MATH.md §4.1 records
/// its code (sacktock/SGHMC, kernel/sgnuts.py on an edited Pyro NUTS). One iteration:
///  1. The caller has drawn this iteration's minibatch S into the model: every gradient and
///     energy of the iteration uses Ũ_S (gradient(θ, g), potential(θ) or potential_and_gradient).
///  2. r ~ N(0, I) on iterations 0, n, 2n, ... (n = resample_every); otherwise r is the *initial*
///     momentum of the previous iteration, which the state keeps (z.momentum()), not the momentum
///     of the returned point. E₀ = Ũ + ½|r|² (Ũ: see SGNUTSSeedParams::cached_energy).
///  3. Base step in direction v = ±1, h = √η, C = α/h, position first:
///       θ' = θ + vhr;  r' = r − vh∇Ũ_S(θ') − hCr + ζ,  ζ_i ~ N(0, sd 2h(C − B̂_i)),
///     B̂_i = ½ v h I_i with I the observed information's diagonal if set, else 0. The sd is the
///     seed's bug (MATH.md §1.4 row 15): the temperature is about 2α, not 1. A negative sd (a large
///     forward B̂) is an error in the seed's torch; here it is NoiseNotPSD, nothing changed.
///  4. Leaf energy E = Ũ_S(θ') + ½|r'|², log-weight E₀ − E (non-finite E: weight 0); a leaf with
///     E − E₀ > max_energy_error is "diverging".
///  5. Doubling j = 0, 1, ...: direction uniform; a subtree of 2^j base steps grows from that end.
///     Recursively (Pyro's _build_tree): build the first half; if it turned or diverged, return
///     it; else build the second half from its end and merge: log-weights add (log-sum-exp), the
///     proposal is the second half's with probability w₂/(w₁ + w₂), ρ = Σ r over the leaves, and
///     the merged tree turns if the second half did or its ends turn; it diverges if the second
///     half did.
///  6. Turning (Pyro's form of the generalised criterion): ends a, b and ρ turn if
///     a·(ρ − (a + b)/2) ≤ 0 or b·(ρ − (a + b)/2) ≤ 0.
///  7. Top level: a turning new subtree is dropped and the iteration ends; otherwise the proposal
///     is replaced *unconditionally* by the new subtree's (the uniform that Pyro's rule would
///     compare with min(1, w_new/w_old) is drawn and not used), ρ += the subtree's ρ, and the
///     iteration ends if the whole tree turns; at most MaxDepth doublings. Divergence does not end
///     the iteration (the seed's break is commented out).
///  8. No Metropolis test. z.position() becomes the proposal; z.momentum() holds this
///     iteration's initial r for the next; z.extra() the counters above.
/// Why it is biased (MATH.md §4.2): the base step is not reversible or volume preserving (a
/// backward step is flip ∘ forward SGHMC step ∘ flip), the weights use Ũ_S (naive subsampling),
/// "always take the newest subtree" and reusing the old initial momentum are not π-invariant, and
/// the noise bug sets the temperature to 2α. It is kept as a control, like naive SGHMC.
/// Cost: at most 2^MaxDepth − 1 gradient (and potential) evaluations per iteration, plus one
/// potential when E₀ is not cached. Memory: the state's scratch holds the trajectory ends, the
/// proposal, ρ, the noise and three vectors per tree level: (9 + 3(MaxDepth + 1)) · d scalars.
/// On any failure (invalid parameters, non-finite start, gradient or returned proposal, negative
/// noise sd) z and its bookkeeping are unchanged.
/// Class invariant: status() is Ok iff η is finite and > 0, α is finite and ≥ 0, resample_every
/// ≥ 1 and max_energy_error is finite and > 0.
template <class Scalar, int Dim, int MaxDepth>
class SGNUTSSeed
    : public SamplerBase<
          SGNUTSSeed<Scalar, Dim, MaxDepth>, Scalar, Dim,
          State<Scalar, Layout<Dim, Dim>, 9 + 3 * (MaxDepth + 1), SGNUTSSeedInfo<Scalar>>,
          StateMap<Scalar, Layout<Dim, Dim>, 9 + 3 * (MaxDepth + 1), SGNUTSSeedInfo<Scalar>>,
          SGNUTSSeedParams<Scalar>> {
  template <class, class, int, class, class, class>
  friend class SamplerBase;

 public:
  static_assert(MaxDepth >= 1 && MaxDepth <= 30, "MaxDepth must be in [1, 30]");
  static constexpr int max_depth = MaxDepth;
  using Params = SGNUTSSeedParams<Scalar>;
  using Info = SGNUTSSeedInfo<Scalar>;
  using Map = VectorMap<Scalar, Dim>;
  using CMap = ConstVectorMap<Scalar, Dim>;

  explicit SGNUTSSeed(const Params& p = Params{}) noexcept : params_(p) {}

  /// Uses diag(information) (≥ 0, caller-owned, kept by reference) as the observed information
  /// of step 3's B̂ (the seed's obs_info_noise); its full matrix is not formed at any size.
  void set_observed_information(ConstVectorMap<Scalar, Dim> information) noexcept {
    information_ = information.data();
  }
  /// B̂ = 0 again (the seed with obs_info_noise = False).
  void clear_observed_information() noexcept { information_ = nullptr; }

 private:
  // Scratch vectors: the gradient, the trajectory ends, the top-level proposal and ρ, the
  // iteration's initial momentum, the noise, then three per slot (proposal θ, first r, ρ).
  enum : int {
    kGrad = 0,
    kLeftTheta,
    kLeftR,
    kRightTheta,
    kRightR,
    kProposal,
    kRho,
    kInitialR,
    kNoise,
    kSlots
  };
  static constexpr int kSlotCount = MaxDepth + 1;

  /// A (sub)tree in slot `slot`: its proposal θ, first momentum and ρ are scratch vectors.
  struct Tree {
    int slot = -1;
    Scalar log_weight = -std::numeric_limits<Scalar>::infinity();
    Scalar proposal_potential = Scalar(0);
    bool turning = false;
    bool diverging = false;
  };
  /// One end of the trajectory, moved in place by the base step.
  struct Edge {
    Scalar* theta;
    Scalar* r;
  };

  Status current_status() const noexcept {
    const Params& p = params_;
    if (!(p.learning_rate > Scalar(0)) || !std::isfinite(p.learning_rate)) {
      return StatusCode::InvalidStepSize;
    }
    if (!(p.momentum_decay >= Scalar(0)) || !std::isfinite(p.momentum_decay) ||
        p.resample_every < 1 || !(p.max_energy_error > Scalar(0)) ||
        !std::isfinite(p.max_energy_error)) {
      return StatusCode::InvalidParameter;
    }
    return StatusCode::Ok;
  }
  Scalar get_step_size() const noexcept { return std::sqrt(params_.learning_rate); }
  /// η = h² for h > 0; anything else stores an invalid η (NaN), so that status() reports it.
  static void put_step_size(Params& p, Scalar h) noexcept {
    p.learning_rate = h > Scalar(0) ? h * h : std::numeric_limits<Scalar>::quiet_NaN();
  }
  Status apply_params(const Params& p) noexcept {
    params_ = p;
    return current_status();
  }
  template <class St, class X>
  Status init_state(St&, const X&) const noexcept {
    return StatusCode::Ok;
  }

  template <class Model>
  static Scalar potential_gradient(const Model& model, const Scalar* theta, Scalar* g) noexcept {
    if constexpr (detail::HasPotentialAndGradient<Model, Scalar, Dim>::value) {
      const CMap th(theta);
      Map gm(g);
      return Scalar(model.potential_and_gradient(th, gm));
    } else {
      detail::call_gradient<Scalar, Dim>(model, theta, g);
      return detail::call_potential<Scalar, Dim>(model, theta);
    }
  }
  static Scalar kinetic(const Scalar* r) noexcept { return Scalar(0.5) * CMap(r).squaredNorm(); }

  /// Item 3's base step of `edge` in direction v, in place; returns the leaf energy E (NaN when
  /// a value is not finite) and the potential, or false for a negative noise sd.
  template <class St, class Model, class Rng>
  bool base_step(St& z, Edge& edge, Scalar v, const Model& model, Rng& rng, Scalar& energy,
                 Scalar& potential) const noexcept {
    const Scalar h = get_step_size();
    const Scalar c = params_.momentum_decay / h;
    Scalar* g = detail::StateAccess::scratch(z, kGrad);
    Scalar* zeta = detail::StateAccess::scratch(z, kNoise);
    for (Index i = 0; i < Dim; ++i) edge.theta[i] += v * h * edge.r[i];
    potential = potential_gradient(model, edge.theta, g);
    fill_normal(rng, zeta, Dim);
    const Scalar* info = information_;
    const Scalar sd0 = Scalar(2) * h * c;  // 2h(C − B̂) with B̂ = 0
    bool ok = true;
    for (Index i = 0; i < Dim; ++i) {
      const Scalar sd = info == nullptr ? sd0 : Scalar(2) * h * (c - Scalar(0.5) * v * h * info[i]);
      ok = ok && !(sd < Scalar(0));
      edge.r[i] += -v * h * g[i] - h * c * edge.r[i] + sd * zeta[i];
    }
    energy = potential + kinetic(edge.r);
    return ok;
  }

  /// Grows a subtree of 2^depth base steps from `edge` (Pyro's recursion, iteratively: slot
  /// stack[k] holds a finished first half of size 2^k waiting for its second half). Returns the
  /// subtree (possibly partial, see item 5) in `out`; false for a negative noise sd.
  template <class St, class Model, class Rng>
  bool build(St& z, Edge& edge, int depth, Scalar v, Scalar e0, const Model& model, Rng& rng,
             unsigned& used, Tree& out, int& leaves) const noexcept {
    auto vec = [&z](int slot, int k) {
      return detail::StateAccess::scratch(z, kSlots + 3 * slot + k);
    };
    auto take = [&used]() {
      int s = 0;
      while ((used >> s) & 1U) ++s;
      used |= 1U << s;
      return s;
    };
    Tree stack[MaxDepth];
    const std::uint32_t n_leaves = std::uint32_t(1) << depth;
    for (std::uint32_t n = 0; n < n_leaves; ++n) {
      Scalar energy = 0;
      Scalar potential = 0;
      ++leaves;
      if (!base_step(z, edge, v, model, rng, energy, potential)) return false;
      Tree carry;
      carry.slot = take();
      Map(vec(carry.slot, 0)) = CMap(edge.theta);
      Map(vec(carry.slot, 1)) = CMap(edge.r);
      Map(vec(carry.slot, 2)) = CMap(edge.r);
      const bool finite = std::isfinite(energy);
      carry.log_weight = finite ? e0 - energy : -std::numeric_limits<Scalar>::infinity();
      carry.proposal_potential = potential;
      carry.diverging = !finite || energy - e0 > params_.max_energy_error;
      bool failed = carry.diverging;
      int k = 0;
      for (; k < depth; ++k) {
        if (((n >> k) & 1U) == 0U) {
          if (!failed) {  // a finished first half: wait for its sibling
            stack[k] = carry;
            break;
          }
          continue;  // its parent returns it as it is
        }
        // carry is the second half of stack[k]: merge into stack[k]'s slot.
        Tree& first = stack[k];
        const Scalar merged = detail::log_add_exp(first.log_weight, carry.log_weight);
        const Scalar p_second = merged > -std::numeric_limits<Scalar>::infinity()
                                    ? detail::exp_nonpositive(carry.log_weight - merged)
                                    : Scalar(0);
        if (uniform_open01<Scalar>(rng) < p_second) {
          Map(vec(first.slot, 0)) = CMap(vec(carry.slot, 0));
          first.proposal_potential = carry.proposal_potential;
        }
        Map(vec(first.slot, 2)) += CMap(vec(carry.slot, 2));
        first.log_weight = merged;
        first.turning = carry.turning || detail::seed_is_turning<Scalar, Dim>(
                                             vec(first.slot, 1), edge.r, vec(first.slot, 2));
        first.diverging = carry.diverging;
        used &= ~(1U << carry.slot);
        carry = first;
        failed = carry.turning || carry.diverging;
      }
      if (k == depth) {  // the whole subtree, or the failed part of it that Pyro returns
        out = carry;
        return true;
      }
    }
    return true;  // not reached: leaf 2^depth − 1 always completes the subtree
  }

  template <class St, class Model, class Rng>
  Status step_state(St& z, const Model& model, Rng& rng) const noexcept {
    check_potential_model<Model, Scalar, Dim>();
    if (Status s = current_status(); !s) return s;
    if (!detail::all_finite(z.position()) || !detail::all_finite(z.momentum())) {
      return StatusCode::NonFiniteState;
    }
    auto sv = [&z](int k) { return detail::StateAccess::scratch(z, k); };
    Info info = z.extra();
    const bool resample = info.iteration % params_.resample_every == 0;
    Map r0(sv(kInitialR));
    if (resample) {
      fill_normal(rng, r0.data(), Dim);
    } else {
      r0 = z.momentum();
    }
    Scalar u0 = info.potential;
    if (!params_.cached_energy || !info.has_potential) {
      u0 = detail::call_potential<Scalar, Dim>(model, z.position().data());
    }
    if (!std::isfinite(u0)) return StatusCode::NonFinitePotential;
    const Scalar e0 = u0 + kinetic(r0.data());

    Edge left{sv(kLeftTheta), sv(kLeftR)};
    Edge right{sv(kRightTheta), sv(kRightR)};
    Map(left.theta) = z.position();
    Map(right.theta) = z.position();
    Map(left.r) = r0;
    Map(right.r) = r0;
    Map proposal(sv(kProposal));
    Map rho(sv(kRho));
    proposal = z.position();
    rho = r0;
    Scalar proposal_potential = u0;
    // Pyro also accumulates the tree's log-weight here (the start's is E₀ − E₀ = 0), but only for
    // the acceptance rule the seed does not apply, so it is not kept.

    Info out;
    out.iteration = info.iteration + 1;
    out.resampled = resample;
    for (int depth = 0; depth < MaxDepth; ++depth) {
      const bool forward = uniform_open01<Scalar>(rng) < Scalar(0.5);
      Edge& edge = forward ? right : left;
      unsigned used = 0;
      Tree sub;
      if (!build(z, edge, depth, forward ? Scalar(1) : Scalar(-1), e0, model, rng, used, sub,
                 out.leaves)) {
        return StatusCode::NoiseNotPSD;
      }
      if (sub.turning) {
        out.turned = true;
        break;
      }
      out.depth = depth + 1;
      out.diverging = out.diverging || sub.diverging;
      static_cast<void>(uniform_open01<Scalar>(rng));  // Pyro's draw, not used by the seed
      proposal = CMap(sv(kSlots + 3 * sub.slot));
      proposal_potential = sub.proposal_potential;
      rho += CMap(sv(kSlots + 3 * sub.slot + 2));
      if (detail::seed_is_turning<Scalar, Dim>(left.r, right.r, rho.data())) {
        out.turned = true;
        break;
      }
    }
    if (!detail::all_finite(proposal) || !std::isfinite(proposal_potential)) {
      return StatusCode::NonFiniteState;
    }
    out.has_potential = true;
    out.potential = proposal_potential;
    z.position() = proposal;
    z.momentum() = r0;
    z.set_extra(out);
    return StatusCode::Ok;
  }

  Params params_;
  const Scalar* information_ = nullptr;
};

template <int Dim, int MaxDepth = 10>
using SGNUTSSeedf = SGNUTSSeed<float, Dim, MaxDepth>;
template <int Dim, int MaxDepth = 10>
using SGNUTSSeedd = SGNUTSSeed<double, Dim, MaxDepth>;

}  // namespace sgmcmc
