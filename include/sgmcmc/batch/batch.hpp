// SPDX-License-Identifier: MIT
// K chains of one sampler stepped by one call (docs/chains.md): per-chain Status and RNG streams,
// no heap, and each chain's result bit for bit the single-chain sampler's on the same stream.
#pragma once

// Two layouts, chosen at compile time:
//  - interleaved: the K states side by side, chain index fastest (coordinate i of chain k at
//    i·K + k in every block), so that one SIMD register spans chains. For samplers whose D and Q
//    are uniform constants (SGLD with D₀ = s I, SGHMC, SGD, SGD with momentum: any integrator
//    drawing one position-sized noise vector per step) the K·d interleaved coordinates are one
//    lanewise state of the same recipe, stepped by the fused engine in one pass; each chain draws
//    its normals from its own stream, in its own order, and reads only its own lanes, so it
//    computes exactly what the single-chain step computes. A failure is found per chain (its
//    gradient and new values) and only the chains that succeeded are committed;
//  - per chain: K of the sampler's own States, stepped one after the other (every other sampler:
//    SGNHT's thermostat is a sum over one chain's coordinates, SGMGT and the learned refresh keep
//    bookkeeping, HMC and NUTS accept or build trees, Riemannian samplers are not lanewise).

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "sgmcmc/core/model.hpp"
#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/core/recipe.hpp"
#include "sgmcmc/core/state.hpp"
#include "sgmcmc/core/status.hpp"
#include "sgmcmc/core/types.hpp"
#include "sgmcmc/port/rng.hpp"

namespace sgmcmc {

/// The outcome of a batch step, chain by chain. Converts to true iff every chain succeeded.
template <int K>
struct [[nodiscard]] BatchStatus {
  Status chain[K];

