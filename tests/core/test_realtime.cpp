// The real-time split: a tick with refilled noise equals a step with the RNG that drew it; a tick
// without noise is refused and changes nothing; the queue's slots and order.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "alloc_counter.hpp"
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
}  // namespace

TEST_CASE("a tick with refilled noise is the step the RNG would have made") {
  ticks_equal_steps(SGLD<float, 5>({0.05f, {}}));
  ticks_equal_steps(SGHMC<double, 8>({0.1, 1.0, 1.0}));
  ticks_equal_steps(SGNHT<float, 4>({0.05f, 1.0f}));
  ticks_equal_steps(HMC<double, 3>({0.2, 5, 1.0, true}));
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
