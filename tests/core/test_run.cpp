// The run driver: burn-in and thinning counts, sinks and early stops, failures leave the state
// as it was, schedules, hooks and progress through a clock.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "alloc_counter.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/run/driver.hpp"
#include "sgmcmc/sgmcmc.hpp"

using namespace sgmcmc;

namespace {

struct Quad {
  template <class T, class G>
  void gradient(const T& th, G& g) const noexcept {
    g = th;
  }
};

/// Finite gradients until step `bad_at`, then NaN (counted through a mutable call counter).
struct FailsAt {
  std::uint64_t bad_at;
  mutable std::uint64_t calls = 0;
  template <class T, class G>
  void gradient(const T& th, G& g) const noexcept {
    g = th;
    if (calls++ == bad_at) g[0] = std::numeric_limits<typename T::Scalar>::quiet_NaN();
  }
};

/// A clock the test moves by hand.
struct FakeClock {
  static std::uint64_t& now() {
    static std::uint64_t t = 0;
    return t;
  }
  static std::uint64_t ticks() noexcept { return now(); }
  static std::uint64_t ticks_per_second() noexcept { return 1000; }
};

/// A hook recording the sampler's step size after every step.
template <class S>
struct RecordStepSize {
  const S* s;
  double* seen;
  template <class St>
  void after_step(std::uint64_t t, const St&) noexcept {
    seen[t] = s->step_size();
  }
};

}  // namespace

TEST_CASE("burn-in, thinning and the kept states") {
  SGHMC<double, 3> s({0.1, 1.0, 1.0});
  auto z = s.start(Vector<double, 3>::Constant(0.5));
  host::Rng rng(1);
  RunPlan plan;
  plan.burn_in = 7;
  plan.samples = 5;
  plan.thin = 3;
  double kept[5][3];
  std::uint64_t indices[5];
  std::uint64_t n = 0;
  // A reference chain stepped by hand.
  auto zr = s.start(Vector<double, 3>::Constant(0.5));
  host::Rng rr(1);
  double expected[5][3];
  for (std::uint64_t t = 0; t < plan.total_steps(); ++t) {
    REQUIRE(s.step(zr, Quad{}, rr));
    if (t >= 7 && (t - 7 + 1) % 3 == 0) {
      const auto k = (t - 7 + 1) / 3 - 1;
      for (int i = 0; i < 3; ++i) expected[k][i] = zr.position()[i];
    }
  }
  const RunResult r = run(s, z, Quad{}, rng, plan, [&](const auto& st, std::uint64_t k) {
    indices[n] = k;
    for (int i = 0; i < 3; ++i) kept[n][i] = st.position()[i];
    ++n;
  });
  CHECK(r.status);
  CHECK(r.steps == 22);
  CHECK(r.kept == 5);
  CHECK(n == 5);
  CHECK_FALSE(r.stopped);
  for (std::uint64_t k = 0; k < 5; ++k) {
    CHECK(indices[k] == k);
    for (int i = 0; i < 3; ++i) CHECK(kept[k][i] == expected[k][i]);
  }
  CHECK(z == zr);
}

TEST_CASE("a sink or a hook stops the run early; a full trace stops it") {
  SGLD<double, 2> s({0.05, {}});
  auto z = s.start(Vector<double, 2>::Zero());
  host::Rng rng(2);
  const RunResult r =
      run(s, z, Quad{}, rng, {0, 100, 1}, [](const auto&, std::uint64_t k) { return k < 9; });
  CHECK(r.status);
  CHECK(r.stopped);
  CHECK(r.kept == 10);
  CHECK(r.steps == 10);

  OwnedPositionTrace<double, 2, 4> trace;
  const RunResult t = run(s, z, Quad{}, rng, {3, 50, 2}, trace);
  CHECK(t.stopped);
  CHECK(trace.size() == 4);
  CHECK(t.kept == 4);
  CHECK(t.steps == 3 + 4 * 2);
  CHECK(trace[3] == z.position());
}

TEST_CASE("a failing step ends the run with its status and the state before it") {
  SGHMC<double, 4> s({0.1, 1.0, 1.0});
  auto z = s.start(Vector<double, 4>::Constant(1.0));
  host::Rng rng(3);
  FailsAt model{6};
  decltype(z) before;
  const RunResult r = run(s, z, model, rng, {2, 10, 1}, [&](const auto& st, std::uint64_t) {
    before = st;  // the last kept state is the one before the failing step
  });
  CHECK(r.status == StatusCode::NonFiniteGradient);
  CHECK(r.failed_at == 6);
  CHECK(r.steps == 6);
  CHECK(z == before);
  CHECK(run(s, z, Quad{}, rng, {0, 1, 0}, DiscardSink{}).status == StatusCode::InvalidParameter);
}

TEST_CASE("a schedule sets h before each step; an invalid value stops the run") {
  SGLD<double, 1> s({0.5, {}});
  auto z = s.start(Vector<double, 1>::Zero());
  host::Rng rng(4);
  double seen[6];
  RecordStepSize<SGLD<double, 1>> hooks{&s, seen};
  auto schedule = [](std::uint64_t t) { return 1.0 / double(t + 1); };
  const RunResult r = run_scheduled(s, schedule, z, Quad{}, rng, {0, 6, 1}, DiscardSink{}, hooks);
  CHECK(r.status);
  for (int t = 0; t < 6; ++t) CHECK(seen[t] == 1.0 / (t + 1));
  // Negative: a schedule that leaves the valid range.
  auto bad = [](std::uint64_t t) { return t < 3 ? 0.1 : -1.0; };
  const RunResult b = run_scheduled(s, bad, z, Quad{}, rng, {0, 6, 1}, DiscardSink{});
  CHECK(b.status == StatusCode::InvalidStepSize);
  CHECK(b.steps == 3);
}

TEST_CASE("progress reports through the clock at the requested rate, and at the end") {
  std::uint64_t reports = 0, last_done = 0;
  auto report = [&](std::uint64_t done, std::uint64_t total, double) {
    ++reports;
    last_done = done;
    CHECK(total == 1000);
  };
  FakeClock::now() = 0;
  Progress<FakeClock, decltype(report)> progress(1000, report, 10.0);  // every 100 ticks
  SGLD<double, 1> s({0.1, {}});
  auto z = s.start(Vector<double, 1>::Zero());
  host::Rng rng(5);
  struct Tick {
    void before_step(std::uint64_t) noexcept { ++FakeClock::now(); }  // one tick per step
  } tick;
  auto hooks = both_hooks(tick, progress);
  const RunResult r = run(s, z, Quad{}, rng, {0, 1000, 1}, DiscardSink{}, hooks);
  CHECK(r.status);
  // The clock is read every 64 steps and a report is due every 100 ticks: about 1000 / 128 + the
  // last one; never more than one per 64 steps.
  CHECK(reports >= 5);
  CHECK(reports <= 1000 / 64 + 1);
  CHECK(last_done == 1000);
}

TEST_CASE("a run allocates nothing") {
  SGNHT<float, 8> s({0.05f, 1.0f});
  auto z = s.start(Vector<float, 8>::Zero());
  host::Rng rng(6);
  Welford<float, 8> moments;
  BatchMeansESS<float, 8> ess;
  StreamingSink<Welford<float, 8>, BatchMeansESS<float, 8>> sink(moments, ess);
  sgmcmc_test::AllocationScope scope;
  const RunResult r = run(s, z, Quad{}, rng, {100, 2000, 2}, sink);
  CHECK(scope.count() == 0);
  CHECK(r.status);
  CHECK(moments.count() == 2000);
  CHECK(ess.count() == 2000);
}
