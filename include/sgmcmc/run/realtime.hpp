// SPDX-License-Identifier: MIT
// The real-time split of a step (DESIGN §5½, docs/REALTIME.md): a refill that draws the next
// ticks' random numbers (in idle time, or a lower-priority context) and a tick that steps with
// them, whose cost does not depend on the random numbers. A lock-free single-producer /
// single-consumer queue, so the refill may run in the main loop while ticks run in an interrupt.
#pragma once

#include <atomic>
#include <cstdint>

#include "sgmcmc/core/status.hpp"
#include "sgmcmc/port/rng.hpp"

namespace sgmcmc {

/// Slots of pre-drawn noise for a sampler with step_with_noise(z, model, const Scalar*),
/// noise_size and fill_noise(rng, out) (every recipe sampler; HMC).
/// refill() belongs to one context (the producer), tick() to one other (the consumer, e.g. an
/// interrupt handler); each slot is written by refill before it is published and read by tick
/// before it is released, with acquire/release ordering on two counters (lock-free on any
/// target with a lock-free std::atomic<std::uint32_t>, such as Cortex-M3/M4/M7).
/// Class invariant: 0 ≤ published − consumed ≤ Slots.
template <class Sampler, int Slots = 2>
class NoiseQueue {
 public:
  using Scalar = typename Sampler::Scalar;
  static constexpr int size = Sampler::noise_size > 0 ? Sampler::noise_size : 1;
  static_assert(Slots >= 1, "a noise queue needs at least one slot");

  /// Draws one slot if one is free; false (nothing drawn) when all are full.
  template <class Rng>
  bool refill(Rng& rng) noexcept {
    check_rng<Rng>();
    const std::uint32_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_.load(std::memory_order_acquire) >= std::uint32_t(Slots)) return false;
    if constexpr (Sampler::noise_size > 0) Sampler::fill_noise(rng, slot_[head % Slots]);
    head_.store(head + 1, std::memory_order_release);
    return true;
  }
  /// Refills every free slot; the number drawn.
  template <class Rng>
  int refill_all(Rng& rng) noexcept {
    int n = 0;
    while (refill(rng)) ++n;
    return n;
  }
  /// Slots ready for ticks.
  int ready() const noexcept {
    return static_cast<int>(head_.load(std::memory_order_acquire) -
                            tail_.load(std::memory_order_relaxed));
  }

  /// One step with the oldest ready slot; NoiseNotReady (z untouched, nothing consumed) when
  /// none is ready. A failed step consumes its slot (its normals are not reused).
  template <class St, class Model>
  Status tick(const Sampler& sampler, St& z, const Model& model) noexcept {
    const std::uint32_t tail = tail_.load(std::memory_order_relaxed);
    if (tail == head_.load(std::memory_order_acquire)) return StatusCode::NoiseNotReady;
    const Status s = sampler.step_with_noise(z, model, slot_[tail % Slots]);
    tail_.store(tail + 1, std::memory_order_release);
    return s;
  }

 private:
  Scalar slot_[Slots][size] = {};
  std::atomic<std::uint32_t> head_{0};  // slots published by refill
  std::atomic<std::uint32_t> tail_{0};  // slots consumed by tick
};

}  // namespace sgmcmc
