// SPDX-License-Identifier: MIT
// Issue 10 at d = 100 000: a `static` SGHMC state steps with zero heap and a stack use that does
// not grow with d (painted-stack high-water mark, and a 64 KiB thread), a failed step leaves the
// whole value byte-identical, and a StateMap over a static array steps bit for bit as a State.
#define EIGEN_RUNTIME_NO_MALLOC  // before any Eigen header: Eigen asserts on a heap allocation
#include <doctest/doctest.h>
#include <limits.h>  // PTHREAD_STACK_MIN
#include <pthread.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "alloc_counter.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/sgmcmc.hpp"
#include "targets.hpp"
#include "test_models.hpp"

namespace {

using namespace sgmcmc;

constexpr int kBig = 100000;
constexpr int kSmall = 1000;

/// U = θᵀθ/2 with ∇U replaced by NaN at one coordinate (a model failing mid-vector).
template <class Scalar>
struct NanAtOne {
  Index where = 0;
  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& grad) const noexcept {
    grad = theta;
    grad[where] = std::numeric_limits<Scalar>::quiet_NaN();
  }
  template <class Theta>
  Scalar potential(const Theta& theta) const noexcept {
    return theta.squaredNorm() / Scalar(2);
  }
};

/// U = θᵀθ/2 that also allocates on every gradient: the positive control of the heap counter.
template <class Scalar>
struct AllocatingNormal {
  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& grad) const {
    std::vector<Scalar> tmp(theta.data(), theta.data() + 8);
    grad = theta;
    grad[0] = tmp[0];
  }
};

// ------------------------------------------------------------------ stack high-water marks

constexpr std::size_t kPaintedStack = std::size_t(1) << 20;
constexpr unsigned char kPaint = 0xA5;
alignas(4096) unsigned char painted_stack[kPaintedStack];

template <class F>
void* call_job(void* arg) {
  (*static_cast<F*>(arg))();
  return nullptr;
}

/// Runs f on a thread whose 1 MiB stack was painted with kPaint and returns the bytes of it that
/// were written (top of the stack down to the lowest changed byte): f's stack use plus the fixed
/// cost of the thread itself (its descriptor and TLS live at the top of that memory). 0 if the
/// thread could not be run.
template <class F>
std::size_t stack_high_water(F& f) {
  std::memset(painted_stack, kPaint, sizeof painted_stack);
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return 0;
  pthread_t thread;
  const bool ok = pthread_attr_setstack(&attr, painted_stack, sizeof painted_stack) == 0 &&
                  pthread_create(&thread, &attr, &call_job<F>, &f) == 0 &&
                  pthread_join(thread, nullptr) == 0;
  pthread_attr_destroy(&attr);
  if (!ok) return 0;
  std::size_t low = 0;
  while (low < sizeof painted_stack && painted_stack[low] == kPaint) ++low;
  return sizeof painted_stack - low;
}

/// Runs f on a thread created with a stack of `bytes` (glibc maps it with a guard page below:
/// overflowing it is a crash, not a silent overwrite). True if the thread ran to the end.
template <class F>
bool run_on_small_stack(F& f, std::size_t bytes) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return false;
  pthread_t thread;
  const bool ok = pthread_attr_setstacksize(&attr, bytes) == 0 &&
                  pthread_create(&thread, &attr, &call_job<F>, &f) == 0 &&
                  pthread_join(thread, nullptr) == 0;
  pthread_attr_destroy(&attr);
  return ok;
}

/// The states of the stack test, one per size, in static storage (2 MB at d = 100 000).
template <int D>
typename SGHMC<float, D>::State& static_state() {
  static typename SGHMC<float, D>::State z;
  return z;
}

