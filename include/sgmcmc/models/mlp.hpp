// SPDX-License-Identifier: MIT
// A 784-100-10 Bayesian neural network (the SGHMC paper's MNIST network) over caller-owned 28×28
// byte images: minibatch potential and gradient, full-data potential and predictive probabilities,
// heap-free in a caller-owned workspace, with AVX2 and AVX-512 kernels chosen at run time.
#pragma once

// Model (docs/models/mlp.md). An image x ∈ [0, 1]^784 (pixel bytes / 255, as torchvision's
// ToTensor in the seed's code; the SGHMC authors' code divides by 256) and a class y ∈ 0..9:
//   a = b1 + W1ᵀ x ∈ R^100,  h = act(a),  z = b2 + W2 h ∈ R^10,  p(y | x, θ) = softmax(z)_y,
// act = the logistic sigmoid by default (the SGHMC paper, §4.3, and its authors' code) or ReLU
// (the seed's reproduction), chosen by the MlpActivation template argument. Prior: each of the
// four groups k = W1, b1, W2, b2 is N(0, λ_k⁻¹ I). λ_k = 1 by default: the seed's N(0, 1) on
// every weight, and the mean of the paper's Gamma(1, 1) hyperprior; the paper resamples λ_k by
// Gibbs, λ_k | θ ~ Gamma(1 + n_k / 2, rate 1 + ‖θ_k‖² / 2), for which the model offers
// group_squared_norms() and set_prior(). With N training images and a batch B of n of them:
//   Ũ(θ) = (N / n) Σ_{i∈B} −log p(y_i | x_i, θ) + Σ_k λ_k ‖θ_k‖² / 2      (constants dropped)
// and U(θ) is the same sum over all N images with N / n = 1.
//
// θ is one flat vector of Dim = 784·100 + 100 + 100·10 + 10 = 79 510 scalars:
//   θ[0, 78400)      W1, pixel-major: θ[100 j + i] is the weight from pixel j to hidden unit i
//                    (PyTorch's fc1.weight transposed);
//   θ[78400, 78500)  b1;
//   θ[78500, 79500)  W2, class-major: θ[78500 + 100 c + i] from hidden unit i to class c
//                    (PyTorch's fc2.weight);
//   θ[79500, 79510)  b2.
// θ and the gradient are Eigen objects of compile-time size Dim with .data() (e.g. an
// Eigen::Map<const Eigen::Matrix<S, Dim, 1>> over caller-owned memory: an Eigen fixed-size object
// this large does not fit a stack); the images and labels are caller-owned and read in place.
//
// Speed. The work is in layer 1: 78 400 multiply-adds forward and as many backward per image.
// FashionMNIST is half background, so both products run over the nonzero pixels only, found
// from 64-pixel bit masks; one 64-pixel word of W1 (or of its gradient) stays in L1 while the
// batch passes over it, and with AVX-512 three images of similar outline share each load of a W1
// row (and each load and store of a gradient row). The kernels are
// written once (detail/mlp_pass.inc) against a small vector-operations struct and compiled three
// times: portable C++ (any target), AVX2+FMA and AVX-512, picked at construction from what the
// CPU supports (GCC/Clang target attributes and __builtin_cpu_supports), so a portable build
// (no -march) still runs the AVX-512 kernels where the CPU has them. double always runs the
// portable code (it is for tests).

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include <Eigen/Core>

#include "sgmcmc/data/minibatch.hpp"

#if defined(__x86_64__) || defined(__i386__)
#define SGMCMC_MLP_X86 1
#include <immintrin.h>
#else
#define SGMCMC_MLP_X86 0
#endif

