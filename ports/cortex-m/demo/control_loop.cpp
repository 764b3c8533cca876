// SPDX-License-Identifier: MIT
// Control-loop demo (docs/REALTIME.md): SysTick interrupts at a fixed rate; each one reads a
// simulated sensor and steps SGLD once (a NoiseQueue tick) on an online posterior over the
// drifting biases of 8 sensors, while the main loop refills the noise between interrupts. Counts
// deadline misses and reports the worst tick and the headroom. Run under qemu -icount shift=0,
// so virtual time follows instructions: one SysTick tick is 40 instructions.
//
// Model: sensor i reads y_i = b_i(t) + σ ε with b_i a slow random walk. The tick keeps
// exponentially weighted means m_i ← m_i + λ (y_i − m_i) (λ = 1/n, n = 100 effective readings)
// and samples θ ~ N(m, σ²/n) by SGLD on U(θ) = (n / 2σ²) |θ − m|².
// Exit status 0 iff: no deadline missed at the nominal period over 10^5 ticks, no tick failed,
// the posterior tracks the biases (RMS error of θ against b below 3 posterior sd plus the lag of
// the moving average), and the negative control (a period shorter than the tick) misses.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "sgmcmc/cortex_m/console.hpp"
#include "sgmcmc/cortex_m/count.hpp"
#include "sgmcmc/cortex_m/rng.hpp"
#include "sgmcmc/run/realtime.hpp"
#include "sgmcmc/samplers/sgld.hpp"

namespace {

namespace count = sgmcmc::cortex_m::count;
using sgmcmc::cortex_m::Line;

constexpr int kSensors = 8;
constexpr float kSigma = 0.1f;       // sensor noise sd
constexpr float kReadings = 100.0f;  // n: effective readings in the moving average
constexpr float kDrift = 0.002f;     // random-walk sd of each bias per tick
using Sampler = sgmcmc::SGLD<float, kSensors>;
using Vec = sgmcmc::Vector<float, kSensors>;

volatile std::uint32_t& reg(std::uintptr_t a) {
  return *reinterpret_cast<volatile std::uint32_t*>(a);
}
constexpr std::uintptr_t kSystCsr = 0xE000E010u, kSystRvr = 0xE000E014u, kSystCvr = 0xE000E018u;
constexpr std::uintptr_t kIcsr = 0xE000ED04u, kVtor = 0xE000ED08u;
constexpr std::uint32_t kPendStSet = 1u << 26;
constexpr std::uint32_t kInstructionsPerSysTick = 40;  // 25 MHz SysTick, 1 instruction per ns

/// U(θ) = (n / 2σ²) |θ − m|² over the current moving averages m.
struct Posterior {
  Vec mean = Vec::Zero();
  template <class Theta, class Grad>
  void gradient(const Theta& th, Grad& g) const noexcept {
    g = (kReadings / (kSigma * kSigma)) * (th - mean);
  }
};

/// Everything the interrupt owns: its own generator (the sensor simulation), the true biases,
/// the model, the chain, and the statistics. The main loop owns the refill generator.
struct Loop {
  sgmcmc::cortex_m::Rng sensor_rng{11};
  Vec bias = Vec::Constant(0.5f);
  Posterior model;
  Sampler sampler;
  Sampler::State z;
  sgmcmc::NoiseQueue<Sampler, 2> queue;
  volatile std::uint32_t ticks = 0;
  std::uint32_t target = 0;
  std::uint32_t misses = 0;     // the next interrupt was already pending when a tick ended
  std::uint32_t not_ready = 0;  // NoiseNotReady: the main loop did not refill in time
  std::uint32_t failures = 0;   // any other failed Status
  std::uint32_t worst = 0;      // SysTick ticks from the period's start to the tick's end
  double sq_error = 0.0;        // Σ |θ − b|² over the ticks after the first 1000
  std::uint32_t errors = 0;
};
Loop g_loop;

/// One control period: read the sensors, update the moving averages, tick the sampler.
void control_tick() {
  Loop& s = g_loop;
  if (s.ticks >= s.target) return;
  float eps[2 * kSensors];
  s.sensor_rng.fill_normal(eps, 2 * kSensors);
  for (int i = 0; i < kSensors; ++i) {
    s.bias[i] += kDrift * eps[i];
    const float y = s.bias[i] + kSigma * eps[kSensors + i];
    s.model.mean[i] += (y - s.model.mean[i]) / kReadings;
  }
  const sgmcmc::Status st = s.queue.tick(s.sampler, s.z, s.model);
  if (st.code == sgmcmc::StatusCode::NoiseNotReady) {
    ++s.not_ready;
  } else if (!st) {
    ++s.failures;
  }
  if (s.ticks >= 1000) {
    s.sq_error += static_cast<double>((s.z.position() - s.bias).squaredNorm());
    ++s.errors;
  }
  // Elapsed since the period began (the counter reloaded at the interrupt), and whether the next
  // period's interrupt is already pending: a missed deadline.
  const std::uint32_t elapsed = reg(kSystRvr) - reg(kSystCvr);
  if (elapsed > s.worst) s.worst = elapsed;
  if ((reg(kIcsr) & kPendStSet) != 0u) ++s.misses;
  s.ticks = s.ticks + 1u;
}

/// The SysTick handler. The count markers (no-ops unless run by scripts/cm4-count) bracket the
/// whole handler body: its exact instruction count per interrupt.
extern "C" void control_systick_handler() {
  count::start();
  control_tick();
  count::stop();
}

/// A RAM copy of the vector table with SysTick pointing at the control loop (VTOR needs the
/// table aligned to its size rounded up to a power of two: 48 entries, 256 bytes).
alignas(256) std::uint32_t g_vectors[48];

void install_handler() {
  std::memcpy(g_vectors, reinterpret_cast<const void*>(reg(kVtor)), sizeof g_vectors);
  g_vectors[15] = reinterpret_cast<std::uint32_t>(&control_systick_handler);
  asm volatile("dsb" ::: "memory");
  reg(kVtor) = reinterpret_cast<std::uint32_t>(g_vectors);
  asm volatile("dsb\n\tisb" ::: "memory");
}

/// Runs `ticks` control periods of `period` instructions (a multiple of 40); the main loop
/// refills the queue and sleeps until the next interrupt.
void run(std::uint32_t period, std::uint32_t ticks) {
  Loop& s = g_loop;
  s.target = ticks;
  sgmcmc::cortex_m::Rng noise_rng(23);  // owned by the main loop: the producer's generator
  s.queue.refill_all(noise_rng);
  reg(kSystCsr) = 0u;
  reg(kSystRvr) = period / kInstructionsPerSysTick - 1u;
  reg(kSystCvr) = 0u;
  reg(kSystCsr) = 0x7u;  // processor clock, interrupt, enable
  while (s.ticks < ticks) {
    s.queue.refill_all(noise_rng);
    asm volatile("wfi" ::: "memory");
  }
  reg(kSystCsr) = 0u;
}

void reset_stats() {
  Loop& s = g_loop;
  s.ticks = 0;
  s.misses = s.not_ready = s.failures = s.worst = s.errors = 0;
  s.sq_error = 0.0;
}

}  // namespace