  const Status& operator[](int k) const noexcept { return chain[k]; }
  Status& operator[](int k) noexcept { return chain[k]; }
  /// Number of chains whose step failed (their state is unchanged).
  int failures() const noexcept {
    int n = 0;
    for (const Status& s : chain) n += s ? 0 : 1;
    return n;
  }
  bool ok() const noexcept { return failures() == 0; }
  explicit operator bool() const noexcept { return ok(); }
  /// Every chain with status s.
  static BatchStatus all(Status s) noexcept {
    BatchStatus b;
    for (Status& c : b.chain) c = s;
    return b;
  }
};

/// How a Batch stores its chains: Auto picks Interleaved where the sampler allows it (see the
/// header comment; and d·sizeof(Scalar) ≤ 16 KiB, where the sampler keeps its V̂ inline),
/// PerChain otherwise.
enum class BatchLayout : std::uint8_t { Auto, Interleaved, PerChain };

/// A model may offer the gradient of all K chains at once (one call, e.g. vectorised across
/// chains):
///   template <class Theta, class Grad> void batch_gradient(const Theta& theta, Grad& g) const;
/// theta and g are Eigen maps of a K × d matrix: row k is chain k's θ (column-major storage, the
/// interleaved layout). Without it the batch calls gradient(θ_k, g_k) chain by chain, on aligned
/// copies.
template <class Model, class Scalar, int K, int D, class = void>
struct HasBatchGradient : std::false_type {};
template <class Model, class Scalar, int K, int D>
struct HasBatchGradient<
    Model, Scalar, K, D,
    std::void_t<decltype(std::declval<const Model&>().batch_gradient(
        std::declval<const Eigen::Map<const Matrix<Scalar, K, D>, kMapAlignment>&>(),
        std::declval<Eigen::Map<Matrix<Scalar, K, D>, kMapAlignment>&>()))>> : std::true_type {};

/// One model per chain: `batch.step(z, sgmcmc::per_chain(models), rngs)` gives chain k the model
/// models[k] (e.g. minibatch models, each drawing its own batch from its chain's stream).
template <class Models>
struct PerChainModels {
  Models* models;
};
template <class Models>
PerChainModels<Models> per_chain(Models& models) noexcept {
  return {&models};
}

namespace detail {

/// Chain k's model: the shared one, or models[k].
template <class Model>
const Model& chain_model(const Model& model, int) noexcept {
  return model;
}
template <class Models>
const auto& chain_model(const PerChainModels<Models>& m, int k) noexcept {
  return (*m.models)[k];
}
template <class Model>
struct ChainModelOf {
  using type = Model;
};
template <class Models>
struct ChainModelOf<PerChainModels<Models>> {
  using type = std::decay_t<decltype(std::declval<Models&>()[0])>;
};

/// A recipe with every block K times longer: the interleaved state of K chains.
template <class R, int K>
struct WideRecipe {
  static constexpr bool available = false;
};
template <class S, int... Sz, class E, class Df, class C, class I, bool Cold, int K>
struct WideRecipe<Recipe<S, Layout<Sz...>, E, Df, C, I, Cold>, K> {
  using type = Recipe<S, Layout<(Sz * K)...>, E, Df, C, I, Cold>;
  static constexpr bool available = true;
  /// Every block is position-sized (no one-scalar block such as SGNHT's ξ, a sum over a chain).
  static constexpr bool lane_blocks = ((Sz == Layout<Sz...>::dim) && ...);
};

template <class S>
constexpr bool uniform_constant() {
  return S::uniform && !S::state_dependent;
}
template <class T>
struct UniformStructures : std::false_type {};
template <class... DS, class... P>
struct UniformStructures<std::pair<Diffusion<DS...>, Curl<P...>>>
    : std::bool_constant<(uniform_constant<DS>() && ...) &&
                         (uniform_constant<typename P::StructureType>() && ...)> {};

template <class Sampler, class = void>
struct IsRecipeSampler : std::false_type {};
template <class Sampler>
struct IsRecipeSampler<Sampler,
                       std::void_t<typename Sampler::RecipeType, decltype(Sampler::has_noise_tick)>>
    : std::true_type {};

/// Whether K chains of Sampler can run as one interleaved recipe (header comment): the step is
/// the recipe's step and nothing else (has_noise_tick, no bookkeeping), every block is
/// position-sized, every structure a uniform constant, and a step draws either no normals or
/// one position-sized vector (so that each chain's normals fill its lanes in coordinate order).
template <class Sampler, int K, bool = IsRecipeSampler<Sampler>::value>
struct Interleavable : std::false_type {};
template <class Sampler, int K>
struct Interleavable<Sampler, K, true> {
  using R = typename Sampler::RecipeType;
  using W = WideRecipe<R, K>;
  static constexpr bool value = [] {
    if constexpr (!W::available) {
      return false;
    } else {
      return Sampler::has_noise_tick && R::fused && W::lane_blocks &&
             std::is_empty_v<typename Sampler::State::Extra> &&
             UniformStructures<std::pair<typename R::DiffusionType, typename R::CurlType>>::value &&
             (R::noise_dim == 0 || R::noise_dim == R::dim);
    }
  }();
};

/// Scalars of a d-sized buffer rounded up to the alignment unit.
template <class Scalar, int D>
constexpr int aligned_length() {
  constexpr int lanes =
      kAlignBytes / int(sizeof(Scalar)) > 0 ? kAlignBytes / int(sizeof(Scalar)) : 1;
  return (D + lanes - 1) / lanes * lanes;
}

/// The wide recipe and its state when interleaved; nothing otherwise.
struct NoWide {};
template <class Sampler, int K, bool Interleaved>
struct WideOf {
  using RecipeType = NoWide;
  using StateType = NoWide;
};
template <class Sampler, int K>
struct WideOf<Sampler, K, true> {
  using RecipeType = typename WideRecipe<typename Sampler::RecipeType, K>::type;
  using StateType = typename RecipeType::StateType;
};

template <class Sampler, int K, BatchLayout L>
constexpr bool interleaved() {
  if constexpr (L == BatchLayout::PerChain) {
    return false;
  } else {
    // The batch reads the sampler's V̂ to mirror it, which the sampler keeps inline up to 16 KiB.
    constexpr bool can = Interleavable<Sampler, K>::value &&
                         GradientNoise<typename Sampler::Scalar, Sampler::dim>::inline_values;
    static_assert(L != BatchLayout::Interleaved || can,
                  "sgmcmc: this sampler cannot be interleaved (batch/batch.hpp: uniform constant "
                  "D and Q, position-sized blocks, no bookkeeping, d·sizeof(Scalar) <= 16 KiB): "
                  "use BatchLayout::PerChain or Auto");
    return can;
  }
}

/// The RNG the interleaved engine draws from: its chunk of big coordinates [next, next + n) gets,
/// at i·K + k, chain k's next normal from chain k's own stream (one fill per chain and chunk).
/// Each chain so draws the same normals, in the same order, as its single-chain step would.
template <class Rngs, class Scalar, int K>
struct InterleavedNormals {
  using result_type = std::uint64_t;
  Rngs* rngs;
  Index next = 0;

