// SPDX-License-Identifier: MIT
// A oneTBB executor for Chains::run_with (parallel/chains.hpp): the chains as tasks of a
// task_arena of a given size. Needs oneTBB (Debian libtbb-dev, CMake TBB::tbb).
#pragma once

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

namespace sgmcmc {

/// Runs f(k) for k in [begin, end) on `threads` TBB workers (≤ 0: TBB's default), one chain per
/// task. The chains' results do not depend on it (parallel/chains.hpp); only the speed does.
struct TbbExecutor {
  int threads = 0;

  template <class F>
  void operator()(int begin, int end, const F& f) const noexcept {
    tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
    arena.execute([&] { tbb::parallel_for(begin, end, [&](int k) { f(k); }); });
  }
};

}  // namespace sgmcmc