/// One job: `steps` SGHMC steps of the static state of size D; `copy_to_stack` also copies the
/// position into a D-sized array on the stack (the negative control: a step that is not
/// allocation-free in stack terms).
template <int D, bool CopyToStack = false>
struct StepJob {
  const SGHMC<float, D>* sampler;
  host::Rng* rng;
  int steps = 4;
  bool ok = false;
  float sink = 0.0f;
  void operator()() {
    auto& z = static_state<D>();
    ok = true;
    for (int i = 0; i < steps; ++i)
      ok = ok && static_cast<bool>(sampler->step(z, test::StandardNormal<float, D>{}, *rng));
    if constexpr (CopyToStack) {
      volatile float copy[D];
      const auto p = z.position();
      for (int i = 0; i < D; ++i) copy[i] = p[i];
      for (int i = 0; i < D; i += 97) sink += copy[i];
    }
  }
};

/// A job that does nothing: the fixed cost of a thread on the painted stack.
struct EmptyJob {
  void operator()() {}
};

template <int D>
SGHMC<float, D> make_sghmc() {
  typename SGHMC<float, D>::Params p;
  p.step_size = 0.05f;
  p.friction = 1.0f;
  return SGHMC<float, D>(p);
}

/// The byte at `offset` of a state's current copy (for the negative controls' bit flips).
template <class St>
unsigned char* current_byte(St& z, std::size_t offset) {
  return const_cast<unsigned char*>(sgmcmc_test::StoredValue<St>::current(z)) + offset;
}

}  // namespace

TEST_CASE("SGHMC<float, 100000>: a static State steps with zero heap") {
  using S = SGHMC<float, kBig>;
  const S sampler = make_sghmc<kBig>();
  REQUIRE(sampler.status());
  static S::State z;  // about 2 MB: static storage, never the stack
  host::Rng rng(1001);
  REQUIRE(sampler.start(z, Vector<float, kBig>::Constant(0.5f), rng));
  const test::StandardNormal<float, kBig> model;
  long allocations = -1;
  bool ok = true;
  {
    sgmcmc_test::AllocationScope scope;
    Eigen::internal::set_is_malloc_allowed(false);
    for (int i = 0; i < 20; ++i) ok = ok && static_cast<bool>(sampler.step(z, model, rng));
    Eigen::internal::set_is_malloc_allowed(true);
    allocations = scope.count();
  }
  REQUIRE(ok);
  CHECK(allocations == 0);
  CHECK(z.all_finite());
  // The chain moved (20 steps of N(0, 2h(C)) noise on every coordinate).
  CHECK(z.position()[kBig - 1] != 0.5f);

  // Positive control: the same loop with a model that allocates is counted.
  long control = 0;
  {
    sgmcmc_test::AllocationScope scope;
    for (int i = 0; i < 20; ++i)
      ok = ok && static_cast<bool>(sampler.step(z, AllocatingNormal<float>{}, rng));
    control = scope.count();
  }
  REQUIRE(ok);
  CHECK(control >= 20);
}

