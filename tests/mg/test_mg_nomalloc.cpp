// SPDX-License-Identifier: MIT
// Zero heap for SGMGT, SGMGT-D, NUTS and SGHMCLearnedRefresh: Eigen's runtime malloc guard plus
// counting replacements of operator new and malloc around every step and draw.
#define EIGEN_RUNTIME_NO_MALLOC
#include <doctest/doctest.h>

#include <vector>

#include "alloc_counter.hpp"
#include "sgmcmc/core/kinetic_mg.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/samplers/nuts.hpp"
#include "sgmcmc/samplers/sghmc_learned.hpp"
#include "sgmcmc/samplers/sgmgt.hpp"
#include "test_models.hpp"

using namespace sgmcmc;

namespace {

/// Eigen's guard (asserts inside Eigen on a dynamic allocation) and the global counter together.
class NoHeap {
 public:
  NoHeap() { Eigen::internal::set_is_malloc_allowed(false); }
  ~NoHeap() { Eigen::internal::set_is_malloc_allowed(true); }
  NoHeap(const NoHeap&) = delete;
  NoHeap& operator=(const NoHeap&) = delete;
  long count() const { return scope_.count(); }

 private:
  sgmcmc_test::AllocationScope scope_;
};

}  // namespace

TEST_CASE("the counter sees allocations (positive control)") {
  NoHeap guard;
  std::vector<int>* v = new std::vector<int>(3);
  const long seen = guard.count();
  delete v;
  CHECK(seen >= 1);
}

TEST_CASE_TEMPLATE("SGMGT family, kinetic draws: no heap in steps, resampling and draws", Scalar,
                   float, double) {
  constexpr int d = 8;
  const sgmcmc_test::QuarticModel<Scalar, d> model;
  host::Rng rng(1);
  for (int a : {1, 2}) {
    typename SGMGT<Scalar, d>::Params p;
    p.shape = a;
    p.resample_period = 7;
    SGMGT<Scalar, d> s(p);
    REQUIRE(s.set_gradient_noise(Scalar(0.1)));
    typename SGMGTD<Scalar, d>::Params q;
    q.shape = a;
    q.resample_period = 7;
    const SGMGTD<Scalar, d> sd(q);
    const SGMGTD<Scalar, d, ExplicitEuler> se(q);
    auto z = s.start(Vector<Scalar, d>::Constant(Scalar(0.1)), rng);
    auto zd = sd.start(Vector<Scalar, d>::Constant(Scalar(0.1)), rng);
    typename SGMGTD<Scalar, d, ExplicitEuler>::State ze;
    REQUIRE(se.start(ze, Vector<Scalar, d>::Constant(Scalar(0.1)), rng));
    // A recipe built by make_recipe (how the tests build their variants) steps without heap too.
    const auto variant = SGMGT<Scalar, d>::make_recipe(p);
    auto zv = z;
    const SoftMonomialGammaKinetic<Scalar> k{a, Scalar(1), Scalar(3)};
    Vector<Scalar, d> p_draw;
    bool drawn = true;
    NoHeap guard;
    for (int i = 0; i < 100; ++i) {
      REQUIRE(s.step(z, model, rng));  // resamples every 7 steps (the state's counter)
      REQUIRE(sd.step(zd, model, rng));
      REQUIRE(se.step(ze, model, rng));
      REQUIRE(variant.step(zv, model, rng));
      REQUIRE(s.resample_momentum(z, rng));
      REQUIRE(sd.resample_thermostat(zd, rng));
      drawn = k.sample(rng, p_draw) && drawn;
      (void)gamma_variate<Scalar>(rng, Scalar(2.5), Scalar(1));
      (void)gamma_variate<Scalar>(rng, Scalar(0.4), Scalar(1));
    }
    CHECK(guard.count() == 0);
    CHECK(drawn);
    CHECK(z.extra().steps == 100);
  }
}

TEST_CASE_TEMPLATE("NUTS and SGHMCLearnedRefresh: no heap", Scalar, float, double) {
  constexpr int d = 8;
  const sgmcmc_test::QuarticModel<Scalar, d> model;
  host::Rng rng(2);
  typename NUTS<Scalar, d>::Params np;
  np.step_size = Scalar(0.2);
  const NUTS<Scalar, d> nuts(np);
  auto zn = nuts.start(Vector<Scalar, d>::Constant(Scalar(0.5)));
  using L = SGHMCLearnedRefresh<Scalar, d, 8>;
  typename L::Params lp;
  lp.step_size = Scalar(0.05);
  const L learned(lp);
  auto zl = learned.start(Vector<Scalar, d>::Constant(Scalar(0.5)));
  NoHeap guard;
  long leapfrogs = 0;
  for (int i = 0; i < 50; ++i) {
    REQUIRE(nuts.step(zn, model, rng));
    leapfrogs += zn.extra().leapfrog_steps;
  }
  long warmup = 0;
  while (!zl.extra().lengths.full() && warmup++ < 100000) REQUIRE(learned.step(zl, model, rng));
  for (int i = 0; i < 500; ++i) REQUIRE(learned.step(zl, model, rng));
  CHECK(guard.count() == 0);
  CHECK(leapfrogs > 50);
  CHECK(zl.extra().lengths.full());
}