  static constexpr result_type min() noexcept { return 0; }
  static constexpr result_type max() noexcept { return ~result_type(0); }
  /// Never called: the interleaved recipes draw normals only (Interleavable).
  result_type operator()() noexcept {
    static_assert(sizeof(Rngs) == 0, "sgmcmc: the interleaved batch draws normals only");
    return 0;
  }
  void fill_normal(Scalar* out, std::size_t n) noexcept {
    constexpr Index piece = 128;
    const Index end = next + Index(n);
    if (next % K == 0 && end % K == 0 && Index(n) <= piece * K / 4) {
      // Whole coordinates: each chain's next m normals, in place where the port hands them out
      // (take_normals), else filled into a tile; then one transposing pass that writes `out` in
      // order. (Plain loops: 4 × 4 SSE tiles measured slower, the engine reading out back at once.)
      constexpr Index rows = piece / 4 > 0 ? piece / 4 : 1;
      using Rng = std::remove_reference_t<decltype((*rngs)[0])>;
      constexpr bool in_place = CanTakeNormals<Rng, Scalar, std::size_t(rows)>::value;
      const Index m = Index(n) / K;
      const Scalar* from[K];
      [[maybe_unused]] Scalar tile[in_place ? 1 : K][in_place ? 1 : rows];
      for (int k = 0; k < K; ++k) {
        if constexpr (in_place) {
          from[k] = (*rngs)[k].template take_normals<Scalar>(std::size_t(m));
        } else {
          sgmcmc::fill_normal((*rngs)[k], tile[k], m);
          from[k] = tile[k];
        }
      }
      for (Index i = 0; i < m; ++i) {
        for (int k = 0; k < K; ++k) out[i * K + k] = from[k][i];
      }
      next = end;
      return;
    }
    for (int k = 0; k < K; ++k) {
      // This chain's big coordinates in [next, end): first, first + K, ...
      Index first = next + ((Index(k) - next % K) + K) % K;
      while (first < end) {
        const Index left = (end - 1 - first) / K + 1;
        const Index m = left < piece ? left : piece;
        Scalar z[piece];
        sgmcmc::fill_normal((*rngs)[k], z, m);
        for (Index t = 0; t < m; ++t) out[first - next + t * K] = z[t];
        first += m * K;
      }
    }
    next = end;
  }
};

/// Ors the finiteness bits of each chain's entries of an interleaved gradient into bad[k].
template <class Scalar, int K, int D>
void chain_nonfinite(const Scalar* g, BitsOf<Scalar>* bad) noexcept {
  for (Index i = 0; i < D; ++i) {
    for (int k = 0; k < K; ++k) or_nonfinite(g[Index(i) * K + k], bad[k]);
  }
}

/// The model as the interleaved engine sees it (one K·d state): the batch hook over the K × d
/// view, or chain by chain through aligned copies in `scratch`. A failed step is attributed chain
/// by chain from the gradients: before overwriting a gradient (a step that evaluates it more than
/// once) its chains' finiteness bits go to bad[k]; the caller scans the last one only if the
/// step fails, so a successful step pays nothing for it.
template <class Model, class Scalar, int K, int D>
struct InterleavedModel {
  static constexpr bool batched = HasBatchGradient<Model, Scalar, K, D>::value;
  const Model* model;
  Scalar* scratch;  // 2 aligned_length<Scalar, D>() scalars, kAlignBytes-aligned
  BitsOf<Scalar>* bad;
  int* calls;

  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& g) const noexcept {
    const Scalar* th = theta.data();
    Scalar* gr = g.data();
    if ((*calls)++ > 0) chain_nonfinite<Scalar, K, D>(gr, bad);
    if constexpr (batched) {
      const Eigen::Map<const Matrix<Scalar, K, D>, kMapAlignment> tm(th);
      Eigen::Map<Matrix<Scalar, K, D>, kMapAlignment> gm(gr);
      model->batch_gradient(tm, gm);
    } else {
      Scalar* tb = scratch;
      Scalar* gb = scratch + aligned_length<Scalar, D>();
      for (int k = 0; k < K; ++k) {
        for (Index i = 0; i < D; ++i) tb[i] = th[i * K + k];
        call_gradient<Scalar, D>(chain_model(*model, k), tb, gb);
        for (Index i = 0; i < D; ++i) gr[i * K + k] = gb[i];
      }
    }
  }
};

}  // namespace detail