TEST_CASE("SGHMC's stack use per step does not grow with d (1 000 vs 100 000)") {
  const auto small = make_sghmc<kSmall>();
  const auto big = make_sghmc<kBig>();
  host::Rng rng_small(2001);
  host::Rng rng_big(2002);
  REQUIRE(small.start(static_state<kSmall>(), Vector<float, kSmall>::Constant(0.3f)));
  REQUIRE(big.start(static_state<kBig>(), Vector<float, kBig>::Constant(0.3f)));
  // One step on the main thread first: anything initialised on first use is not counted below.
  REQUIRE(small.step(static_state<kSmall>(), test::StandardNormal<float, kSmall>{}, rng_small));
  REQUIRE(big.step(static_state<kBig>(), test::StandardNormal<float, kBig>{}, rng_big));

#if defined(SGMCMC_TEST_SANITIZER_ALLOCATOR)
  // A sanitizer build measures its own instrumentation here, not the step: AddressSanitizer puts
  // frames on a heap "fake stack" (detect_stack_use_after_return: the negative control's copy
  // never touches the painted stack) and pads the rest with red zones. The release suite runs
  // the measurement; only the small-stack run below is kept.
  MESSAGE("sanitizer build: painted-stack measurement skipped");
#else
  EmptyJob empty;
  StepJob<kSmall> job_small{&small, &rng_small};
  StepJob<kBig> job_big{&big, &rng_big};
  StepJob<kSmall, true> job_copy{&small, &rng_small};
  const std::size_t base = stack_high_water(empty);
  const std::size_t used_small = stack_high_water(job_small);
  const std::size_t used_big = stack_high_water(job_big);
  const std::size_t used_copy = stack_high_water(job_copy);
  REQUIRE(base > 0);
  REQUIRE(job_small.ok);
  REQUIRE(job_big.ok);
  REQUIRE(job_copy.ok);
  MESSAGE("painted-stack high-water marks (bytes, thread overhead included): empty thread "
          << base << ", d = 1000: " << used_small << ", d = 100000: " << used_big
          << ", d = 1000 with a stack copy of θ: " << used_copy);
  // Bound: 256 bytes, under the 4 000 bytes that one d = 1000 float vector on the stack costs and
  // 1/1500 of what one d = 100 000 vector would (the step's own buffers, one chunk of 128 normals
  // per noisy update, are the same at both sizes).
  const std::size_t diff = used_big > used_small ? used_big - used_small : used_small - used_big;
  CHECK(diff <= 256);
  CHECK(used_big < 64 * 1024);
  // Negative control: the measurement sees one d = 1000 vector put on the stack (4 000 bytes above
  // the empty thread; the copy's frame replaces the step's frames, which have returned).
  CHECK(used_copy >= base + 4000);
  CHECK(used_small < base + 4000);
#endif

  // And the d = 100 000 step runs on a thread with a 64 KiB stack, or the platform's minimum
  // where that is larger (128 KiB on AArch64 glibc); one 400 000-byte vector would hit the guard
  // page.
  StepJob<kBig> on_small{&big, &rng_big};
  const std::size_t small_stack =
      std::max<std::size_t>(64 * 1024, static_cast<std::size_t>(PTHREAD_STACK_MIN));
  CHECK(run_on_small_stack(on_small, small_stack));
  CHECK(on_small.ok);
}

TEST_CASE("a failed step at d = 100000 leaves the whole value byte-identical") {
  using S = SGHMC<float, kBig>;
  using St = S::State;
  using Bytes = sgmcmc_test::StoredValue<St>;
  const S sampler = make_sghmc<kBig>();
  static St z;
  static unsigned char saved[Bytes::bytes];
  host::Rng rng(3001);
  REQUIRE(sampler.start(z, Vector<float, kBig>::Constant(0.25f), rng));
  const test::StandardNormal<float, kBig> model;
  for (int i = 0; i < 3; ++i) REQUIRE(sampler.step(z, model, rng));  // both copies in use

  SUBCASE("the model returns NaN at one coordinate") {
    for (Index where : {Index(0), Index(kBig / 2), Index(kBig - 1)}) {
      CAPTURE(where);
      Bytes::save(z, saved);
      static St before;
      before = z;
      const Status st = sampler.step(z, NanAtOne<float>{where}, rng);
      CHECK(st == StatusCode::NonFiniteGradient);
      CHECK(Bytes::same(z, saved));
      CHECK(z == before);
    }
  }
  SUBCASE("the state holds one Inf (in the momentum: the model's gradient stays finite)") {
    z.momentum()[kBig - 7] = std::numeric_limits<float>::infinity();
    Bytes::save(z, saved);
    const Status st = sampler.step(z, model, rng);
    CHECK(st == StatusCode::NonFiniteState);
    CHECK(Bytes::same(z, saved));
  }
  SUBCASE("negative control: the comparison sees one flipped bit, in z or in the header") {
    Bytes::save(z, saved);
    CHECK(Bytes::same(z, saved));
    unsigned char* b = current_byte(z, std::size_t(kBig - 1) * sizeof(float));  // θ's last value
    *b ^= 1U;
    CHECK_FALSE(Bytes::same(z, saved));
    *b ^= 1U;
    CHECK(Bytes::same(z, saved));
    // The other copy's index (the header): a step that commits flips it.
    REQUIRE(sampler.step(z, model, rng));
    CHECK_FALSE(Bytes::same(z, saved));
  }
}

