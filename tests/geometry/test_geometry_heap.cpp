// SPDX-License-Identifier: MIT
// Zero heap for the geometry samplers: Eigen's EIGEN_RUNTIME_NO_MALLOC guard plus counting
// malloc/operator new around steps (fixed-size LLT, SelfAdjointEigenSolver and AutoDiff included).
#define EIGEN_RUNTIME_NO_MALLOC  // before any Eigen header: Eigen asserts on a heap allocation
#include <doctest/doctest.h>

#include "alloc_counter.hpp"
#include "geometry_models.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/samplers/naive.hpp"
#include "sgmcmc/samplers/sgrhmc.hpp"
#include "sgmcmc/samplers/sgrld.hpp"
#include "test_models.hpp"

using namespace sgmcmc;

namespace {

/// Allocations counted over 200 steps with Eigen's allocator forbidden; -1 if a step failed.
template <class S, class M>
long allocations_in_steps(const S& s, const M& model) {
  host::Rng rng(5);
  auto z = s.start(Vector<typename S::Scalar, S::dim>::Constant(typename S::Scalar(0.3)));
  bool ok = true;
  long count = 0;
  {
    sgmcmc_test::AllocationScope scope;
    Eigen::internal::set_is_malloc_allowed(false);
    for (int i = 0; i < 200; ++i) ok = ok && static_cast<bool>(s.step(z, model, rng));
    Eigen::internal::set_is_malloc_allowed(true);
    count = scope.count();
  }
  return ok ? count : -1;
}

}  // namespace

TEST_CASE_TEMPLATE("geometry samplers allocate nothing in a step", Scalar, float, double) {
  constexpr int D = 3;
  sgmcmc_test::QuarticModel<Scalar, D> quartic;
  geo::MinibatchModel<geo::BananaTarget, Scalar, 2> banana;
  banana.sigma = Scalar(0.5);  // the model draws its own noise: also without allocating
  using MSep = InverseMetric<DiagonalShape, geo::SeparableDiagInverse, true>;
  using MDiag = InverseMetric<DiagonalShape, geo::CoupledDiagInverse>;
  using MDense = InverseMetric<DenseShape, geo::DenseInverse>;
  using MG = Metric<DenseShape, geo::DenseMetricG>;
  const Scalar h = Scalar(0.01);

  CHECK(allocations_in_steps(SGRLD<Scalar, D, MSep>({h, {}, {}}), quartic) == 0);
  CHECK(allocations_in_steps(SGRLD<Scalar, D, MDiag>({h, {}, {}}), quartic) == 0);
  CHECK(allocations_in_steps(SGRLD<Scalar, D, MDense>({h, {}, {}}), quartic) == 0);
  CHECK(allocations_in_steps(SGRLD<Scalar, D, MG>({h, {}, {}}), quartic) == 0);
  CHECK(allocations_in_steps(
            SGRLD<Scalar, D, MSep, geo::SeparableDiagInverseDivergence>({h, {}, {}}), quartic) ==
        0);
  CHECK(allocations_in_steps(NaiveSGRLD<Scalar, D, MDense>({h, {}}), quartic) == 0);
  CHECK(allocations_in_steps(SGRHMC<Scalar, D, MDiag>({h, {}, {}}), quartic) == 0);
  CHECK(allocations_in_steps(SGRHMC<Scalar, D, MDense>({h, {}, {}}), quartic) == 0);
  CHECK(allocations_in_steps(SGRHMC<Scalar, D, MDense, AutoGamma, ExplicitEuler>({h, {}, {}}),
                             quartic) == 0);
  CHECK(allocations_in_steps(SGRHMC<Scalar, D, MG>({h, {}, {}}), quartic) == 0);
  CHECK(allocations_in_steps(NaiveSGRHMC<Scalar, D, MDense>({h, {}}), quartic) == 0);
  CHECK(allocations_in_steps(GSGRHMC<Scalar, 2>({h, {}}), banana) == 0);
  CHECK(allocations_in_steps(GSGRHMC<Scalar, 2, AutoGamma>({h, {}}), banana) == 0);
  CHECK(allocations_in_steps(NaiveGSGRHMC<Scalar, 2>({h, {}}), banana) == 0);
}

TEST_CASE("negative control: the counter sees an allocating model") {
  using MDense = InverseMetric<DenseShape, geo::DenseInverse>;
  sgmcmc_test::AllocatingModel<double, 3> model;
  CHECK(allocations_in_steps(SGRHMC<double, 3, MDense>({0.01, {}, {}}), model) >= 200);
}