template <class Sampler, int K, BatchLayout L = BatchLayout::Auto>
class Batch;

/// The states of K chains of one sampler (owned: for large d declare it `static`). Chain k's
/// blocks are views (`position(k)`, `block<B>(k)`), valid until the next step; `get`/`set` copy a
/// chain to or from a single-chain State or StateMap of the sampler.
/// Class invariant: as the single-chain State (a step switches copies; views go stale).
template <class Sampler, int K, BatchLayout L = BatchLayout::Auto>
class BatchState {
 public:
  using Scalar = typename Sampler::Scalar;
  using ChainState = typename Sampler::State;
  using LayoutType = typename ChainState::LayoutType;
  static constexpr int chains = K;
  static constexpr int dim = Sampler::dim;
  static constexpr int blocks = LayoutType::blocks;
  static constexpr bool interleaved = detail::interleaved<Sampler, K, L>();
  /// Scalars between a chain's consecutive coordinates in a block (K interleaved, else 1).
  static constexpr int stride = interleaved ? K : 1;
  static_assert(K >= 1, "sgmcmc: a batch needs at least one chain");

  template <int B>
  using ChainBlock = Eigen::Map<Vector<Scalar, LayoutType::block_size(B)>, Eigen::Unaligned,
                                Eigen::InnerStride<stride>>;
  template <int B>
  using ConstChainBlock = Eigen::Map<const Vector<Scalar, LayoutType::block_size(B)>,
                                     Eigen::Unaligned, Eigen::InnerStride<stride>>;

  /// Every chain zero.
  BatchState() noexcept { set_zero(); }

  void set_zero() noexcept {
    if constexpr (interleaved) {
      wide_.set_zero();
      for (Scalar& s : scratch_) s = Scalar(0);
    } else {
      for (ChainState& z : chains_) z.set_zero();
    }
  }

  /// Block B of chain k (k < K), a strided view of the current copy.
  template <int B>
  ChainBlock<B> block(int k) noexcept {
    return ChainBlock<B>(block_data<B>(k) + (interleaved ? k : 0));
  }
  template <int B>
  ConstChainBlock<B> block(int k) const noexcept {
    return ConstChainBlock<B>(block_data<B>(k) + (interleaved ? k : 0));
  }
  ChainBlock<0> position(int k) noexcept { return block<0>(k); }
  ConstChainBlock<0> position(int k) const noexcept { return block<0>(k); }
  template <int B = 1>
  ChainBlock<B> momentum(int k) noexcept {
    return block<B>(k);
  }
  template <int B = 1>
  ConstChainBlock<B> momentum(int k) const noexcept {
    return block<B>(k);
  }

