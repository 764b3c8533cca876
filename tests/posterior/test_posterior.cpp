// SPDX-License-Identifier: MIT
// The posterior comparison of the logistic-regression experiment (src/experiments/logreg_posterior
// .{hpp,cpp}, docs/stan-comparison.md): the per-sampler CSV written and read back, the bulk ESS on
// chains of known autocorrelation, the accuracy measure, and a CI-sized run on Heart — SGLD-CV
// within the accuracy bound of a long NUTS reference (negative control: SGHMC-CV at a step
// size four times the rule's start, not adapted).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "experiments/logreg_core.hpp"
#include "experiments/logreg_posterior.hpp"
#include "local_rng.hpp"
#include "sgmcmc/core/noise.hpp"

namespace lr = sgmcmc::logreg;
using sgmcmc_test::LocalRng;

namespace {

/// m chains of n draws of a Gaussian AR(1) with coefficient φ and unit stationary variance.
std::vector<std::vector<double>> ar1(std::size_t m, std::size_t n, double phi, std::uint64_t seed) {
  LocalRng rng(seed);
  std::vector<std::vector<double>> out(m, std::vector<double>(n));
  const double innovation = std::sqrt(1.0 - phi * phi);
  std::vector<double> e(n + 1);
  for (auto& c : out) {
    sgmcmc::fill_normal_portable(rng, e.data(), sgmcmc::Index(n + 1));
    double x = e[n];
    for (std::size_t t = 0; t < n; ++t) {
      x = phi * x + innovation * e[t];
      c[t] = x;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("posterior CSV: written and read back") {
  lr::PosteriorRun run;
  run.ok = true;
  run.mean = {0.1, -2.5, 1.0 / 3.0};
  run.sd = {0.25, 1e-3, 2.0 / 7.0};
  run.ess = {1234.5, 99.0, 4000.0};
  run.rhat = {1.001, 1.25, 1.0};
  run.cpu_seconds = 1.25;
  run.kept = 2000;
  const std::string path = std::string(SGMCMC_TEST_TMP_DIR) + "/heart_test.csv";
  REQUIRE(lr::write_posterior_csv(path, run));
  lr::Moments m;
  std::string error;
  REQUIRE_MESSAGE(lr::read_moments_csv(path, m, &error), error);
  CHECK(m.mean == run.mean);  // %.17g round-trips a double exactly
  CHECK(m.sd == run.sd);
  REQUIRE(m.ess.size() == 3);
  CHECK(m.ess[0] == doctest::Approx(1234.5));
  // The CPU seconds are in the trailing comment line.
  std::FILE* f = std::fopen(path.c_str(), "r");
  REQUIRE(f != nullptr);
  std::string text;
  for (int ch; (ch = std::fgetc(f)) != EOF;) text.push_back(char(ch));
  std::fclose(f);
  CHECK(text.rfind("coefficient,mean,sd,ess_bulk,rhat\n", 0) == 0);
  CHECK(text.find("# cpu_seconds=1.25 ") != std::string::npos);
  CHECK(text.find("\n1,-2.5,0.001,99,1.25\n") != std::string::npos);  // the rhat column
  // Refusals: no file, no mean column, a short row.
  CHECK_FALSE(lr::read_moments_csv(path + ".missing", m, &error));
  const std::string bad = std::string(SGMCMC_TEST_TMP_DIR) + "/bad.csv";
  for (const char* content : {"coefficient,sd\n0,1\n", "coefficient,mean,sd\n0,1\n"}) {
    std::FILE* b = std::fopen(bad.c_str(), "w");
    REQUIRE(b != nullptr);
    std::fputs(content, b);
    std::fclose(b);
    error.clear();
    CHECK_FALSE(lr::read_moments_csv(bad, m, &error));
    CHECK_FALSE(error.empty());
  }
}

TEST_CASE("bulk ESS: independent and autocorrelated chains") {
  // 4 chains × 2000 draws. Independent draws: ESS ≈ 8000; the estimator's relative sd is a few
  // per cent here, so the band is [7000, 9000]. AR(1) with φ = 0.9: ESS ≈ 8000 (1 − φ)/(1 + φ)
  // = 421; band ±25 % (the autocorrelation sum of a strongly correlated chain is noisier).
  // Negative control: each chain's ESS checked against the other's band fails.
  const double iid = lr::ess_bulk(ar1(4, 2000, 0.0, 1));
  const double corr = lr::ess_bulk(ar1(4, 2000, 0.9, 2));
  INFO("ESS iid " << iid << ", AR(1) " << corr);
  auto iid_band = [](double e) { return e > 7000 && e < 9000; };
  auto ar_band = [](double e) { return std::abs(e - 421.0) < 0.25 * 421.0; };
  CHECK(iid_band(iid));
  CHECK(ar_band(corr));
  CHECK_FALSE(iid_band(corr));
  CHECK_FALSE(ar_band(iid));
  CHECK(std::isnan(lr::ess_bulk({{1.0, 2.0, 3.0}})));  // fewer than 4 draws
}

TEST_CASE("split R-hat: mixed chains, shifted chains, drifting chains") {
  // 4 chains × 2000 independent N(0, 1) draws: 8 half-chains of 1000, so B/n ≈ 1e-3 · χ²₇/7 and
  // R̂ = 1 ± 0.003; bound 1.01. Negative controls: chain c shifted by 0.5 c (R̂ ≈ 1.3), and every
  // chain's second half shifted by 1 (only the split sees it: R̂ ≈ 1.1 or more).
  const auto iid = ar1(4, 2000, 0.0, 3);
  auto shifted = iid;
  for (std::size_t c = 0; c < shifted.size(); ++c) {
    for (double& x : shifted[c]) x += 0.5 * double(c);
  }
  auto drifting = iid;
  for (auto& chain : drifting) {
    for (std::size_t t = chain.size() / 2; t < chain.size(); ++t) chain[t] += 1.0;
  }
  const double r_iid = lr::split_rhat(iid);
  const double r_shift = lr::split_rhat(shifted);
  const double r_drift = lr::split_rhat(drifting);
  INFO("R-hat iid " << r_iid << ", shifted " << r_shift << ", drifting " << r_drift);
  CHECK(r_iid < 1.01);
  CHECK(r_shift > 1.1);
  CHECK(r_drift > 1.1);
  CHECK(std::isnan(lr::split_rhat({iid[0]})));                        // one chain
  CHECK(std::isnan(lr::split_rhat({{1.0, 2.0}, {1.0, 2.0}})));        // fewer than 4 draws
  CHECK(std::isnan(lr::split_rhat({iid[0], {1.0, 2.0, 3.0, 4.0}})));  // unequal lengths
}

TEST_CASE("accuracy against a reference") {
  lr::Moments ref;
  ref.mean = {0.0, 1.0};
  ref.sd = {1.0, 2.0};
  const lr::Accuracy a = lr::accuracy({0.05, 1.3}, {0.95, 2.3}, ref);
  CHECK(a.max_mean_error == doctest::Approx(0.15));
  CHECK(a.min_sd_ratio == doctest::Approx(0.95));
  CHECK(a.max_sd_ratio == doctest::Approx(1.15));
  CHECK_FALSE(a.within(0.1, 0.9, 1.1));
  CHECK(a.within(0.2, 0.9, 1.2));
  CHECK(std::isnan(lr::accuracy({0.0}, {1.0}, ref).max_mean_error));  // size mismatch
}

TEST_CASE("Heart, CI-sized: SGLD-CV within the accuracy bound of a long NUTS reference") {
  // Reference: this library's NUTS (dense metric, Stan's warm-up) with 4 chains × 10 000 draws,
  // min ESS ≈ 46 000 (its own Monte Carlo error ≈ 0.005 sd). Candidate: SGLD-CV with the
  // experiment's defaults (batch 32, h adapted to an excess temperature of 0.1, 4 chains × 40 000
  // steps; min ESS ≈ 8000 on Heart, so the max over 14 coefficients of the Monte Carlo error is
  // ≈ 0.03 sd, and the adapted h inflates the sd by ≈ 5 %). Pass: the bound, max |mean
  // error| ≤ 0.1 sd and every sd ratio in [0.9, 1.1]; SGHMC-CV (batch 64, min ESS ≈ 39 000) must
  // pass it too. Negative control: SGHMC-CV at 4× the rule's starting h, not adapted
  // (configurational temperature far above 1), fails it. About 4 s of CPU.
  sgmcmc::data::Dataset raw;
  std::string error;
  REQUIRE_MESSAGE(lr::load_dataset(SGMCMC_DATA_DIR "/logreg", "heart", raw, &error), error);
  lr::PosteriorSettings s;
  s.methods = {lr::PosteriorMethod::NUTS};
  s.nuts_draws = 10000;
  const auto ref_runs = lr::run_posterior_dataset("heart", raw, s, &error);
  REQUIRE_MESSAGE(error.empty(), error);
  REQUIRE(ref_runs.size() == 1);
  REQUIRE_MESSAGE(ref_runs[0].ok, ref_runs[0].error);
  const lr::Moments ref{ref_runs[0].mean, ref_runs[0].sd, ref_runs[0].ess};

  s.methods = {lr::PosteriorMethod::SGLDCV, lr::PosteriorMethod::SGHMCCV,
               lr::PosteriorMethod::SGHMCCVNoAdapt};
  s.seed = 7;
  const auto runs = lr::run_posterior_dataset("heart", raw, s, &error);
  REQUIRE_MESSAGE(error.empty(), error);
  REQUIRE(runs.size() == 3);
  for (const auto& r : runs) REQUIRE_MESSAGE(r.ok, r.error);
  const lr::Accuracy good = lr::accuracy(runs[0].mean, runs[0].sd, ref);
  const lr::Accuracy sghmc = lr::accuracy(runs[1].mean, runs[1].sd, ref);
  const lr::Accuracy hot = lr::accuracy(runs[2].mean, runs[2].sd, ref);
  MESSAGE("reference min ESS " << ref_runs[0].min_ess() << "; SGLD-CV: max mean error "
                               << good.max_mean_error << ", sd ratio " << good.min_sd_ratio << "–"
                               << good.max_sd_ratio << ", min ESS " << runs[0].min_ess()
                               << "; SGHMC-CV (batch 64): " << sghmc.max_mean_error << ", "
                               << sghmc.min_sd_ratio << "–" << sghmc.max_sd_ratio << ", min ESS "
                               << runs[1].min_ess() << "; control: " << hot.max_mean_error << ", "
                               << hot.min_sd_ratio << "–" << hot.max_sd_ratio);
  CHECK(good.within(0.1, 0.9, 1.1));
  CHECK(sghmc.within(0.1, 0.9, 1.1));
  CHECK_FALSE(hot.within(0.1, 0.9, 1.1));
}

TEST_CASE("plain SGHMC: four chains in one Batch give the chains run one by one, bit for bit") {
  // The experiment steps plain SGHMC's 4 chains as one interleaved Batch (batch/batch.hpp), each
  // chain drawing its minibatches and noise from its own stream in the single chain's order, so
  // the pooled moments, ESS and R-hat must equal those of the chains run one after the other
  // exactly. Negative control: the same batched run with another seed differs.
  sgmcmc::data::Dataset raw;
  std::string error;
  REQUIRE_MESSAGE(lr::load_dataset(SGMCMC_DATA_DIR "/logreg", "heart", raw, &error), error);
  lr::PosteriorSettings s;
  s.methods = {lr::PosteriorMethod::SGHMCPlain};
  s.sg_warmup = 500;
  s.sg_steps = 4000;
  s.sg_kept = 1000;
  auto run = [&](bool batched, std::uint64_t seed) {
    s.batch_plain = batched;
    s.seed = seed;
    const auto runs = lr::run_posterior_dataset("heart", raw, s, &error);
    REQUIRE_MESSAGE(error.empty(), error);
    REQUIRE(runs.size() == 1);
    REQUIRE_MESSAGE(runs[0].ok, runs[0].error);
    return runs[0];
  };
  const lr::PosteriorRun one_by_one = run(false, 11);
  const lr::PosteriorRun batched = run(true, 11);
  const lr::PosteriorRun other_seed = run(true, 12);
  MESSAGE("plain SGHMC on Heart, 4 chains: max R-hat " << batched.max_rhat() << ", min ESS "
                                                       << batched.min_ess());
  CHECK(batched.mean == one_by_one.mean);
  CHECK(batched.sd == one_by_one.sd);
  CHECK(batched.ess == one_by_one.ess);
  CHECK(batched.rhat == one_by_one.rhat);
  CHECK(batched.step_size == one_by_one.step_size);
  CHECK(batched.gradient_evals == one_by_one.gradient_evals);
  CHECK(other_seed.mean != batched.mean);
  CHECK(batched.max_rhat() < 1.1);  // started at the MAP: no sign of non-convergence
}
