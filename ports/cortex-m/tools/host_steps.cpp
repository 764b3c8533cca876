// SPDX-License-Identifier: MIT
// Host side of scripts/realtime-table: instructions per step under callgrind (client requests
// around each sampler's loop: deterministic on a loaded machine) and, outside valgrind,
// nanoseconds per step (steady_clock, median of 5 runs). Float, U = θᵀθ/2, host::Rng.
//   host_steps          prints "host <label> d=<d> ns=<ns per step>"
//   valgrind --tool=callgrind host_steps
//                       dumps one profile per sampler and d ("desc: Trigger: Client Request:
//                       <label> d=<d>", its "totals:" the instructions of kSteps steps)
#include <valgrind/callgrind.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "../tests/all_samplers.hpp"
#include "sgmcmc/host/rng.hpp"
// scripts/step-cost builds this file against older trees too; those without the real-time tick
// (run/realtime.hpp) get the default steps only.
#if __has_include("sgmcmc/run/realtime.hpp")
#include "sgmcmc/run/realtime.hpp"
#define SGMCMC_HOST_STEPS_TICKS 1
#else
#define SGMCMC_HOST_STEPS_TICKS 0
#endif

namespace {

constexpr int kSteps = 10000;
const fw::Isotropic g_model;
long g_failures = 0;

template <class S>
[[gnu::noinline]] void run_steps(const S& s, typename S::State& z, sgmcmc::host::Rng& rng, int n) {
  for (int i = 0; i < n; ++i) g_failures += s.step(z, g_model, rng) ? 0 : 1;
}

#if SGMCMC_HOST_STEPS_TICKS
template <class S>
[[gnu::noinline]] void run_ticks(const S& s, typename S::State& z, sgmcmc::NoiseQueue<S, 1>& q,
                                 sgmcmc::host::Rng& rng, int n) {
  for (int i = 0; i < n; ++i) {
    q.refill(rng);
    g_failures += q.tick(s, z, g_model) ? 0 : 1;
  }
}
#endif

/// One row: kSteps steps (or NoiseQueue ticks, with Tick) of s at d = S::dim, counted or timed.
template <bool Tick = false, class S>
void row(const char* label, const S& s) {
  constexpr bool tick = Tick;
  sgmcmc::host::Rng rng(2026);
  typename S::State z;
  if (!s.start(z, sgmcmc::Vector<float, S::dim>::Constant(0.5f), rng)) ++g_failures;
  auto run = [&](int n) {
#if SGMCMC_HOST_STEPS_TICKS
    if constexpr (Tick) {
      static sgmcmc::NoiseQueue<S, 1> queue;
      run_ticks(s, z, queue, rng, n);
      return;
    }
#endif
    run_steps(s, z, rng, n);
  };
  run(100);  // warm-up
  char name[160];
  std::snprintf(name, sizeof name, "%s%s d=%d", tick ? "tick: " : "", label, S::dim);
  if (RUNNING_ON_VALGRIND) {
    CALLGRIND_ZERO_STATS;
    run(kSteps);
    CALLGRIND_DUMP_STATS_AT(name);
    return;
  }
  double ns[5];
  for (double& t : ns) {
    const auto t0 = std::chrono::steady_clock::now();
    run(kSteps);
    const auto t1 = std::chrono::steady_clock::now();
    t = std::chrono::duration<double, std::nano>(t1 - t0).count() / kSteps;
  }
  std::sort(ns, ns + 5);
  std::printf("host %s ns=%.1f\n", name, ns[2]);
}

template <int D>
void rows() {
  using namespace sgmcmc;
  using fw::with_step;
  fw::for_each_sampler<D>([](const char* label, const auto& s) { row(label, s); });
#if SGMCMC_HOST_STEPS_TICKS
  row<true>("SGLD", with_step<SGLD<float, D>>(0.1f));
  row<true>("SGHMC", with_step<SGHMC<float, D>>(0.1f));
  row<true>("SGNHT", with_step<SGNHT<float, D>>(0.05f));
#endif
}

}  // namespace

int main() {
  rows<2>();
  rows<8>();
  rows<32>();
  if (g_failures != 0) std::printf("host_steps: %ld failed steps\n", g_failures);
  return g_failures == 0 ? 0 : 1;
}
