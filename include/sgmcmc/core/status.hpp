// SPDX-License-Identifier: MIT
// Status: the outcome of a step or a configuration, returned instead of throwing.
#pragma once

#include <cstdint>

namespace sgmcmc {

/// What went wrong, if anything. Every code but Ok leaves the caller's state untouched.
enum class StatusCode : std::uint8_t {
  Ok = 0,
  InvalidStepSize,     ///< h <= 0 or not finite
  InvalidParameter,    ///< a sampler parameter out of range (negative friction, mass <= 0, ...)
  NonFiniteGradient,   ///< the model returned NaN or Inf in its gradient
  NonFiniteState,      ///< the state was, or would have become, non-finite
  NonFiniteMetric,     ///< a state-dependent D or Q block evaluated to NaN or Inf
  NoiseNotPSD,         ///< 2D - h*Bhat is not positive semi-definite (dense: not positive definite)
  NonFinitePotential,  ///< the model's potential (HMC's Metropolis test) is NaN
  Unsupported,         ///< a combination the engine does not implement (named in the docs)
  CapReached,          ///< a bounded loop hit its cap (a rejection sampler's proposals, a failing
                       ///< RNG): the result would not be exact, so nothing was changed
  NoiseNotReady,       ///< a real-time tick found no refilled noise (run/realtime.hpp)
};

/// Human-readable name of a status code (static storage, no allocation).
constexpr const char* to_string(StatusCode c) noexcept {
  switch (c) {
    case StatusCode::Ok:
      return "ok";
    case StatusCode::InvalidStepSize:
      return "step size must be finite and > 0";
    case StatusCode::InvalidParameter:
      return "invalid sampler parameter";
    case StatusCode::NonFiniteGradient:
      return "gradient is not finite";
    case StatusCode::NonFiniteState:
      return "state is not finite";
    case StatusCode::NonFiniteMetric:
      return "state-dependent D or Q block is not finite";
    case StatusCode::NoiseNotPSD:
      return "noise covariance 2D - h*Bhat is not positive semi-definite";
    case StatusCode::NonFinitePotential:
      return "potential is not finite";
    case StatusCode::Unsupported:
      return "unsupported configuration";
    case StatusCode::CapReached:
      return "a bounded loop reached its cap (is the RNG failing?)";
    case StatusCode::NoiseNotReady:
      return "no refilled noise for this tick";
  }
  return "unknown status";
}

/// Result of a step: converts to true when the step succeeded.
///   if (auto s = sampler.step(z, model, rng); !s) handle(s.code);
struct [[nodiscard]] Status {
  StatusCode code = StatusCode::Ok;

  constexpr Status() noexcept = default;
  constexpr Status(StatusCode c) noexcept : code(c) {}  // NOLINT: implicit by design
  constexpr explicit operator bool() const noexcept { return code == StatusCode::Ok; }
  constexpr bool operator==(StatusCode c) const noexcept { return code == c; }
  constexpr bool operator!=(StatusCode c) const noexcept { return code != c; }
  constexpr const char* message() const noexcept { return to_string(code); }
};

}  // namespace sgmcmc