int main() {
  Loop& s = g_loop;
  Sampler::Params p;
  p.step_size = 2e-5f;  // h · n/σ² = 0.2: stable, mixes in about 10 ticks
  s.sampler = Sampler(p);
  if (!s.sampler.start(s.z, Vec::Constant(0.5f))) return 1;
  install_handler();

  constexpr std::uint32_t kPeriod = 4000;  // instructions per control period
  constexpr std::uint32_t kTicks = 100000;
  run(kPeriod, kTicks);
  const std::uint32_t worst = s.worst * kInstructionsPerSysTick;
  const double rms = std::sqrt(s.sq_error / (s.errors * double(kSensors)));
  // Posterior sd σ/√n = 0.01 per coordinate; the moving average lags a random walk by about
  // kDrift·√(n/2) ≈ 0.014 and adds its own noise σ/√(2n) ≈ 0.007: about 0.02 in all.
  const double bound = 3.0 * 0.01 + 0.014 + 0.007;
  Line() << "control loop: " << s.ticks << " ticks of " << kPeriod
         << " instructions (SGLD, d = " << kSensors << ", SysTick under -icount shift=0)\n";
  Line() << "  deadline misses " << s.misses << ", noise not ready " << s.not_ready
         << ", failed steps " << s.failures << '\n';
  Line() << "  worst tick (interrupt entry, sensors, step) " << worst << " instructions (+-"
         << kInstructionsPerSysTick << "), headroom " << (kPeriod - worst) * 100 / kPeriod
         << " % of the period\n";
  Line().decimals(4) << "  tracking: RMS |theta - bias| per sensor " << rms << " (bound " << bound
                     << ")\n";
  const bool nominal =
      s.ticks == kTicks && s.misses == 0 && s.not_ready == 0 && s.failures == 0 && rms < bound;

  // Negative control: a period shorter than one tick must miss deadlines.
  reset_stats();
  constexpr std::uint32_t kShort = 400;
  run(kShort, 1000);
  Line() << "negative control: period " << kShort << " instructions, " << s.ticks
         << " ticks: deadline misses " << s.misses << '\n';
  const bool control = s.misses > 0;
  Line() << (nominal && control ? "PASS" : "FAILED") << '\n';
  return nominal && control ? 0 : 1;
}