namespace sgmcmc {

/// Hidden-layer activation: the logistic sigmoid (the SGHMC paper) or ReLU (the seed's code).
enum class MlpActivation : std::uint8_t { Sigmoid, ReLU };

/// Which compiled copy of the pass runs: Auto picks the best the CPU supports (float: AVX-512,
/// else AVX2, else portable; double: portable).
enum class MlpKernel : std::uint8_t { Auto, Portable, Avx2, Avx512 };

/// Prior precisions λ_k of the four parameter groups (N(0, λ_k⁻¹ I) each).
template <class Scalar>
struct MlpPrior {
  Scalar w1 = Scalar(1);  ///< λ of W1
  Scalar b1 = Scalar(1);  ///< λ of b1
  Scalar w2 = Scalar(1);  ///< λ of W2
  Scalar b2 = Scalar(1);  ///< λ of b2
};

namespace detail::mlp {

inline constexpr int kInputs = 784;
inline constexpr int kHidden = 100;
inline constexpr int kClasses = 10;
inline constexpr int kOffsetW1 = 0;
inline constexpr int kOffsetB1 = kInputs * kHidden;
inline constexpr int kOffsetW2 = kOffsetB1 + kHidden;
inline constexpr int kOffsetB2 = kOffsetW2 + kHidden * kClasses;
inline constexpr int kDim = kOffsetB2 + kClasses;
inline constexpr int kHiddenPad = 112;              // hidden rows padded to 7 × 16 lanes
inline constexpr int kClassPad = 16;                // class rows padded to 16
inline constexpr int kWords = (kInputs + 63) / 64;  // 64-pixel mask words per image (13)
inline constexpr int kSide = 28;                    // 28 × 28 images
static_assert(kDim == 79510, "784·100 + 100 + 100·10 + 10");

/// pixel byte → its value in [0, 1], byte / 255 correctly rounded in Scalar.
template <class Scalar>
struct PixelScale {
  static constexpr std::array<Scalar, 256> make() noexcept {
    std::array<Scalar, 256> t{};
    for (int i = 0; i < 256; ++i) t[std::size_t(i)] = Scalar(i) / Scalar(255);
    return t;
  }
  static constexpr std::array<Scalar, 256> table = make();
};

/// e^x in float without a library call, so that loops over it vectorise: Cody–Waite reduction
/// x = n ln2 + r, |r| <= ln2/2, Cephes' degree-6 polynomial for e^r, and 2^n built in the
/// exponent bits. x is clamped to [−87.3, 88.3] (results from 1.2e−38 to 2.2e38); NaN stays
/// NaN. Relative error below 2e−7 (tests/models: against std::exp). Written once, on the vector
/// operations of the pass (exp_vec in models/detail/mlp_pass.inc); this is its one-lane copy.
inline float fast_exp(float x) noexcept;

/// The pass's scratch arrays (views into an MlpWorkspace).
template <class Scalar>
struct Buffers {
  Scalar* a;             // batch × kHiddenPad: pre-activations, then the backward deltas
  Scalar* h;             // batch × kHiddenPad: activations (pads 0)
  Scalar* z;             // batch × kClassPad: logits, then (N/n)(p − onehot)
  Scalar* gw1;           // kInputs × kHiddenPad: gradient of W1 (aligned rows); in the forward
                         // pass, with Ops::kCopyW1, an aligned copy of one word of W1
  Scalar* w2;            // kClasses × kHiddenPad: W2 with zero pads
  Scalar* gw2;           // kClasses × kHiddenPad
  Scalar* gb1;           // kHiddenPad
  std::uint64_t* mask;   // batch × kWords nonzero-pixel masks
  std::uint64_t* order;  // batch: the order in which images are grouped (low 32 bits)
  std::uint8_t* pixels;  // kWords × capacity × 64: the batch's pixels, word-major, grouped order
  std::size_t capacity;  // images the buffers hold
};

/// One pass's inputs and outputs.
template <class Scalar>
struct Pass {
  const Scalar* theta;         // Dim parameters
  Scalar* grad;                // null, or Dim outputs (needs labels)
  const std::uint8_t* pixels;  // image i at pixels + 784 index[e]
  const std::uint8_t* labels;  // null (no likelihood), or label of image i at labels[index[e]]
  const std::uint32_t* index;  // n batch rows
  std::size_t n;
  Scalar scale;         // N / n
  Scalar precision[4];  // λ of W1, b1, W2, b2
  Scalar* probs;        // null, or n × 10 predictive probabilities
  Buffers<Scalar> ws;
};

// Portable copy: plain C++ that the compiler vectorises for whatever target it builds for.
namespace portable {
template <class Scalar>
struct Ops {
  using V = Scalar;
  static constexpr int kLanes = 1;
  static constexpr int kGroup = 1;          // examples per layer-1 kernel call
  static constexpr int kBackwardBlock = 0;  // > 0: the blocked layer-1 backward pass (mlp_pass)
  static constexpr bool kCopyW1 = false;    // the forward pass reads W1 from an aligned copy
  static V zero() noexcept { return Scalar(0); }
  static V load(const Scalar* p) noexcept { return *p; }
  static V load_aligned(const Scalar* p) noexcept { return *p; }
  static void store_aligned(Scalar* p, V v) noexcept { *p = v; }
  static V broadcast(Scalar x) noexcept { return x; }
  static V fma(V a, V b, V c) noexcept { return a * b + c; }
  static V add(V a, V b) noexcept { return a + b; }
  static V sub(V a, V b) noexcept { return a - b; }
  static V mul(V a, V b) noexcept { return a * b; }
  static V div(V a, V b) noexcept { return a / b; }
  // hi if x > hi, else x; lo if x < lo, else x (a NaN x passes, as with the SIMD min and max).
  static V min(V hi, V x) noexcept { return x > hi ? hi : x; }
  static V max(V lo, V x) noexcept { return x < lo ? lo : x; }
  // 2^n from x + 1.5·2^23 (float; x rounded to the integer n in its low mantissa bits). Shifted
  // as unsigned: for a NaN, n + 127 is out of the exponent's range and a signed shift would be
  // undefined (UBSan); the caller's result is NaN either way.
  static V pow2_of_shifted(V shifted) noexcept {
    static_assert(std::is_same_v<Scalar, float>, "float only");
    std::int32_t bits;
    std::memcpy(&bits, &shifted, sizeof bits);
    const auto scale_bits = static_cast<std::uint32_t>(bits - 0x4B400000 + 127) << 23;
    float scale;
    std::memcpy(&scale, &scale_bits, sizeof scale);
    return scale;
  }
  static V in_register(V v) noexcept { return v; }
  static Scalar sum(V v) noexcept { return v; }
  template <int Bytes>
  static std::uint64_t nonzero(const std::uint8_t* p) noexcept {
    std::uint64_t m = 0;
    for (int b = 0; b < Bytes; ++b) m |= std::uint64_t(p[b] != 0) << b;
    return m;
  }
  static std::uint64_t nonzero64(const std::uint8_t* p) noexcept { return nonzero<64>(p); }
  static std::uint64_t nonzero16(const std::uint8_t* p) noexcept { return nonzero<16>(p); }
};
#include "sgmcmc/models/detail/mlp_pass.inc"
}  // namespace portable

inline float fast_exp(float x) noexcept {
  return portable::exp_vec<float>(x);
}

#if SGMCMC_MLP_X86
/// Nonzero mask of 16 pixel bytes (SSE2, which every x86-64 has).
inline std::uint64_t sse2_nonzero16(const std::uint8_t* p) noexcept {
  const int zeros = _mm_movemask_epi8(
      _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), _mm_setzero_si128()));
  return ~static_cast<std::uint64_t>(zeros) & 0xFFFFu;
}

