// SPDX-License-Identifier: MIT
// The run driver (DESIGN §4, issue 12), written once on the sampler interface: burn-in, thinning,
// a sink the caller supplies, hooks before and after every step (minibatch draws, diagnostics,
// progress through the port's clock), and step-size schedules. Heap-free, noexcept.
#pragma once

#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "sgmcmc/core/status.hpp"
#include "sgmcmc/core/types.hpp"
#include "sgmcmc/port/clock.hpp"

namespace sgmcmc {

/// What a run does: plan.burn_in steps whose states are not kept, then plan.samples kept states,
/// one every plan.thin steps (the last step of each group of thin).
struct RunPlan {
  std::uint64_t burn_in = 0;
  std::uint64_t samples = 0;
  std::uint64_t thin = 1;  ///< ≥ 1

  /// Every step the plan takes.
  constexpr std::uint64_t total_steps() const noexcept { return burn_in + samples * thin; }
};

/// What a run did.
struct RunResult {
  Status status;                ///< Ok, the failed step's status, or InvalidParameter (thin = 0)
  std::uint64_t steps = 0;      ///< successful steps
  std::uint64_t kept = 0;       ///< states passed to the sink
  std::uint64_t failed_at = 0;  ///< index of the failed step (when status is not Ok)
  bool stopped = false;         ///< the sink or a hook asked to stop early
};

/// No hooks.
struct NoHooks {};

namespace detail {
template <class H, class = void>
struct HasBeforeStep : std::false_type {};
template <class H>
struct HasBeforeStep<H, std::void_t<decltype(std::declval<H&>().before_step(std::uint64_t{}))>>
    : std::true_type {};
template <class H, class St, class = void>
struct HasAfterStep : std::false_type {};
template <class H, class St>
struct HasAfterStep<H, St,
                    std::void_t<decltype(std::declval<H&>().after_step(
                        std::uint64_t{}, std::declval<const St&>()))>> : std::true_type {};

/// Calls f(args...); a bool result is returned, any other result (void) counts as true.
template <class F, class... A>
bool call_continue(F& f, A&&... a) noexcept {
  if constexpr (std::is_same_v<decltype(f(std::forward<A>(a)...)), bool>) {
    return f(std::forward<A>(a)...);
  } else {
    f(std::forward<A>(a)...);
    return true;
  }
}
template <class H, class St>
bool after_step(H& hooks, std::uint64_t t, const St& z) noexcept {
  if constexpr (HasAfterStep<H, St>::value) {
    if constexpr (std::is_same_v<decltype(hooks.after_step(t, z)), bool>) {
      return hooks.after_step(t, z);
    } else {
      hooks.after_step(t, z);
    }
  }
  static_cast<void>(hooks);
  static_cast<void>(t);
  static_cast<void>(z);
  return true;
}

template <class Sampler, class St, class Model, class Rng, class Sink, class Hooks, class Before>
RunResult run_impl(const Sampler& sampler, St& z, const Model& model, Rng& rng, const RunPlan& plan,
                   Sink& sink, Hooks& hooks, Before&& before) noexcept {
  RunResult r;
  if (plan.thin == 0) {
    r.status = StatusCode::InvalidParameter;
    return r;
  }
  const std::uint64_t total = plan.total_steps();
  for (std::uint64_t t = 0; t < total; ++t) {
    before(t);
    if constexpr (HasBeforeStep<Hooks>::value) hooks.before_step(t);
    if (Status s = sampler.step(z, model, rng); !s) {
      r.status = s;
      r.failed_at = t;
      return r;
    }
    ++r.steps;
    bool go_on = after_step(hooks, t, z);
    if (t >= plan.burn_in && (t - plan.burn_in + 1) % plan.thin == 0) {
      go_on = call_continue(sink, static_cast<const St&>(z), r.kept) && go_on;
      ++r.kept;
    }
    if (!go_on) {
      r.stopped = true;
      return r;
    }
  }
  return r;
}
}  // namespace detail

/// Runs the plan on z: before every step hooks.before_step(t) (e.g. draw this step's minibatch),
/// then sampler.step(z, model, rng), then hooks.after_step(t, z) (diagnostics, progress); after
/// the burn-in every thin-th state goes to sink(z, k), k = 0, 1, .... The sink and after_step
/// may return false to stop early (RunResult::stopped). The run stops at the first failed step,
/// whose status it returns; z is then the state before that step (steps leave z unchanged on
/// failure). Hooks is any object with some of those members (NoHooks: none).
template <class Sampler, class St, class Model, class Rng, class Sink, class Hooks = NoHooks>
RunResult run(const Sampler& sampler, St& z, const Model& model, Rng& rng, const RunPlan& plan,
              Sink&& sink, Hooks&& hooks = Hooks{}) noexcept {
  return detail::run_impl(sampler, z, model, rng, plan, sink, hooks, [](std::uint64_t) {});
}

/// As run(), with the step size h_t = schedule(t) set before every step t where it changes
/// (sampler.set_step_size: it re-validates, so a schedule that leaves the valid range stops the
/// run with that status). A schedule is any value with Scalar operator()(std::uint64_t) const
/// (schedule/schedules.hpp).
template <class Sampler, class Schedule, class St, class Model, class Rng, class Sink,
          class Hooks = NoHooks>
RunResult run_scheduled(Sampler& sampler, const Schedule& schedule, St& z, const Model& model,
                        Rng& rng, const RunPlan& plan, Sink&& sink,
                        Hooks&& hooks = Hooks{}) noexcept {
  using Scalar = typename Sampler::Scalar;
  Status schedule_status;
  Scalar current = sampler.step_size();
  auto before = [&](std::uint64_t t) {
    const Scalar h = Scalar(schedule(t));
    if (h != current) {
      schedule_status = sampler.set_step_size(h);
      current = h;
    }
  };
  RunResult r = detail::run_impl(sampler, z, model, rng, plan, sink, hooks, before);
  if (!schedule_status && !r.status) r.status = schedule_status;
  return r;
}

// ------------------------------------------------------------------------------------- sinks

/// A sink that keeps nothing (burn-in only, or hooks that do the work).
struct DiscardSink {
  template <class St>
  void operator()(const St&, std::uint64_t) const noexcept {}
};

/// Keeps the positions of the kept states in caller-owned memory: capacity rows of Dim scalars,
/// row-major (row k is sample k). Stops the run when full.
template <class Scalar, int Dim>
class PositionTrace {
 public:
  /// memory: capacity · Dim scalars, kept alive by the caller.
  PositionTrace(Scalar* memory, std::uint64_t capacity) noexcept
      : memory_(memory), capacity_(capacity) {}

