// SPDX-License-Identifier: MIT
// Prints, for a set of samplers (float d = 10 and 37, double d = 3 and 37; six of them at float
// d = 133 and double d = 67, positions from kAvx512StepMinBytes, which run the AVX-512 copy where
// it is compiled and the CPU has it) and chain batches (8 chains of d = 5, and of float d = 17:
// 544 bytes), a hash of the state after 300 steps on a non-quadratic target and the bytes of
// positions the step dispatches on, and which copy of the step ran.
// CMake builds it seven times: as any build would (the step dispatched at run time,
// core/types.hpp), with SGMCMC_NO_DISPATCH (the baseline copy only), with -mavx2 -mfma (FMA
// contraction: a negative control whose rounding differs), with the opt-in copies (AVX-512 for
// every step, narrow small steps), and with contraction in the AVX-512 copies (of every step; of
// the default's from 512 bytes). dispatch_compare.cmake checks that the dispatched builds print
// the baseline's hashes and that the contracted ones do not, where they run.
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/host/streams.hpp"
#include "sgmcmc/sgmcmc.hpp"

using namespace sgmcmc;

// Which steps the opt-in narrow copy takes (SGMCMC_NARROW_SMALL_STEPS; core/types.hpp), in every
// build of this file: the small chains below, not d = 37, not SGNHT's (a one-scalar block), not a
// position of 16 bytes or less.
static_assert(detail::narrow_step_fits<float, SGLD<float, 10>::State::LayoutType>());
static_assert(detail::narrow_step_fits<double, HMC<double, 3>::State::LayoutType>());
static_assert(!detail::narrow_step_fits<float, SGLD<float, 37>::State::LayoutType>());
static_assert(!detail::narrow_step_fits<double, SGHMC<double, 37>::State::LayoutType>());
static_assert(!detail::narrow_step_fits<float, SGNHT<float, 5>::State::LayoutType>());
static_assert(!detail::narrow_step_fits<float, SGLD<float, 3>::State::LayoutType>());
// Which take the AVX-512 copy by default: d = 133 and 67 and the batch of 8 chains of float
// d = 17, not d = 37 nor the batches of d = 5.
#if !defined(SGMCMC_DISPATCH_AVX512_STEP)
static_assert(133 * sizeof(float) >= detail::kAvx512StepMinBytes &&
              67 * sizeof(double) >= detail::kAvx512StepMinBytes &&
              8 * 17 * sizeof(float) >= detail::kAvx512StepMinBytes &&
              37 * sizeof(double) < detail::kAvx512StepMinBytes &&
              8 * 5 * sizeof(double) < detail::kAvx512StepMinBytes);
#endif

