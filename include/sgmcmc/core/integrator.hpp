// SPDX-License-Identifier: MIT
// Integrators of the recipe (DESIGN §4, MATH.md §1.3): explicit Euler, and splittings — a sequence
// of block updates, each seeing the newest values of every block: kick–drift sweeps, leapfrog,
// and the BAOAB/OBABO family that splits a Langevin block into its dissipative and conservative
// parts. One integrator serves every sampler declared with it.
#pragma once

#include <cstdint>

#include "sgmcmc/core/layout.hpp"

namespace sgmcmc {

/// Which terms of a block's drift f_B = −(D+Q)_B ∇H + Γ_B (plus noise) an update applies.
enum class Part : std::uint8_t {
  Full,  ///< everything: −D_BB∇H_B − Σ Q_B· ∇H + Γ_B, and the noise N(0, φh(2D_BB − φhB̂))
  Dissipative,   ///< the D part: −D_BB∇H_B + Γ from D, and the noise (Euler–Maruyama)
  Conservative,  ///< the Q part: −Σ Q_B· ∇H + Γ from Q; no noise
  ExactOU,  ///< the D part solved exactly (Ornstein–Uhlenbeck): for a constant scalar D_BB and
            ///< a quadratic energy term w(x − c)²/2, x ← c + (x − c)a + √(T(1 − a²)/w) ζ,
            ///< a = e^{−φh D w}
};

/// One update of block B over the fraction Num/Den of the step h, applying `P` of its drift.
template <int B, Part P = Part::Full, int Num = 1, int Den = 1>
struct Update {
  static_assert(Num > 0 && Den > 0, "an update moves a positive fraction of the step");
  static constexpr int block = B;
  static constexpr Part part = P;
  static constexpr int num = Num;
  static constexpr int den = Den;
};

/// Every block's drift from the old state z_t: the recipe's Euler–Maruyama rule and the oracle.
struct ExplicitEuler {};

/// Updates applied in order, each from the newest values of every block. The model gradient is
/// evaluated where an update needs it (D_θθ ≠ 0 in a position update, or a Q block joining the
/// updated block to the position), at the current position, and reused until the position moves.
/// Every block must be updated at least once.
template <class... Updates>
struct Splitting {
  static_assert(sizeof...(Updates) > 0, "a splitting needs at least one update");
  static constexpr int count = static_cast<int>(sizeof...(Updates));
};

/// Blocks updated once each, in the given order, over the whole step: Sweep<Momentum, Position>
/// is kick–drift SGHMC, Sweep<Position, Momentum> drift–kick, Sweep<Momentum, Position,
/// Thermostat> SGNHT's order (MATH.md §1.3).
template <int... Order>
using Sweep = Splitting<Update<Order>...>;

/// Kick–drift: momentum first, then position from the new momentum.
using KickDrift = Sweep<Momentum, Position>;
/// Drift–kick: position first (the SGHMC paper's Algorithm 2).
using DriftKick = Sweep<Position, Momentum>;

/// Velocity Verlet (leapfrog): half kick, drift, half kick. With D = 0 it is HMC's integrator:
/// symplectic, reversible, volume preserving; one gradient per step when steps are chained.
using Leapfrog = Splitting<Update<Momentum, Part::Full, 1, 2>, Update<Position>,
                           Update<Momentum, Part::Full, 1, 2>>;

/// BAOAB (Leimkuhler & Matthews): B = half kick (Q part of the momentum), A = half drift,
/// O = the friction and noise solved exactly over the whole step.
using BAOAB = Splitting<Update<Momentum, Part::Conservative, 1, 2>,
                        Update<Position, Part::Conservative, 1, 2>, Update<Momentum, Part::ExactOU>,
                        Update<Position, Part::Conservative, 1, 2>,
                        Update<Momentum, Part::Conservative, 1, 2>>;

/// OBABO: half an exact O step, a leapfrog, half an exact O step (Bussi & Parrinello's
/// Langevin integrator; the ordering that SG-HMC codes with a Metropolis test use).
using OBABO =
    Splitting<Update<Momentum, Part::ExactOU, 1, 2>, Update<Momentum, Part::Conservative, 1, 2>,
              Update<Position, Part::Conservative>, Update<Momentum, Part::Conservative, 1, 2>,
              Update<Momentum, Part::ExactOU, 1, 2>>;

}  // namespace sgmcmc
