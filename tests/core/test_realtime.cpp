// The real-time split: a tick with refilled noise equals a step with the RNG that drew it; a tick
// without noise is refused and changes nothing; the queue's slots and order. And where a step's
// normals come from: read in place from host::Rng's buffer, the same chain as copied out of it.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "alloc_counter.hpp"
#include "fill_only.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/run/realtime.hpp"
#include "sgmcmc/sgmcmc.hpp"

using namespace sgmcmc;

namespace {
struct Quad {
  template <class T, class G>
  void gradient(const T& th, G& g) const noexcept {
    g = th;
  }
  template <class Th>
  typename Th::Scalar potential(const Th& th) const noexcept {
    return th.squaredNorm() / typename Th::Scalar(2);
  }
};

template <class S>
void ticks_equal_steps(const S& s) {
  using Scalar = typename S::Scalar;
  auto z = s.start(Vector<Scalar, S::dim>::Constant(Scalar(0.4)));
  auto w = z;
  host::Rng a(3), b(3);
  NoiseQueue<S, 3> queue;
  for (int t = 0; t < 200; ++t) {
    if (queue.ready() == 0) CHECK(queue.refill_all(b) == 3);
    REQUIRE(s.step(z, Quad{}, a));
    REQUIRE(queue.tick(s, w, Quad{}));
  }
  CHECK(z == w);
}

/// host::Rng whose in-place draw hands out the right normals negated (its fill_normal is
/// host::Rng's): a step that reads its normals in place makes a different chain with it, which
/// shows the in-place path is the one taken (the negative control of the test below).
struct NegatedInPlace : sgmcmc_test::FillOnly {
  static constexpr std::size_t take_limit = host::Rng::take_limit;
  template <class S>
  const S* take_normals(std::size_t n) noexcept {
    const S* p = r.take_normals<S>(n);
    if (p == nullptr) return nullptr;
    S* out = nullptr;
    if constexpr (std::is_same_v<S, float>) {
      out = bf;
    } else {
      out = bd;
    }
    for (std::size_t i = 0; i < n; ++i) out[i] = -p[i];
    return out;
  }
  float bf[take_limit];
  double bd[take_limit];
};
static_assert(HasTakeNormals<NegatedInPlace, float>::value, "the control draws in place");

/// `steps` steps from one start with RNGs a and b: whether the two chains end
/// bit for bit equal.
template <class S, class RngA, class RngB>
bool same_chain(const S& s, RngA& a, RngB& b, int steps) {
  using Scalar = typename S::Scalar;
  auto z = s.start(Vector<Scalar, S::dim>::Constant(Scalar(0.3)));
  auto w = z;
  for (int t = 0; t < steps; ++t) {
    REQUIRE(s.step(z, Quad{}, a));
    REQUIRE(s.step(w, Quad{}, b));
  }
  return z == w;
}

/// In place (host::Rng) against copied (FillOnly) against wrongly in place
/// (NegatedInPlace).
template <class S>
void in_place_is_copied(const S& s) {
  host::Rng a(7);
  sgmcmc_test::FillOnly b{host::Rng(7)};
  CHECK(same_chain(s, a, b, 150));
  host::Rng c(7);
  auto d = std::make_unique<NegatedInPlace>(NegatedInPlace{{host::Rng(7)}, {}, {}});
  CHECK_FALSE(same_chain(s, c, *d, 150));
}
}  // namespace

TEST_CASE("a tick with refilled noise is the step the RNG would have made") {
  ticks_equal_steps(SGLD<float, 5>({0.05f, {}}));
  ticks_equal_steps(SGHMC<double, 8>({0.1, 1.0, 1.0}));
  ticks_equal_steps(SGNHT<float, 4>({0.05f, 1.0f}));
  ticks_equal_steps(HMC<double, 3>({0.2, 5, 1.0, true}));
}

TEST_CASE(
    "normals read in place from host::Rng give the chain of normals "
    "copied out of it") {
  // d = 300: three chunks of the coordinate loop per pass, the last a partial
  // one, and the generator's buffer refilled in the middle of a step.
  in_place_is_copied(SGLD<float, 37>({0.05f, {}}));
  in_place_is_copied(SGLD<double, 300>({0.05, {}}));
  in_place_is_copied(SGHMC<float, 300>({0.1f, 1.0f, 1.0f}));
  in_place_is_copied(SGHMC<double, 8>({0.1, 1.0, 1.0}));
  in_place_is_copied(SGNHT<float, 300>({0.05f, 1.0f}));
  in_place_is_copied(SGNHT<double, 37>({0.05, 1.0}));
}

TEST_CASE("no noise, no tick: the state is untouched and nothing is consumed") {
  SGHMC<float, 4> s;
  auto z = s.start(Vector<float, 4>::Constant(1.0f));
  const auto before = z;
  NoiseQueue<SGHMC<float, 4>> queue;
  CHECK(queue.tick(s, z, Quad{}) == StatusCode::NoiseNotReady);
  CHECK(z == before);
  host::Rng rng(1);
  CHECK(queue.refill(rng));
  CHECK(queue.refill(rng));
  CHECK_FALSE(queue.refill(rng));  // two slots: full
  CHECK(queue.ready() == 2);
  CHECK(queue.tick(s, z, Quad{}));
  CHECK(queue.ready() == 1);
  CHECK_FALSE(z == before);
}

TEST_CASE("a tick allocates nothing") {
  SGHMC<float, 16> s;
  auto z = s.start(Vector<float, 16>::Zero());
  NoiseQueue<SGHMC<float, 16>, 4> queue;
  host::Rng rng(2);
  queue.refill_all(rng);
  sgmcmc_test::AllocationScope scope;
  for (int i = 0; i < 4; ++i) REQUIRE(queue.tick(s, z, Quad{}));
  CHECK(scope.count() == 0);
}
