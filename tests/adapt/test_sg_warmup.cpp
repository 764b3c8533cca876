// SPDX-License-Identifier: MIT
// The SG step-size warm-up (include/sgmcmc/adapt/sg_warmup.hpp): its doubling windows, its
// arithmetic (each window's h by adapt_sg_step, the frozen h the length-weighted geometric mean of
// the later half), refusals; and on SGLD over a standard Gaussian, where the excess temperature
// at step h is known exactly, that four chains pooled reach the h of the tolerance and that the
// frozen h samples at that temperature (negative control: the unadapted starting h).
#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "sgmcmc/adapt/sg_step_size.hpp"
#include "sgmcmc/adapt/sg_warmup.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/samplers/sgld.hpp"
#include "targets.hpp"

using sgmcmc::SGStepSizeParams;
using sgmcmc::SGStepSizeWarmup;
using sgmcmc::Vector;

namespace {

std::vector<std::size_t> lengths(const SGStepSizeWarmup<double>& w) {
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < w.window_count(); ++k) out.push_back(w.window_length(k));
  return out;
}

constexpr int D = 4;
using Vec = Vector<double, D>;

}  // namespace

TEST_CASE("SG warm-up: doubling windows, the last one stretched") {
  CHECK(lengths(SGStepSizeWarmup<double>(4000, 250, 0.5, 2.0)) ==
        std::vector<std::size_t>{250, 500, 1000, 2250});
  CHECK(lengths(SGStepSizeWarmup<double>(1000, 300, 0.5, 2.0)) ==
        std::vector<std::size_t>{300, 700});
  CHECK(lengths(SGStepSizeWarmup<double>(250, 250, 0.5, 2.0)) == std::vector<std::size_t>{250});
  CHECK(lengths(SGStepSizeWarmup<double>(7, 1, 0.5, 1.0)) == std::vector<std::size_t>{1, 2, 4});
  // Every window sums to the warm-up; none is shorter than the first.
  for (std::size_t warmup : {1u, 17u, 999u, 4000u, 123457u}) {
    for (std::size_t first : {1u, 5u, 250u}) {
      if (first > warmup) continue;
      const SGStepSizeWarmup<double> w(warmup, first, 0.1, 2.0);
      REQUIRE(w.valid());
      std::size_t sum = 0;
      for (std::size_t k = 0; k < w.window_count(); ++k) {
        CHECK(w.window_length(k) >= first);
        sum += w.window_length(k);
      }
      CHECK(sum == warmup);
    }
  }
}

TEST_CASE("SG warm-up: each window's h, the frozen geometric mean, refusals") {
  SGStepSizeParams<double> p;
  p.tolerance = 0.1;
  SGStepSizeWarmup<double> w(4000, 250, 0.5, 2.0, p);
  REQUIRE(w.valid());
  CHECK(w.window() == 0);
  CHECK(w.window_length() == 250);
  CHECK(w.step_size() == 0.5);
  // T̄ = 1.4: excess 0.4 = 4ε, h halves; then the clamp (×1/4); then no excess (×2); then
  // excess ε/4 (×2).
  CHECK(w.end_window(1.4) == doctest::Approx(0.25));
  CHECK(w.end_window(50.0) == doctest::Approx(0.0625));
  CHECK(w.window_length() == 1000);
  const double after2 = w.end_window(0.98);  // window 2 of 4: in the later half
  CHECK(after2 == doctest::Approx(0.125));
  CHECK_FALSE(w.done());
  const double after3 = 0.125 * 2.0;
  const double frozen = w.end_window(1.025);
  CHECK(w.done());
  CHECK(frozen ==
        doctest::Approx(std::exp((1000 * std::log(after2) + 2250 * std::log(after3)) / 3250.0)));
  CHECK(w.step_size() == frozen);
  CHECK(w.window_length() == 0);
  CHECK(w.end_window(100.0) == frozen);  // done: nothing changes
  // average = false keeps the last window's h.
  SGStepSizeWarmup<double> last(4000, 250, 0.5, 2.0, p, false);
  for (double t : {1.4, 50.0, 0.98}) static_cast<void>(last.end_window(t));
  CHECK(last.end_window(1.025) == doctest::Approx(0.25));
  // Refusals: done at once, h0 kept.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const SGStepSizeWarmup<double>& bad :
       {SGStepSizeWarmup<double>(100, 0, 0.5, 2.0), SGStepSizeWarmup<double>(100, 200, 0.5, 2.0),
        SGStepSizeWarmup<double>(100, 10, 0.0, 2.0), SGStepSizeWarmup<double>(100, 10, nan, 2.0),
        SGStepSizeWarmup<double>(100, 10, 0.5, 0.0)}) {
    CHECK_FALSE(bad.valid());
    CHECK(bad.done());
    CHECK(bad.window_count() == 0);
  }
  SGStepSizeWarmup<double> bad(100, 0, 0.5, 2.0);
  CHECK(bad.end_window(2.0) == 0.5);
}