  /// Copies chain k (its z; the bookkeeping too in the per-chain layout) into a single-chain
  /// State or StateMap of the sampler.
  template <class St>
  void get(int k, St& out) const noexcept {
    if constexpr (interleaved) {
      detail::static_for<blocks>([&](auto b) { out.template block<b>() = block<b>(k); });
    } else {
      out.assign(chains_[k]);
    }
  }
  /// Sets chain k from a single-chain State or StateMap of the sampler.
  template <class St>
  void set(int k, const St& in) noexcept {
    if constexpr (interleaved) {
      detail::static_for<blocks>([&](auto b) { block<b>(k) = in.template block<b>(); });
    } else {
      chains_[k].assign(in);
    }
  }

  /// True iff every value of chain k is finite.
  bool all_finite(int k) const noexcept {
    bool ok = true;
    detail::static_for<blocks>([&](auto b) { ok = ok && detail::all_finite(block<b>(k)); });
    return ok;
  }

  /// Chain k's own State (per-chain layout only).
  ChainState& chain(int k) noexcept {
    static_assert(!interleaved, "sgmcmc: an interleaved batch has no per-chain State: get/set");
    return chains_[k];
  }
  const ChainState& chain(int k) const noexcept {
    static_assert(!interleaved, "sgmcmc: an interleaved batch has no per-chain State: get/set");
    return chains_[k];
  }

 private:
  friend class Batch<Sampler, K, L>;
  using NoWide = detail::NoWide;
  using WideState = typename detail::WideOf<Sampler, K, interleaved>::StateType;
  // Chain scratch: a single-chain StateMap (start, the per-chain fallback) or two aligned d-sized
  // buffers (the model's per-chain copies), whichever is larger.
  static constexpr int scratch_size = [] {
    constexpr int a = ChainState::storage_size;
    constexpr int b = 2 * detail::aligned_length<Scalar, dim>();
    return interleaved ? (a > b ? a : b) : 1;
  }();

  template <int B>
  const Scalar* block_data(int k) const noexcept {
    if constexpr (interleaved) {
      static_cast<void>(k);
      return wide_.template block<B>().data();
    } else {
      return chains_[k].template block<B>().data();
    }
  }
  template <int B>
  Scalar* block_data(int k) noexcept {
    if constexpr (interleaved) {
      static_cast<void>(k);
      return wide_.template block<B>().data();
    } else {
      return chains_[k].template block<B>().data();
    }
  }
  Scalar* scratch() noexcept { return scratch_; }

  WideState wide_;
  alignas(kAlignBytes) Scalar scratch_[scratch_size];
  std::conditional_t<interleaved, NoWide, ChainState> chains_[interleaved ? 1 : K];
};

/// K chains of one sampler, stepped by one call:
///   sgmcmc::Batch<sgmcmc::SGHMC<float, 2>, 8> batch(sampler);   // parameters only
///   static decltype(batch)::State z;                    // the 8 chains (any storage)
///   batch.start(z, theta0);                             // every chain at θ0, or start(z, k, θ0)
///   auto rngs = sgmcmc::host::chain_streams<8>(seed);   // chain k draws from stream k
///   sgmcmc::BatchStatus<8> s = batch.step(z, model, rngs);
/// Chain k's result is bit for bit sampler.step on its own State with rngs[k] (whatever K, the
/// layout or the thread that runs the batch). A chain whose step fails keeps its values exactly;
/// the others advance. No heap; the stack does not grow with d.
/// Class invariant (interleaved): the wide recipe mirrors the sampler's parameters, temperature
/// and V̂, or fused() is false and the chains step one by one through a single-chain copy.
template <class Sampler, int K, BatchLayout L>
class Batch {
 public:
  using SamplerType = Sampler;
  using Scalar = typename Sampler::Scalar;
  using State = BatchState<Sampler, K, L>;
  static constexpr int chains = K;
  static constexpr int dim = Sampler::dim;
  static constexpr bool interleaved = State::interleaved;

  explicit Batch(const Sampler& sampler = Sampler{}) noexcept
      : sampler_(sampler), wide_(make_wide(sampler)) {
    mirror();
  }