// AVX2 + FMA copy: 8 lanes, one image per layer-1 call (13 accumulators of 16 registers).
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
namespace avx2 {
template <class Scalar>
struct Ops;
template <>
struct Ops<float> {
  using V = __m256;
  static constexpr int kLanes = 8;
  static constexpr int kGroup = 1;
  static constexpr int kBackwardBlock = 64;
  static constexpr bool kCopyW1 = true;
  static V zero() noexcept { return _mm256_setzero_ps(); }
  static V load(const float* p) noexcept { return _mm256_loadu_ps(p); }
  static V load_aligned(const float* p) noexcept { return _mm256_load_ps(p); }
  static void store_aligned(float* p, V v) noexcept { _mm256_store_ps(p, v); }
  static V broadcast(float x) noexcept { return _mm256_set1_ps(x); }
  static V fma(V a, V b, V c) noexcept { return _mm256_fmadd_ps(a, b, c); }
  static V add(V a, V b) noexcept { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) noexcept { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) noexcept { return _mm256_mul_ps(a, b); }
  static V div(V a, V b) noexcept { return _mm256_div_ps(a, b); }
  static V min(V hi, V x) noexcept { return _mm256_min_ps(hi, x); }  // NaN x: x
  static V max(V lo, V x) noexcept { return _mm256_max_ps(lo, x); }
  static V pow2_of_shifted(V shifted) noexcept {  // see portable::Ops
    const __m256i n =
        _mm256_sub_epi32(_mm256_castps_si256(shifted), _mm256_set1_epi32(0x4B400000 - 127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(n, 23));
  }
  // Keeps a loaded vector in a register: without it GCC folds the load into each of the G FMAs
  // that use it, loading the same W1 row G times.
  static V in_register(V v) noexcept {
    asm("" : "+x"(v));
    return v;
  }
  static float sum(V v) noexcept {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
  }
  static std::uint64_t nonzero64(const std::uint8_t* p) noexcept {
    const __m256i zero = _mm256_setzero_si256();
    const auto lo = static_cast<std::uint32_t>(_mm256_movemask_epi8(
        _mm256_cmpeq_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), zero)));
    const auto hi = static_cast<std::uint32_t>(_mm256_movemask_epi8(
        _mm256_cmpeq_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32)), zero)));
    return ~((std::uint64_t(hi) << 32) | lo);
  }
  static std::uint64_t nonzero16(const std::uint8_t* p) noexcept { return sse2_nonzero16(p); }
};
#include "sgmcmc/models/detail/mlp_pass.inc"
}  // namespace avx2
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