TEST_CASE("HMC<float, 100000>: a failed step keeps the bookkeeping (z.extra()) too") {
  using S = HMC<float, kBig>;
  using St = S::State;
  using Bytes = sgmcmc_test::StoredValue<St>;
  S::Params p;
  p.step_size = 0.01f;
  p.steps = 3;
  const S sampler(p);
  static St z;
  static St before;
  static unsigned char saved[Bytes::bytes];
  host::Rng rng(3101);
  const test::StandardNormal<float, kBig> model;
  REQUIRE(sampler.start(z, Vector<float, kBig>::Constant(0.1f)));
  REQUIRE(sampler.step(z, model, rng));
  const HMCInfo<float> info = z.extra();
  CHECK(info.energy_error != 0.0f);  // the last transition's record is not the default
  Bytes::save(z, saved);
  before = z;
  CHECK(sampler.step(z, NanAtOne<float>{kBig / 3}, rng) == StatusCode::NonFiniteGradient);
  CHECK(Bytes::same(z, saved));
  CHECK(z == before);
  // Field by field (HMCInfo has padding bytes, whose copies are indeterminate: no memcmp of
  // copies), floats bit for bit.
  const HMCInfo<float> after = z.extra();
  CHECK(after.accepted == info.accepted);
  CHECK(after.divergent == info.divergent);
  CHECK(std::memcmp(&after.energy_error, &info.energy_error, sizeof(float)) == 0);
  CHECK(std::memcmp(&after.accept_prob, &info.accept_prob, sizeof(float)) == 0);
  // Negative control: one bit of the bookkeeping is seen by both comparisons.
  HMCInfo<float> flipped = info;
  flipped.accepted = !flipped.accepted;
  z.set_extra(flipped);
  CHECK_FALSE(Bytes::same(z, saved));
  CHECK_FALSE(z == before);
}

TEST_CASE("a StateMap over a static aligned array steps bit for bit as a State (d = 100000)") {
  using S = SGHMC<float, kBig>;
  const S sampler = make_sghmc<kBig>();
  alignas(kAlignBytes) static float memory[S::StateMap::storage_size];
  alignas(kAlignBytes) static float memory2[S::StateMap::storage_size];
  static S::State owned;
  S::StateMap mapped(memory);
  S::StateMap other(memory2);
  REQUIRE(mapped.valid());
  CHECK_FALSE(S::StateMap(memory + 1).valid());  // misaligned
  CHECK_FALSE(S::StateMap(nullptr).valid());
  const test::StandardNormal<float, kBig> model;
  auto run = [&](auto& z, std::uint64_t seed) {
    host::Rng rng(seed);
    bool ok = static_cast<bool>(sampler.start(z, Vector<float, kBig>::Constant(-0.4f), rng));
    for (int i = 0; i < 25; ++i) ok = ok && static_cast<bool>(sampler.step(z, model, rng));
    return ok;
  };
  REQUIRE(run(owned, 4001));
  REQUIRE(run(mapped, 4001));
  REQUIRE(run(other, 4002));
  CHECK(owned == mapped);
  CHECK(std::memcmp(owned.position().data(), mapped.position().data(), sizeof(float) * kBig) == 0);
  CHECK(std::memcmp(owned.momentum().data(), mapped.momentum().data(), sizeof(float) * kBig) == 0);
  // The whole arrays agree too (index, both copies, scratch): the same operations on the same
  // layout.
  CHECK(std::memcmp(owned.data(), memory, S::StateMap::Shape::storage_bytes) == 0);
  // Negative controls: another seed differs; one flipped bit in the mapped state is seen.
  CHECK_FALSE(owned == other);
  unsigned char* b = current_byte(mapped, std::size_t(kBig / 2) * sizeof(float));
  *b ^= 1U;
  CHECK_FALSE(owned == mapped);
  *b ^= 1U;
  CHECK(owned == mapped);
}