  const Sampler& sampler() const noexcept { return sampler_; }
  /// Replaces the sampler (parameters, temperature, V̂), e.g. after adapting its step size.
  /// Returns its status.
  Status set_sampler(const Sampler& s) noexcept {
    sampler_ = s;
    wide_ = make_wide(s);
    mirror();
    return status();
  }
  /// The sampler's status: step() returns it for every chain when it is not Ok.
  Status status() const noexcept { return sampler_.status(); }
  /// True when a step runs all chains in one interleaved pass (false: per-chain layout, or an
  /// interleaved batch whose sampler has a V̂ the wide recipe cannot hold: non-uniform values with
  /// K·d·sizeof(Scalar) > 16 KiB).
  bool fused() const noexcept { return interleaved && wide_ok_; }

  /// Resets chain k (0 ≤ k < K) to θ0 exactly as sampler().start(z_k, θ0) would. InvalidParameter
  /// for a k out of range; on failure chain k is unchanged.
  template <class X>
  Status start(State& z, int k, const Eigen::MatrixBase<X>& theta0) const noexcept {
    if (k < 0 || k >= K) return StatusCode::InvalidParameter;
    if constexpr (interleaved) {
      typename Sampler::StateMap m(z.scratch());
      const Status s = sampler_.start(m, theta0);
      if (s) z.set(k, m);
      return s;
    } else {
      return sampler_.start(z.chains_[k], theta0);
    }
  }
  /// The same with the auxiliary variables drawn from rng (sampler().start(z_k, θ0, rng)).
  template <class X, class Rng>
  Status start(State& z, int k, const Eigen::MatrixBase<X>& theta0, Rng& rng) const noexcept {
    if (k < 0 || k >= K) return StatusCode::InvalidParameter;
    if constexpr (interleaved) {
      typename Sampler::StateMap m(z.scratch());
      z.get(k, m);
      const Status s = sampler_.start(m, theta0, rng);
      if (s) z.set(k, m);
      return s;
    } else {
      return sampler_.start(z.chains_[k], theta0, rng);
    }
  }
  /// Every chain at θ0; the first failure (chains from it on are unchanged).
  template <class X>
  Status start(State& z, const Eigen::MatrixBase<X>& theta0) const noexcept {
    for (int k = 0; k < K; ++k) {
      if (Status s = start(z, k, theta0); !s) return s;
    }
    return StatusCode::Ok;
  }

  /// One step of every chain: chain k with model (or models[k], see per_chain) and rngs[k] (any
  /// indexable set of K port RNGs: a C array, std::array). Per-chain status; a failed chain is
  /// left exactly as it was. If status() is not Ok, every chain gets it and nothing is drawn.
  template <class Model, class Rngs>
  BatchStatus<K> step(State& z, const Model& model, Rngs& rngs) const noexcept {
    using Rng = std::remove_reference_t<decltype(rngs[0])>;
    using ChainModel = typename detail::ChainModelOf<Model>::type;
    check_rng<Rng>();
    if constexpr (!HasBatchGradient<Model, Scalar, K, dim>::value) {
      check_gradient_model<ChainModel, Scalar, dim>();
    }
    if (Status s = status(); !s) return BatchStatus<K>::all(s);
    BatchStatus<K> out;
    if constexpr (interleaved) {
      if (wide_ok_) {
        constexpr std::size_t bytes = std::size_t(K) * std::size_t(dim) * sizeof(Scalar);
        return detail::dispatched<false, bytes>(
            [&]() noexcept { return step_wide(z, model, rngs); });
      }
      for (int k = 0; k < K; ++k) {
        out[k] = step_through_copy(z, k, detail::chain_model(model, k), rngs[k]);
      }
    } else {
      for (int k = 0; k < K; ++k) {
        out[k] = sampler_.step(z.chains_[k], detail::chain_model(model, k), rngs[k]);
      }
    }
    return out;
  }

 private:
  using Wide = typename detail::WideOf<Sampler, K, interleaved>::RecipeType;

  static Wide make_wide(const Sampler& s) noexcept {
    if constexpr (interleaved) {
      const auto& r = s.recipe();
      return Wide(r.energy(), r.diffusion(), r.curl(), r.step_size());
    } else {
      static_cast<void>(s);
      return {};
    }
  }

