// SPDX-License-Identifier: MIT
// The experiment's core (src/experiments): AUROC and median helpers, and a short run on Heart
// whose held-out AUROC must beat a fixed threshold while a sign-flipped sampler must not.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "experiments/logreg_core.hpp"

namespace lr = sgmcmc::logreg;

TEST_CASE("AUROC: perfect, reversed, ties, and a hand-counted case") {
  CHECK(lr::auroc({0.1, 0.2, 0.8, 0.9}, {0, 0, 1, 1}) == 1.0);
  CHECK(lr::auroc({0.9, 0.8, 0.2, 0.1}, {0, 0, 1, 1}) == 0.0);
  CHECK(lr::auroc({0.5, 0.5, 0.5, 0.5}, {0, 1, 0, 1}) == 0.5);
  // Pairs (pos, neg): (0.4 vs 0.1, 0.6) -> 1, 0; (0.7 vs 0.1, 0.6) -> 1, 1; (0.6 vs 0.6) tie.
  CHECK(lr::auroc({0.1, 0.4, 0.6, 0.7}, {0, 1, 0, 1}) == doctest::Approx(0.75));
  CHECK(lr::auroc({0.1, 0.6, 0.6, 0.7}, {0, 1, 0, 1}) == doctest::Approx(0.875));
  CHECK(std::isnan(lr::auroc({0.1, 0.2}, {1, 1})));
  CHECK(lr::median({3.0, 1.0, 2.0}) == 2.0);
  CHECK(lr::median({4.0, 1.0, 2.0, 3.0}) == 2.5);
  CHECK(std::isnan(lr::median({})));
}

TEST_CASE("method keys round-trip and the paper's numbers are wired to the right cells") {
  std::vector<lr::MethodId> ids;
  std::string bad;
  REQUIRE(lr::parse_methods("sgld,sgnht,sgmgtd2,nuts,sgld-flipped", ids, &bad));
  CHECK(ids.size() == 5);
  CHECK(ids[2] == lr::MethodId::SGMGTD2);
  CHECK_FALSE(lr::parse_methods("sgld,nope", ids, &bad));
  CHECK(bad == "nope");
  CHECK(lr::paper_auroc(lr::MethodId::SGMGTD1, "pima") == 0.93);
  CHECK(lr::paper_ess(lr::MethodId::SGNHT, "caravan") == 1873);
  CHECK(std::isnan(lr::paper_ess(lr::MethodId::SGHMC, "heart")));
}

TEST_CASE("short run on Heart: AUROC beats 0.85; the sign-flipped control falls below it") {
  // Threshold: logistic regression on Heart reaches a held-out AUROC of about 0.90 (the paper:
  // 0.90–0.95; our full runs: 0.92, docs/experiments/logreg.md). A test part has 54 rows (about
  // 24 + 30 by class), whose AUROC has a standard error of ≈ 0.045 (Hanley–McNeil at 0.9);
  // averaged over 3 splits ≈ 0.026, so 0.85 is about 2.5 SE below the expected value (measured
  // here: 0.92), while a sampler that climbs U instead of descending it ranks the classes
  // backwards (measured: 0.11).
  sgmcmc::data::Dataset raw;
  std::string error;
  REQUIRE_MESSAGE(lr::load_dataset(SGMCMC_DATA_DIR "/logreg", "heart", raw, &error), error);
  lr::Settings s = lr::quick_settings();
  s.splits = 3;
  s.sg_steps = 2000;
  s.max_kept = 500;
  s.methods = {lr::MethodId::SGLD, lr::MethodId::SGHMC, lr::MethodId::SGNHTVhat,
               lr::MethodId::SGLDFlipped};
  const lr::DatasetResult r = lr::run_dataset("heart", raw, s);
  REQUIRE_MESSAGE(r.ok, r.error);
  REQUIRE(r.methods.size() == 4);
  CHECK(r.config.dim == 14);
  CHECK(r.config.train_rows == 216);
  CHECK(r.config.batch == 32);
  for (const auto& m : r.methods) {
    INFO(lr::method_name(m.id), ": AUROC ", m.auroc_mean(), ", median ESS ", m.ess_mean());
    REQUIRE(m.ok_runs() == 3);
    // Same budget for every chain: steps × n per-example gradient evaluations.
    CHECK(m.gradient_evals_mean() == double(s.sg_steps * r.config.batch));
    if (m.id == lr::MethodId::SGLDFlipped) {
      CHECK(m.auroc_mean() < 0.85);
    } else {
      CHECK(m.auroc_mean() > 0.85);
      CHECK(m.ess_mean() > 10.0);
    }
  }
}
