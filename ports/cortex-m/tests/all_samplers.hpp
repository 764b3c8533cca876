// SPDX-License-Identifier: MIT
// Every shipped sampler, float, at dimension D, with the parameters of the real-time measurements
// (tests/rt_steps.cpp, tests/errno_steps.hpp, tools/host_steps.cpp): f(label, sampler) for each,
// in the order of docs/REALTIME.md's table.
#pragma once

#include "probe_models.hpp"
#include "sgmcmc/samplers/hmc.hpp"
#include "sgmcmc/samplers/nuts.hpp"
#include "sgmcmc/samplers/psgld.hpp"
#include "sgmcmc/samplers/sgd.hpp"
#include "sgmcmc/samplers/sghmc.hpp"
#include "sgmcmc/samplers/sghmc_learned.hpp"
#include "sgmcmc/samplers/sgld.hpp"
#include "sgmcmc/samplers/sgmgt.hpp"
#include "sgmcmc/samplers/sgnht.hpp"
#include "sgmcmc/samplers/sgrhmc.hpp"
#include "sgmcmc/samplers/sgrhmc_constant.hpp"
#include "sgmcmc/samplers/sgrld.hpp"

namespace fw {

/// S with step size h and its other parameters at their defaults.
template <class S>
S with_step(float h) {
  typename S::Params p;
  p.step_size = h;
  return S(p);
}

/// Calls f(label, sampler) for every shipped sampler at dimension D (U = θᵀθ/2 in mind: the step
/// sizes are stable there). SGMGT: a = 1, c = 5; HMC: L = 10; NUTS: MaxDepth 10.
template <int D, class F>
void for_each_sampler(F&& f) {
  using namespace sgmcmc;
  f("SGLD", with_step<SGLD<float, D>>(0.1f));
  f("SGHMC", with_step<SGHMC<float, D>>(0.1f));
  f("SGNHT", with_step<SGNHT<float, D>>(0.05f));
  f("SGRHMC, constant diagonal metric", with_step<ConstantMetricSGRHMC<float, D>>(0.1f));
  f("pSGLD", with_step<PSGLD<float, D>>(0.01f));
  typename SGD<float, D>::Params sgd;
  sgd.learning_rate = 0.01f;
  f("SGD", SGD<float, D>(sgd));
  f("HMC, L = 10", with_step<HMC<float, D>>(0.1f));
  f("SGRLD (separable metric, AD)", SGRLD<float, D, SeparableMetric>({0.05f, {}, {}}));
  f("SGRHMC (separable metric, AD)", SGRHMC<float, D, SeparableMetric>({0.05f, {}, {}}));
  f("gSGRHMC", GSGRHMC<float, D>({0.05f, {}}));
  typename SGMGT<float, D>::Params mg;
  mg.step_size = 0.05f;
  f("SGMGT", SGMGT<float, D>(mg));
  mg.resample_period = 50;
  f("SGMGT, resampling every 50 steps", SGMGT<float, D>(mg));
  typename SGMGTD<float, D>::Params mgd;
  mgd.step_size = 0.05f;
  f("SGMGT-D", SGMGTD<float, D>(mgd));
  f("SGHMC, learned refresh", with_step<SGHMCLearnedRefresh<float, D>>(0.1f));
  f("NUTS, h = 0.5", with_step<NUTS<float, D>>(0.5f));
}

}  // namespace fw