// AVX-512 copy: 16 lanes, three images per layer-1 call sharing each W1-row load (21 accumulators
// of 32 registers; four images, which spill one, measured no faster over whole epochs).
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx2,fma"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx2,fma")
#endif
namespace avx512 {
template <class Scalar>
struct Ops;
template <>
struct Ops<float> {
  using V = __m512;
  static constexpr int kLanes = 16;
  static constexpr int kGroup = 3;
  static constexpr int kBackwardBlock = 0;  // blocked (64, grouped order) measured no faster here
  // θ's rows of 100 floats start at multiples of 16 bytes, so in three rows of four every 64-byte
  // load straddles two cache lines; from the aligned copy (28 kB of the Xeon's 48 kB L1) the
  // epoch was about 3 % faster.
  static constexpr bool kCopyW1 = true;
  static V zero() noexcept { return _mm512_setzero_ps(); }
  static V load(const float* p) noexcept { return _mm512_loadu_ps(p); }
  static V load_aligned(const float* p) noexcept { return _mm512_load_ps(p); }
  static void store_aligned(float* p, V v) noexcept { _mm512_store_ps(p, v); }
  static V broadcast(float x) noexcept { return _mm512_set1_ps(x); }
  static V fma(V a, V b, V c) noexcept { return _mm512_fmadd_ps(a, b, c); }
  static V add(V a, V b) noexcept { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) noexcept { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) noexcept { return _mm512_mul_ps(a, b); }
  static V div(V a, V b) noexcept { return _mm512_div_ps(a, b); }
  static V min(V hi, V x) noexcept { return _mm512_maskz_min_ps(0xFFFF, hi, x); }  // NaN x: x
  static V max(V lo, V x) noexcept { return _mm512_maskz_max_ps(0xFFFF, lo, x); }
  static V pow2_of_shifted(V shifted) noexcept {  // see portable::Ops
    const __m512i n =
        _mm512_sub_epi32(_mm512_castps_si512(shifted), _mm512_set1_epi32(0x4B400000 - 127));
    return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(0xFFFF, n, 23));
  }
  static V in_register(V v) noexcept {  // see avx2::Ops
    asm("" : "+v"(v));
    return v;
  }
  // Masked min, max, shift, shuffle and extract: the unmasked ones (and _mm512_reduce_add_ps) start
  // from _mm512_undefined_ps, which trips GCC 12's -Wmaybe-uninitialized.
  static float sum(V v) noexcept {
    V t = _mm512_add_ps(v, _mm512_maskz_shuffle_f32x4(0xFFFF, v, v, _MM_SHUFFLE(1, 0, 3, 2)));
    t = _mm512_add_ps(t, _mm512_maskz_shuffle_f32x4(0xFFFF, t, t, _MM_SHUFFLE(2, 3, 0, 1)));
    __m128 s = _mm512_maskz_extractf32x4_ps(0xF, t, 0);
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
  }
  static std::uint64_t nonzero64(const std::uint8_t* p) noexcept {
    const __m512i v = _mm512_loadu_si512(p);
    return _mm512_test_epi8_mask(v, v);
  }
  static std::uint64_t nonzero16(const std::uint8_t* p) noexcept { return sse2_nonzero16(p); }
};
#include "sgmcmc/models/detail/mlp_pass.inc"
}  // namespace avx512
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif  // SGMCMC_MLP_X86