  /// Gives the wide recipe the sampler's temperature and V̂ (uniform V̂ as a scalar, other values
  /// replicated chain by chain where they fit inline); wide_ok_ says whether it succeeded.
  void mirror() noexcept {
    if constexpr (interleaved) {
      const auto& r = sampler_.recipe();
      wide_ok_ = bool(wide_.set_temperature(r.temperature()));
      const auto v = r.gradient_noise();
      bool uniform = true;
      for (Index i = 1; i < dim; ++i) uniform = uniform && v[i] == v[0];
      if (uniform) {
        wide_ok_ = wide_ok_ && bool(wide_.set_gradient_noise(v[0]));
      } else if constexpr (detail::GradientNoise<Scalar, K * dim>::inline_values) {
        Vector<Scalar, K * dim> w;
        for (Index i = 0; i < dim; ++i) {
          for (int k = 0; k < K; ++k) w[i * K + k] = v[i];
        }
        wide_ok_ = wide_ok_ && bool(wide_.set_gradient_noise(w));
      } else {
        wide_ok_ = false;
      }
      wide_ok_ = wide_ok_ && bool(wide_.status());
    }
  }

  /// Chain k stepped by the sampler itself on a single-chain copy in z's scratch.
  template <class Model, class Rng>
  Status step_through_copy(State& z, int k, const Model& model, Rng& rng) const noexcept {
    typename Sampler::StateMap m(z.scratch());
    z.get(k, m);
    const Status s = sampler_.step(m, model, rng);
    if (s) z.set(k, m);
    return s;
  }

  /// All chains in one pass of the wide recipe; on failure, each chain's status from its own
  /// gradient and new values, and only the chains that succeeded are committed.
  template <class Model, class Rngs>
  BatchStatus<K> step_wide(State& z, const Model& model, Rngs& rngs) const noexcept {
    using Bits = detail::BitsOf<Scalar>;
    using Access = detail::StateAccess;
    Bits bad_gradient[K] = {};
    int calls = 0;
    detail::InterleavedNormals<Rngs, Scalar, K> normals{&rngs};
    const detail::InterleavedModel<Model, Scalar, K, dim> wide_model{&model, z.scratch(),
                                                                     bad_gradient, &calls};
    const Status s = wide_.step(z.wide_, wide_model, normals);
    if (s) return BatchStatus<K>::all(StatusCode::Ok);
    if (s != StatusCode::NonFiniteGradient && s != StatusCode::NonFiniteState) {
      return BatchStatus<K>::all(s);
    }
    // The step wrote every block of every chain to the other copy and did not switch; scratch 0
    // holds its last gradient.
    if (calls > 0)
      detail::chain_nonfinite<Scalar, K, dim>(Access::scratch(z.wide_, 0), bad_gradient);
    using ChainLayout = typename State::LayoutType;
    const int f = Access::front(z.wide_);
    Bits bad_state[K] = {};
    detail::static_for<State::blocks>([&](auto b) {
      const Scalar* next = Access::block(z.wide_, 1 - f, b);
      for (Index i = 0; i < ChainLayout::block_size(b); ++i) {
        for (int k = 0; k < K; ++k) detail::or_nonfinite(next[i * K + k], bad_state[k]);
      }
    });
    BatchStatus<K> out;
    bool commit[K];
    for (int k = 0; k < K; ++k) {
      if (!detail::finite_bits(bad_gradient[k])) {
        out[k] = StatusCode::NonFiniteGradient;
      } else if (!detail::finite_bits(bad_state[k])) {
        out[k] = StatusCode::NonFiniteState;
      }
      commit[k] = bool(out[k]);
    }
    detail::static_for<State::blocks>([&](auto b) {
      const Scalar* next = Access::block(z.wide_, 1 - f, b);
      Scalar* cur = Access::block(z.wide_, f, b);
      for (Index i = 0; i < ChainLayout::block_size(b); ++i) {
        for (int k = 0; k < K; ++k) {
          if (commit[k]) cur[i * K + k] = next[i * K + k];
        }
      }
    });
    return out;
  }

  Sampler sampler_;
  Wide wide_;
  bool wide_ok_ = false;
};

}  // namespace sgmcmc
