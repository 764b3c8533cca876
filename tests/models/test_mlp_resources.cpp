// SPDX-License-Identifier: MIT
// The 784-100-10 network's resources: no heap in any pass (every kernel), and a small stack,
// measured by painting the stack of a thread that runs the passes (with a negative control that
// shows the measurement sees a large frame).
#include <doctest/doctest.h>
#include <pthread.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "alloc_counter.hpp"
#include "mlp_support.hpp"
#include "sgmcmc/data/minibatch.hpp"
#include "sgmcmc/models/mlp.hpp"

using sgmcmc::MlpKernel;
using namespace mlp_test;

namespace {

constexpr int kCap = 16;
using NetF = sgmcmc::BayesianMLP<float, kCap>;
using NetD = sgmcmc::BayesianMLP<double, kCap>;

// Everything a training or evaluation loop calls: a batch draw, gradient, potentials, predict.
template <class Net, class S, class Rng>
void every_pass(Net& net, sgmcmc::MinibatchSampler<kCap>& batches, Rng& rng,
                const std::vector<S>& theta, std::vector<S>& g, const std::uint8_t* pixels,
                S* probs) {
  ConstMap<S> tm(theta.data());
  Map<S> gm(g.data());
  batches.next(rng, net.batch());
  net.gradient(tm, gm);
  (void)net.batch_potential_and_gradient(tm, gm);
  (void)net.batch_potential(tm);
  (void)net.potential(tm);
  (void)net.predict(tm, pixels, 0, kCap, probs);
}

// Stack use of f() on a thread whose stack we provide, painted with a byte pattern: the bytes
// the pattern no longer covers, counted from the low end the stack grows towards.
template <class F>
std::size_t stack_bytes_used(F&& f, std::size_t stack_size) {
  std::vector<unsigned char> stack(stack_size, 0xA5);  // allocated before anything is measured
  struct Job {
    F* f;
    static void* run(void* self) {
      (*static_cast<Job*>(self)->f)();
      return nullptr;
    }
  } job{&f};
  pthread_attr_t attr;
  REQUIRE(pthread_attr_init(&attr) == 0);
  REQUIRE(pthread_attr_setstack(&attr, stack.data(), stack.size()) == 0);
  pthread_t thread;
  REQUIRE(pthread_create(&thread, &attr, &Job::run, &job) == 0);
  REQUIRE(pthread_join(thread, nullptr) == 0);
  pthread_attr_destroy(&attr);
  std::size_t untouched = 0;
  while (untouched < stack.size() && stack[untouched] == 0xA5) ++untouched;
  return stack.size() - untouched;
}

}  // namespace

// Data, parameters and buffers of both precisions, allocated before anything is measured.
struct Fixture {
  Images data{100, 11};
  std::vector<std::uint32_t> order = std::vector<std::uint32_t>(data.rows);
  sgmcmc_test::LocalRng rng{12};
  std::vector<double> theta = parameters(13);
  std::vector<float> theta_f = cast<float>(theta);
  std::vector<double> g = std::vector<double>(kDim);
  std::vector<float> gf = std::vector<float>(kDim);
  std::vector<double> probs = std::vector<double>(kCap * kClasses);
  std::vector<float> probs_f = std::vector<float>(kCap * kClasses);
  std::unique_ptr<NetD::Workspace> ws = std::make_unique<NetD::Workspace>();
  std::unique_ptr<NetF::Workspace> ws_f = std::make_unique<NetF::Workspace>();
  sgmcmc::MinibatchSampler<kCap> batches{order.data(), data.rows, kCap};
};

TEST_CASE_FIXTURE(Fixture, "no pass allocates, with any kernel, in float and double") {
  NetD net(data.pixels.data(), data.labels.data(), data.rows, *ws);
  REQUIRE(net.valid());
  {
    sgmcmc_test::AllocationScope scope;
    for (int k = 0; k < 3; ++k)
      every_pass(net, batches, rng, theta, g, data.pixels.data(), probs.data());
    CHECK(scope.count() == 0);
  }
  for (MlpKernel kernel : {MlpKernel::Portable, MlpKernel::Avx2, MlpKernel::Avx512}) {
    if (!sgmcmc::mlp_kernel_available<float>(kernel)) continue;
    CAPTURE(int(kernel));
    NetF net_f(data.pixels.data(), data.labels.data(), data.rows, *ws_f, kernel);
    REQUIRE(net_f.valid());
    sgmcmc_test::AllocationScope scope;
    for (int k = 0; k < 3; ++k) {
      every_pass(net_f, batches, rng, theta_f, gf, data.pixels.data(), probs_f.data());
    }
    CHECK(scope.count() == 0);
  }
#ifdef SGMCMC_TEST_COUNTS_MALLOC
  // The counter itself works: a vector allocates.
  sgmcmc_test::AllocationScope scope;
  std::vector<int> v(10);
  CHECK(scope.count() >= 1);
#endif
}

TEST_CASE_FIXTURE(
    Fixture, "every pass runs in a few kilobytes of stack; the measurement sees a large frame") {
  constexpr std::size_t kStack = 256 * 1024;
  constexpr std::size_t kLimit = 16 * 1024;  // what the passes may use, libc calls included

  NetD net(data.pixels.data(), data.labels.data(), data.rows, *ws);
  const std::size_t used_d = stack_bytes_used(
      [&] { every_pass(net, batches, rng, theta, g, data.pixels.data(), probs.data()); }, kStack);
  MESSAGE("double, portable: " << used_d << " bytes of stack");
  CHECK(used_d > 0);
  CHECK(used_d <= kLimit);
  for (MlpKernel kernel : {MlpKernel::Portable, MlpKernel::Avx2, MlpKernel::Avx512}) {
    if (!sgmcmc::mlp_kernel_available<float>(kernel)) continue;
    NetF net_f(data.pixels.data(), data.labels.data(), data.rows, *ws_f, kernel);
    const std::size_t used = stack_bytes_used(
        [&] { every_pass(net_f, batches, rng, theta_f, gf, data.pixels.data(), probs_f.data()); },
        kStack);
    MESSAGE("float, kernel " << int(kernel) << ": " << used << " bytes of stack");
    CHECK(used <= kLimit);
  }

  // Negative control: a 64 KiB frame is seen as at least 64 KiB.
  const std::size_t big = stack_bytes_used(
      [] {
        volatile unsigned char frame[64 * 1024];
        for (std::size_t i = 0; i < sizeof frame; i += 512) frame[i] = 1;
        (void)frame[0];
      },
      kStack);
  CHECK(big >= 64 * 1024);
  CHECK(big > kLimit);
}