TEST_CASE("SG warm-up: the validated average keeps no untested growth") {
  // ε = 0.1, order 2, windows 250, 500, 1000 (the later half: windows 1 and 2). Window 0 shrinks
  // h to 0.25; window 1 (run at 0.25) is cool and grows it to 0.5; window 2 (run at 0.5) is hot
  // and shrinks it to 0.25. The plain average counts 0.5 for window 1 (an h nobody ran), the
  // validated one counts the 0.25 window 1 ran with (the negative control is the plain one).
  SGStepSizeParams<double> p;
  p.tolerance = 0.1;
  SGStepSizeWarmup<double> plain(1750, 250, 0.5, 2.0, p);
  SGStepSizeWarmup<double> checked(1750, 250, 0.5, 2.0, p, true, true);
  for (SGStepSizeWarmup<double>* w : {&plain, &checked}) {
    REQUIRE(w->window_count() == 3);
    CHECK(w->end_window(1.4) == doctest::Approx(0.25));
    CHECK(w->end_window(0.99) == doctest::Approx(0.5));
  }
  CHECK(plain.end_window(1.4) ==
        doctest::Approx(std::exp((500 * std::log(0.5) + 1000 * std::log(0.25)) / 1500.0)));
  CHECK(checked.end_window(1.4) == doctest::Approx(0.25));
  // A shrinking window counts its new h in both.
  SGStepSizeWarmup<double> shrink(1750, 250, 0.5, 2.0, p, true, true);
  for (double t : {1.4, 1.4}) static_cast<void>(shrink.end_window(t));
  CHECK(shrink.end_window(1.4) ==
        doctest::Approx(std::exp((500 * std::log(0.125) + 1000 * std::log(0.0625)) / 1500.0)));
}

TEST_CASE("SG warm-up: SGLD on a standard Gaussian reaches the tolerance's step size") {
  // SGLD with the exact gradient on N(0, I): θ' = (1 − h)θ + √(2h) ξ has stationary variance
  // 1/(1 − h/2), which is also the configurational temperature E[θ ∂U] there, so the excess is
  // h/(2 − h) and ε = 0.1 is reached at h* = 2ε/(1 + ε) = 0.1818. Four chains (d = 4) pooled over
  // the doubling windows of a 4000-step warm-up from h0 = 0.5. Noise: the later windows hold
  // 4 × 4 × 3250 terms θ_j² (variance 2, IACT ≈ (1 + ρ²)/(1 − ρ²) ≈ 5 at ρ = 1 − h), so the
  // pooled excess has sd ≈ 0.015 against 0.1, and h (order 1) about 15 %. Pass: |h/h* − 1| < 0.4,
  // and over 4 × 20 000 steps at the frozen h, |T̄ − 1 − ε| < 0.04 (T̄'s sd ≈ 0.008). Negative
  // control: the unadapted h0 = 0.5 (excess 0.33) fails both.
  constexpr int kChains = 4;
  SGStepSizeParams<double> p;
  p.tolerance = 0.1;
  const double h_star = 2.0 * p.tolerance / (1.0 + p.tolerance);
  using Target = sgmcmc::test::StandardNormal<double, D>;  // U = ‖θ‖²/2
  const Target model;
  using Sampler = sgmcmc::SGLD<double, D>;
  auto run = [&](bool adapt, double* t_sampling) {
    SGStepSizeWarmup<double> warm(4000, 250, 0.5, 1.0, p);
    REQUIRE(warm.valid());
    std::vector<sgmcmc::host::Rng> rngs;
    std::vector<Sampler> samplers;
    std::vector<typename Sampler::State> states;
    for (int c = 0; c < kChains; ++c) {
      rngs.emplace_back(2026, std::uint64_t(c) + 1);
      samplers.emplace_back(typename Sampler::Params{warm.step_size(), {}});
      states.push_back(samplers.back().start(Vec::Zero().eval()));
    }
    sgmcmc::ConfigurationalTemperature<double, D> temp;
    sgmcmc::TemperatureProbe<Target, double, D> probe(model, &temp);
    double h = warm.step_size();
    while (!warm.done()) {
      double pooled = 0.0;
      for (int c = 0; c < kChains; ++c) {
        temp.clear();
        for (std::size_t t = 0; t < warm.window_length(); ++t) {
          REQUIRE(samplers[c].step(states[c], probe, rngs[c]));
        }
        pooled += temp.mean_temperature() / kChains;
      }
      const double next = warm.end_window(pooled);
      if (adapt) h = next;
      for (auto& s : samplers) REQUIRE(s.set_step_size(h));
    }
    temp.clear();
    for (int c = 0; c < kChains; ++c) {
      for (int t = 0; t < 20000; ++t) REQUIRE(samplers[c].step(states[c], probe, rngs[c]));
    }
    *t_sampling = temp.mean_temperature();
    return h;
  };
  double t_adapted = 0.0, t_fixed = 0.0;
  const double h = run(true, &t_adapted);
  const double h0 = run(false, &t_fixed);
  MESSAGE("h* = " << h_star << ": adapted h = " << h << " (T̄ = " << t_adapted
                  << "), unadapted h = " << h0 << " (T̄ = " << t_fixed << ")");
  CHECK(std::abs(h / h_star - 1.0) < 0.4);
  CHECK(std::abs(t_adapted - 1.0 - p.tolerance) < 0.04);
  CHECK_FALSE(std::abs(h0 / h_star - 1.0) < 0.4);
  CHECK_FALSE(std::abs(t_fixed - 1.0 - p.tolerance) < 0.04);
}