namespace {

/// U = Σ θ²/2 + θ⁴/40: the gradient θ + θ³/10 is the model's own arithmetic in the copied step.
struct Quartic {
  template <class T, class G>
  void gradient(const T& th, G& g) const noexcept {
    for (Index i = 0; i < th.size(); ++i) g[i] = th[i] + th[i] * th[i] * th[i] / 10;
  }
  template <class T>
  typename T::Scalar potential(const T& th) const noexcept {
    typename T::Scalar u = 0;
    for (Index i = 0; i < th.size(); ++i) {
      u += th[i] * th[i] / 2 + th[i] * th[i] * th[i] * th[i] / 40;
    }
    return u;
  }
};

std::uint64_t fnv(const void* p, std::size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  std::uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

template <class S>
void chain(const char* name) {
  using T = typename S::Scalar;
  constexpr int d = S::dim;
  const S s{};
  static typename S::State z;
  host::Rng rng(20261128u);
  // The generator's kernel is dispatched on its own (host/rng.hpp): pin its AVX2 kernel (compiled
  // alike in every build; no change where the CPU lacks it) so that only the step can differ.
  static_cast<void>(rng.set_isa(host::Isa::Avx2));
  if (!s.start(z, Vector<T, d>::Constant(T(0.3)), rng)) {
    std::printf("%s/%s/%d start failed\n", name, sizeof(T) == 4 ? "float" : "double", d);
    return;
  }
  int failures = 0;
  for (int t = 0; t < 300; ++t) failures += s.step(z, Quartic{}, rng) ? 0 : 1;
  std::printf("%s/%s/%d %016llx failures %d bytes %zu\n", name, sizeof(T) == 4 ? "float" : "double",
              d, static_cast<unsigned long long>(fnv(z.data(), sizeof(T) * S::State::storage_size)),
              failures, d * sizeof(T));
}

/// One sampler of each kind (a constant D, a momentum, a thermostat, HMC's and NUTS's
/// trajectories, a state-dependent Γ): what the positions from kAvx512StepMinBytes step, to keep
/// the builds of this file short.
template <class T, int d>
void kinds() {
  chain<SGLD<T, d>>("SGLD");
  chain<SGHMC<T, d>>("SGHMC");
  chain<SGNHT<T, d>>("SGNHT");
  chain<HMC<T, d>>("HMC");
  chain<NUTS<T, d, 6>>("NUTS");
  chain<GSGRHMC<T, d>>("gSGRHMC");
}

/// Every sampler.
template <class T, int d>
void all() {
  kinds<T, d>();
  chain<SGLD<T, d, Diagonal<T, d>>>("SGLD-diagonal");
  chain<SGHMC<T, d, BAOAB>>("SGHMC-BAOAB");
  chain<SGHMC<T, d, ExplicitEuler>>("SGHMC-Euler");
  chain<SGD<T, d>>("SGD");
  chain<SGDMomentum<T, d>>("SGD-momentum");
  chain<SGMGT<T, d>>("SGMGT");
  chain<SGMGTD<T, d>>("SGMGT-D");
  chain<SGHMCLearnedRefresh<T, d, 4>>("SGHMC-learned");
}

template <class T, int d>
void batch() {
  constexpr int K = 8;
  using S = SGHMC<T, d>;
  const Batch<S, K> b{S{}};
  static typename Batch<S, K>::State z;
  for (int k = 0; k < K; ++k) static_cast<void>(b.start(z, k, Vector<T, d>::Constant(T(0.1 * k))));
  auto rngs = host::chain_streams<K>(7u);
  for (auto& r : rngs) static_cast<void>(r.set_isa(host::Isa::Avx2));
  int failures = 0;
  for (int t = 0; t < 300; ++t) failures += b.step(z, Quartic{}, rngs).failures();
  std::uint64_t h = 0;
  for (int k = 0; k < K; ++k) {
    typename S::State c;
    z.get(k, c);
    h = h * 31 + fnv(c.data(), sizeof(T) * S::State::storage_size);
  }
  std::printf("Batch-SGHMC-K8/%s/%d %016llx failures %d bytes %zu\n",
              sizeof(T) == 4 ? "float" : "double", d, static_cast<unsigned long long>(h), failures,
              K * d * sizeof(T));
}

}  // namespace

int main() {
#if SGMCMC_DISPATCH_AVX2
  const bool avx512 = detail::cpu_has_avx512();
  const bool every_size = avx512 && detail::kAvx512StepMinBytes == 0;
  std::printf("# step copy: %s", avx512 ? "avx512" : detail::cpu_has_avx2() ? "avx2" : "baseline");
  if (avx512 && !every_size) {
    std::printf(" from %zu bytes, avx2 below", detail::kAvx512StepMinBytes);
  }
  std::printf("%s\n", SGMCMC_NARROW_STEP != 0 && !every_size && detail::cpu_has_avx2()
                          ? ", small steps in 16-byte vectors"
                          : "");
#else
  std::printf("# step copy: compiled baseline only\n");
#endif
  // 40 bytes: the gradient re-stored in 32 bytes (core/model.hpp) and, with
  // SGMCMC_NARROW_SMALL_STEPS, a narrow step, as double d = 3.
  all<float, 10>();
  all<float, 37>();
  all<double, 3>();
  all<double, 37>();
  kinds<float, 133>();
  kinds<double, 67>();
  batch<float, 5>();
  batch<double, 5>();
  batch<float, 17>();  // 8 chains of 68 bytes: the AVX-512 copy by default
  return 0;
}