  template <class St>
  bool operator()(const St& z, std::uint64_t) noexcept {
    if (size_ >= capacity_) return false;
    Scalar* row = memory_ + size_ * std::uint64_t(Dim);
    const auto p = z.position();
    for (Index i = 0; i < Dim; ++i) row[i] = p[i];
    ++size_;
    return size_ < capacity_;
  }
  std::uint64_t size() const noexcept { return size_; }
  std::uint64_t capacity() const noexcept { return capacity_; }
  /// Sample k (k < size()). Rows are packed (Dim scalars apart), so the view assumes no alignment.
  UnalignedMap<Scalar, Dim> operator[](std::uint64_t k) const noexcept {
    return UnalignedMap<Scalar, Dim>(memory_ + k * std::uint64_t(Dim));
  }
  const Scalar* data() const noexcept { return memory_; }

 private:
  Scalar* memory_;
  std::uint64_t capacity_;
  std::uint64_t size_ = 0;
};

/// A PositionTrace with its own fixed-size storage (small Capacity · Dim).
template <class Scalar, int Dim, int Capacity>
class OwnedPositionTrace : public PositionTrace<Scalar, Dim> {
 public:
  OwnedPositionTrace() noexcept : PositionTrace<Scalar, Dim>(storage_, Capacity) {}
  OwnedPositionTrace(const OwnedPositionTrace&) = delete;
  OwnedPositionTrace& operator=(const OwnedPositionTrace&) = delete;

 private:
  Scalar storage_[std::size_t(Capacity) * Dim] = {};
};

/// Streams the kept positions into any accumulators with push(x): e.g. Welford (mean and
/// variance) and BatchMeansESS (diagnostics/). x is the position as a Vector (small Dim).
template <class... Accumulators>
class StreamingSink {
 public:
  explicit StreamingSink(Accumulators&... acc) noexcept : acc_(&acc...) {}
  template <class St>
  void operator()(const St& z, std::uint64_t) noexcept {
    using Vec = Vector<typename St::Scalar, St::dim>;
    const Vec x = z.position();
    std::apply([&](auto*... a) { (a->push(x), ...); }, acc_);
  }

 private:
  std::tuple<Accumulators*...> acc_;
};

/// Both sinks, in order (the run stops if either asks to).
template <class A, class B>
struct BothSinks {
  A& a;
  B& b;
  template <class St>
  bool operator()(const St& z, std::uint64_t k) noexcept {
    const bool x = detail::call_continue(a, z, k);
    const bool y = detail::call_continue(b, z, k);
    return x && y;
  }
};
template <class A, class B>
BothSinks<A, B> both(A& a, B& b) noexcept {
  return {a, b};
}

// ------------------------------------------------------------------------------------- progress

/// A hook that reports progress through a port clock (clock.hpp) at most `rate` times a second:
/// it calls report(done_steps, total_steps, elapsed_seconds) and says nothing itself (the core
/// never prints; the host port's ProgressBar prints this to stderr).
template <class Clock, class Report>
class Progress {
 public:
  Progress(std::uint64_t total_steps, Report report, double rate = 10.0) noexcept
      : total_(total_steps), report_(report) {
    check_clock<Clock>();
    start_ = Clock::ticks();
    const double per_second = rate > 0 ? rate : 10.0;
    interval_ = static_cast<std::uint64_t>(double(Clock::ticks_per_second()) / per_second);
    next_ = start_ + interval_;
  }
  template <class St>
  void after_step(std::uint64_t t, const St&) noexcept {
    const bool last = t + 1 == total_;
    // The clock is read once every 64 steps at most: a step may cost nanoseconds.
    if (!last && (t & 63U) != 0) return;
    const std::uint64_t now = Clock::ticks();
    if (!last && now < next_) return;
    next_ = now + interval_;
    report_(t + 1, total_, double(now - start_) / double(Clock::ticks_per_second()));
  }

 private:
  std::uint64_t total_;
  Report report_;
  std::uint64_t start_ = 0;
  std::uint64_t interval_ = 0;
  std::uint64_t next_ = 0;
};

/// Both hook objects, in order (before_step and after_step of each, where they exist).
template <class A, class B>
struct BothHooks {
  A& a;
  B& b;
  void before_step(std::uint64_t t) noexcept {
    if constexpr (detail::HasBeforeStep<A>::value) a.before_step(t);
    if constexpr (detail::HasBeforeStep<B>::value) b.before_step(t);
  }
  template <class St>
  bool after_step(std::uint64_t t, const St& z) noexcept {
    const bool x = detail::after_step(a, t, z);
    const bool y = detail::after_step(b, t, z);
    return x && y;
  }
};
template <class A, class B>
BothHooks<A, B> both_hooks(A& a, B& b) noexcept {
  return {a, b};
}

}  // namespace sgmcmc
