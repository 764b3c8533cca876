// SPDX-License-Identifier: MIT
// Optimisers as zero-temperature limits of the recipe (MATH.md §2.3): SGD = cold SGLD,
// SGD with momentum (heavy ball) = cold SGHMC. Same engine, no noise, no Γ.
#pragma once

#include "sgmcmc/samplers/sghmc.hpp"
#include "sgmcmc/samplers/sgld.hpp"

namespace sgmcmc {

/// θ ← θ - h D₀ g.
template <class Scalar, int Dim, class DS = Scaled<Scalar>>
class SGD : public SGLDRecipe<Scalar, Dim, DS, true> {
  using Base = SGLDRecipe<Scalar, Dim, DS, true>;

 public:
  static_assert(Dim > 0, "Dim must be positive");
  struct Params {
    Scalar learning_rate{Scalar(1e-3)};  ///< h
    DS preconditioner{};                 ///< D₀, default I
  };
  explicit SGD(const Params& p) noexcept
      : Base(Energy<>{}, Diffusion<DS>{{p.preconditioner}}, Curl<>{}, p.learning_rate) {}
  typename Base::StateType start(const Vector<Scalar, Dim>& theta0) const noexcept {
    typename Base::StateType z;
    z.position() = theta0;
    return z;
  }
};

/// Heavy ball: v ← (1 - α)v - ηg; θ ← θ + v, as cold kick–drift SGHMC with m = 1, h = √η,
/// C = α/√η; the state's momentum is r = v/h.
template <class Scalar, int Dim>
class SGDMomentum : public SGHMCRecipe<Scalar, Dim, KickDrift, true> {
  using Base = SGHMCRecipe<Scalar, Dim, KickDrift, true>;

 public:
  static_assert(Dim > 0, "Dim must be positive");
  struct Params {
    Scalar learning_rate{Scalar(1e-3)};  ///< η
    Scalar momentum_decay{Scalar(0.1)};  ///< α in (0, 1]: momentum coefficient 1 - α
  };
  explicit SGDMomentum(const Params& p) noexcept
      : Base(Energy<GaussianKinetic<Scalar>>{{GaussianKinetic<Scalar>{Scalar(1)}}},
             Diffusion<Zero, Scaled<Scalar>>{
                 {Zero{}, Scaled<Scalar>{SGHMCParams<Scalar>::from_momentum_sgd(p.learning_rate,
                                                                                p.momentum_decay)
                                             .friction}}},
             Curl<SkewPair<Momentum, Position, Identity>>{},
             SGHMCParams<Scalar>::from_momentum_sgd(p.learning_rate, p.momentum_decay).step_size) {}
  typename Base::StateType start(const Vector<Scalar, Dim>& theta0) const noexcept {
    typename Base::StateType z;
    z.position() = theta0;
    return z;
  }
};

}  // namespace sgmcmc