/// Runs the pass with the chosen copy (float only for the SIMD ones).
template <class Scalar, MlpActivation Act>
Scalar run_pass(MlpKernel kernel, const Pass<Scalar>& p) noexcept {
#if SGMCMC_MLP_X86
  if constexpr (std::is_same_v<Scalar, float>) {
    if (kernel == MlpKernel::Avx512) return avx512::run<float, Act>(p);
    if (kernel == MlpKernel::Avx2) return avx2::run<float, Act>(p);
  }
#endif
  (void)kernel;
  return portable::run<Scalar, Act>(p);
}

}  // namespace detail::mlp

/// True when `kernel` can run here for Scalar: Auto and Portable always; Avx2 and Avx512 for
/// float on an x86 CPU (and OS) that supports AVX2+FMA, respectively AVX-512F+BW.
template <class Scalar>
bool mlp_kernel_available(MlpKernel kernel) noexcept {
  if (kernel == MlpKernel::Auto || kernel == MlpKernel::Portable) return true;
#if SGMCMC_MLP_X86
  if constexpr (std::is_same_v<Scalar, float>) {
    __builtin_cpu_init();
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (kernel == MlpKernel::Avx2) return avx2;
    if (kernel == MlpKernel::Avx512) {
      return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
    }
  }
#endif
  return false;
}

/// The best available kernel for Scalar (what Auto means).
template <class Scalar>
MlpKernel mlp_best_kernel() noexcept {
  if (mlp_kernel_available<Scalar>(MlpKernel::Avx512)) return MlpKernel::Avx512;
  if (mlp_kernel_available<Scalar>(MlpKernel::Avx2)) return MlpKernel::Avx2;
  return MlpKernel::Portable;
}

