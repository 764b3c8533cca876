// SPDX-License-Identifier: MIT
// Host progress bar for the run driver: sgmcmc::Progress on host::Clock, printed to stderr.
#pragma once

#include <cstdint>
#include <cstdio>

#include "sgmcmc/host/clock.hpp"
#include "sgmcmc/run/driver.hpp"

namespace sgmcmc::host {

/// Prints "label [#####.....]  50%  1.2 s, ETA 1.2 s" on one stderr line, rewritten in place, and
/// a newline when done.
struct ProgressBarReport {
  const char* label = "";
  void operator()(std::uint64_t done, std::uint64_t total, double seconds) const noexcept {
    constexpr int width = 30;
    const double f = total > 0 ? double(done) / double(total) : 1.0;
    char bar[width + 1];
    const int filled = static_cast<int>(f * width);
    for (int i = 0; i < width; ++i) bar[i] = i < filled ? '#' : '.';
    bar[width] = '\0';
    const double eta = f > 0 ? seconds * (1.0 - f) / f : 0.0;
    std::fprintf(stderr, "\r%s [%s] %3d%%  %.1f s, ETA %.1f s ", label, bar,
                 static_cast<int>(100.0 * f), seconds, eta);
    if (done >= total) std::fputc('\n', stderr);
    std::fflush(stderr);
  }
};

/// A run-driver hook: a progress bar for `total` steps, refreshed at most ten times a second.
using ProgressBar = Progress<Clock, ProgressBarReport>;

inline ProgressBar progress_bar(std::uint64_t total_steps, const char* label = "") noexcept {
  return ProgressBar(total_steps, ProgressBarReport{label});
}

}  // namespace sgmcmc::host