/// Scratch memory of the network's passes for batches of up to Capacity images, owned by the
/// caller (static storage or one allocation at start-up: about 0.37 MB + 1.4 kB · Capacity in
/// float, twice that in double). Its contents are scratch between calls. One workspace serves
/// one pass at a time: models sharing it must not run concurrently.
template <class Scalar, int Capacity>
struct MlpWorkspace {
  static_assert(Capacity >= 1, "sgmcmc: MlpWorkspace needs Capacity >= 1");
  static constexpr std::size_t kRows = std::size_t(Capacity);
  alignas(64) Scalar a[kRows * detail::mlp::kHiddenPad];
  alignas(64) Scalar h[kRows * detail::mlp::kHiddenPad];
  alignas(64) Scalar z[kRows * detail::mlp::kClassPad];
  alignas(64) Scalar gw1[std::size_t(detail::mlp::kInputs) * detail::mlp::kHiddenPad];
  alignas(64) Scalar w2[detail::mlp::kClasses * detail::mlp::kHiddenPad];
  alignas(64) Scalar gw2[detail::mlp::kClasses * detail::mlp::kHiddenPad];
  alignas(64) Scalar gb1[detail::mlp::kHiddenPad];
  std::uint64_t mask[kRows * detail::mlp::kWords];
  std::uint64_t order[kRows];
  alignas(64) std::uint8_t pixels[detail::mlp::kWords * kRows * 64];
  std::uint32_t index[kRows];
};

/// The 784-100-10 Bayesian neural network of the file comment, as a minibatch model.
///
/// Fill batch() (e.g. MinibatchSampler<Capacity>::next) before each step; gradient() then writes
/// ∇Ũ on those images. The potential for HMC-style tests is the full-data U (potential()).
/// Class invariant: valid() iff pixels and labels are not null, 1 <= rows < 2^32, every label is
/// in 0..9, and the kernel is available; an invalid model, an empty or over-full batch, or a
/// batch index >= rows() gives NaN results (which the samplers reject).
template <class Scalar, int Capacity, MlpActivation Act = MlpActivation::Sigmoid>
class BayesianMLP {
 public:
  static_assert(std::is_same_v<Scalar, float> || std::is_same_v<Scalar, double>,
                "sgmcmc: BayesianMLP's Scalar must be float or double");
  static_assert(Capacity >= 1, "sgmcmc: BayesianMLP needs Capacity >= 1");

  static constexpr int Inputs = detail::mlp::kInputs;      ///< 784 pixels
  static constexpr int Hidden = detail::mlp::kHidden;      ///< 100 hidden units
  static constexpr int Classes = detail::mlp::kClasses;    ///< 10 classes
  static constexpr int Dim = detail::mlp::kDim;            ///< 79 510 parameters
  static constexpr int OffsetW1 = detail::mlp::kOffsetW1;  ///< start of W1 in θ
  static constexpr int OffsetB1 = detail::mlp::kOffsetB1;  ///< start of b1 in θ
  static constexpr int OffsetW2 = detail::mlp::kOffsetW2;  ///< start of W2 in θ
  static constexpr int OffsetB2 = detail::mlp::kOffsetB2;  ///< start of b2 in θ
  /// Sizes n_k of the groups W1, b1, W2, b2.
  static constexpr std::array<int, 4> GroupSize = {OffsetB1, Hidden, Hidden* Classes, Classes};

  using Workspace = MlpWorkspace<Scalar, Capacity>;
  using Batch = IndexBatch<Capacity>;
  using Prior = MlpPrior<Scalar>;

  /// @param[in] pixels  rows images of 784 bytes each, image i at pixels + 784 i (row-major 28×28)
  /// @param[in] labels  rows classes in 0..9
  /// @param[in] rows    number of training images N
  /// @param[in] ws      the scratch memory every pass of this model uses
  /// @param[in] kernel  which compiled copy runs (Auto: the best available)
  BayesianMLP(const std::uint8_t* pixels, const std::uint8_t* labels, std::size_t rows,
              Workspace& ws, MlpKernel kernel = MlpKernel::Auto) noexcept
      : pixels_(pixels), labels_(labels), rows_(rows), ws_(&ws) {
    kernel_ = kernel == MlpKernel::Auto ? mlp_best_kernel<Scalar>() : kernel;
    valid_ = pixels != nullptr && labels != nullptr && rows >= 1 &&
             rows <= std::numeric_limits<std::uint32_t>::max() &&
             mlp_kernel_available<Scalar>(kernel_);
    for (std::size_t i = 0; valid_ && i < rows; ++i) valid_ = labels[i] < Classes;
  }

  /// See the class invariant.
  bool valid() const noexcept { return valid_; }
  /// Number of training images N.
  std::size_t rows() const noexcept { return rows_; }
  /// The kernel that runs (Auto resolved).
  MlpKernel kernel() const noexcept { return kernel_; }

  /// The batch the next gradient calls use.
  Batch& batch() noexcept { return batch_; }
  const Batch& batch() const noexcept { return batch_; }

  /// The prior precisions in use.
  const Prior& prior() const noexcept { return prior_; }
  /// Sets the prior precisions; refuses (returns false, changing nothing) unless all four are
  /// finite and > 0.
  bool set_prior(const Prior& prior) noexcept {
    for (Scalar v : {prior.w1, prior.b1, prior.w2, prior.b2}) {
      if (!(v > Scalar(0)) || !std::isfinite(v)) return false;
    }
    prior_ = prior;
    return true;
  }

  /// g = ∇Ũ(θ) on batch() (the sampler model concept).
  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad&& g) const noexcept {
    (void)batch_pass<false>(theta, g);
  }

  /// Writes g = ∇Ũ(θ) on batch() and returns Ũ(θ).
  template <class Theta, class Grad>
  Scalar batch_potential_and_gradient(const Theta& theta, Grad&& g) const noexcept {
    return batch_pass<true>(theta, g);
  }

  /// Ũ(θ) on batch(), without the gradient.
  template <class Theta>
  Scalar batch_potential(const Theta& theta) const noexcept {
    check_vector<Theta>();
    if (!batch_ok()) return nan();
    const detail::mlp::Pass<Scalar> p =
        pass(theta.data(), pixels_, labels_, batch_.index.data(), batch_.size);
    return Scalar(rows_) / Scalar(batch_.size) * detail::mlp::run_pass<Scalar, Act>(kernel_, p) +
           prior_potential(theta);
  }

  /// The full-data U(θ) (all rows() images, Capacity at a time).
  template <class Theta>
  Scalar potential(const Theta& theta) const noexcept {
    check_vector<Theta>();
    if (!valid_) return nan();
    double nll = 0;  // chunk sums added in double: N terms of float would lose digits
    for (std::size_t first = 0; first < rows_; first += Capacity) {
      const std::size_t n = rows_ - first < kCapacity ? rows_ - first : kCapacity;
      nll += double(detail::mlp::run_pass<Scalar, Act>(
          kernel_, pass(theta.data(), pixels_ + first * Inputs, labels_ + first, iota(n), n)));
    }
    return Scalar(nll) + prior_potential(theta);
  }

  /// Predictive probabilities p(c | x_i, θ) of images first .. first+count−1 of `pixels` (any
  /// image set, e.g. the test set) into probs[10 (i − first) + c]. Returns false, writing
  /// nothing, for a null pointer, count outside 1..Capacity or an invalid model.
  template <class Theta>
  bool predict(const Theta& theta, const std::uint8_t* pixels, std::size_t first, std::size_t count,
               Scalar* probs) const noexcept {
    check_vector<Theta>();
    if (!valid_ || pixels == nullptr || probs == nullptr || count < 1 || count > kCapacity) {
      return false;
    }
    detail::mlp::Pass<Scalar> p =
        pass(theta.data(), pixels + first * Inputs, nullptr, iota(count), count);
    p.probs = probs;
    (void)detail::mlp::run_pass<Scalar, Act>(kernel_, p);
    return true;
  }

  /// −log p(θ) = Σ_k λ_k ‖θ_k‖² / 2 (normalising constants dropped).
  template <class Theta>
  Scalar prior_potential(const Theta& theta) const noexcept {
    const std::array<Scalar, 4> ss = group_squared_norms(theta);
    return Scalar(0.5) *
           (prior_.w1 * ss[0] + prior_.b1 * ss[1] + prior_.w2 * ss[2] + prior_.b2 * ss[3]);
  }

  /// ‖θ_k‖² of the groups W1, b1, W2, b2 (for the Gibbs update of λ_k).
  template <class Theta>
  static std::array<Scalar, 4> group_squared_norms(const Theta& theta) noexcept {
    check_vector<Theta>();
    return {theta.template segment<OffsetB1 - OffsetW1>(OffsetW1).squaredNorm(),
            theta.template segment<OffsetW2 - OffsetB1>(OffsetB1).squaredNorm(),
            theta.template segment<OffsetB2 - OffsetW2>(OffsetW2).squaredNorm(),
            theta.template segment<Dim - OffsetB2>(OffsetB2).squaredNorm()};
  }

 private:
  static constexpr std::size_t kCapacity = std::size_t(Capacity);

  template <class V>
  static constexpr void check_vector() noexcept {
    static_assert(V::SizeAtCompileTime == Dim,
                  "sgmcmc: BayesianMLP's θ and gradient have compile-time size Dim (79510)");
    static_assert(std::is_same_v<typename V::Scalar, Scalar>,
                  "sgmcmc: BayesianMLP's θ and gradient hold the model's Scalar");
    static_assert(V::InnerStrideAtCompileTime == 1,
                  "sgmcmc: BayesianMLP's θ and gradient must be contiguous");
  }

  static Scalar nan() noexcept { return std::numeric_limits<Scalar>::quiet_NaN(); }

  // The gradient on batch() into g; with Potential, also Ũ(θ) (else the return value is 0).
  template <bool Potential, class Theta, class Grad>
  Scalar batch_pass(const Theta& theta, Grad& g) const noexcept {
    check_vector<Theta>();
    check_vector<std::remove_const_t<Grad>>();
    if (!batch_ok()) {
      for (int i = 0; i < Dim; ++i) g.data()[i] = nan();
      return nan();
    }
    detail::mlp::Pass<Scalar> p =
        pass(theta.data(), pixels_, labels_, batch_.index.data(), batch_.size);
    p.grad = g.data();
    p.scale = Scalar(rows_) / Scalar(batch_.size);
    const Scalar nll = detail::mlp::run_pass<Scalar, Act>(kernel_, p);
    return Potential ? p.scale * nll + prior_potential(theta) : Scalar(0);
  }

  bool batch_ok() const noexcept {
    if (!valid_ || batch_.size < 1 || batch_.size > kCapacity) return false;
    for (std::size_t k = 0; k < batch_.size; ++k) {
      if (batch_.index[k] >= rows_) return false;
    }
    return true;
  }

  // 0 .. n−1 in the workspace's index array (images taken in order from a base pointer).
  const std::uint32_t* iota(std::size_t n) const noexcept {
    for (std::size_t i = 0; i < n; ++i) ws_->index[i] = static_cast<std::uint32_t>(i);
    return ws_->index;
  }

  detail::mlp::Pass<Scalar> pass(const Scalar* theta, const std::uint8_t* pixels,
                                 const std::uint8_t* labels, const std::uint32_t* index,
                                 std::size_t n) const noexcept {
    detail::mlp::Pass<Scalar> p{};
    p.theta = theta;
    p.pixels = pixels;
    p.labels = labels;
    p.index = index;
    p.n = n;
    p.scale = Scalar(1);
    p.precision[0] = prior_.w1;
    p.precision[1] = prior_.b1;
    p.precision[2] = prior_.w2;
    p.precision[3] = prior_.b2;
    p.ws = {ws_->a,   ws_->h,    ws_->z,     ws_->gw1,    ws_->w2,  ws_->gw2,
            ws_->gb1, ws_->mask, ws_->order, ws_->pixels, kCapacity};
    return p;
  }

  const std::uint8_t* pixels_;
  const std::uint8_t* labels_;
  std::size_t rows_;
  Workspace* ws_;
  MlpKernel kernel_ = MlpKernel::Portable;
  bool valid_ = false;
  Prior prior_{};
  Batch batch_{};
};

}  // namespace sgmcmc
