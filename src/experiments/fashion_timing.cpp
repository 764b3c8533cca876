// SPDX-License-Identifier: MIT
// One-thread epoch time of the 784-100-10 network (models/mlp.hpp) on FashionMNIST: the minibatch
// gradient and an update per batch, the work PyTorch's epoch does in scripts/fashion-torch-timing.
// The update is a plain SGD-with-momentum loop (--step raw), or the library's SGDMomentum or SGHMC
// sampler step on a StateMap over static memory (--step sgd-momentum, sghmc). A benchmark: it
// prints times and decides nothing.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "data/idx.hpp"
#include "sgmcmc/data/minibatch.hpp"
#include "sgmcmc/host/rng.hpp"
#include "sgmcmc/models/mlp.hpp"
#include "sgmcmc/samplers/sgd.hpp"
#include "sgmcmc/samplers/sghmc.hpp"

namespace {

constexpr int kCapacity = 500;
using Model = sgmcmc::BayesianMLP<float, kCapacity>;
using Vec = Eigen::Matrix<float, Model::Dim, 1>;
using MomentumSampler = sgmcmc::SGDMomentum<float, Model::Dim>;
using SGHMCSampler = sgmcmc::SGHMC<float, Model::Dim>;

// The samplers' states: caller-owned static memory (two copies of (θ, r) and the gradient).
constexpr int kStateSize =
    MomentumSampler::StateMap::storage_size > SGHMCSampler::StateMap::storage_size
        ? MomentumSampler::StateMap::storage_size
        : SGHMCSampler::StateMap::storage_size;
alignas(sgmcmc::kAlignBytes) float g_state[kStateSize];

/// The network on the batch drawn before each step.
struct BatchModel {
  Model* net;
  template <class Theta, class Grad>
  void gradient(const Theta& theta, Grad& g) const noexcept {
    net->gradient(theta, g);
  }
};

constexpr const char* kUsage =
    "usage: sgmcmc_fashion_timing [--batch N] [--epochs E] [--kernel K] [--step S] [--data DIR]\n"
    "  --batch N    images per batch, 1..500 (default 500)\n"
    "  --step S     raw (a momentum loop beside the gradient, default), sgd-momentum or sghmc\n"
    "               (the library's sampler step, state in static memory)\n"
    "  --epochs E   timed epochs (default 5); the median is reported\n"
    "  --kernel K   auto, portable, avx2 or avx512 (default auto)\n"
    "  --data DIR   FashionMNIST directory (default /usr/share/datasets/fashion-mnist)\n"
    "Prints one line: batch, kernel, the median epoch (process CPU time, which other processes\n"
    "on a shared machine disturb less than wall time) in seconds and ns per image, and the\n"
    "median wall time.\n";

// CPU time of this process in seconds.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

const char* kernel_name(sgmcmc::MlpKernel k) {
  switch (k) {
    case sgmcmc::MlpKernel::Avx512:
      return "avx512";
    case sgmcmc::MlpKernel::Avx2:
      return "avx2";
    case sgmcmc::MlpKernel::Portable:
      return "portable";
    default:
      return "auto";
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t batch_size = 500;
  std::uint64_t epochs = 5;
  std::string kernel_arg = "auto";
  std::string step_arg = "raw";
  std::string dir = sgmcmc::data::kFashionMnistDir;
  sgmcmc::common::Args args(argc, argv, "sgmcmc_fashion_timing", kUsage);
  while (args.next()) {
    if (args.count("--batch", batch_size, 1)) {
    } else if (args.count("--epochs", epochs, 1)) {
    } else if (args.text("--kernel", kernel_arg)) {
    } else if (args.text("--step", step_arg)) {
    } else if (args.text("--data", dir)) {
    } else {
      args.unknown();
    }
  }
  sgmcmc::MlpKernel kernel = sgmcmc::MlpKernel::Auto;
  if (args.status() == 0) {
    if (batch_size > std::uint64_t(kCapacity)) args.fail("--batch must lie in 1..500");
    if (kernel_arg == "portable") {
      kernel = sgmcmc::MlpKernel::Portable;
    } else if (kernel_arg == "avx2") {
      kernel = sgmcmc::MlpKernel::Avx2;
    } else if (kernel_arg == "avx512") {
      kernel = sgmcmc::MlpKernel::Avx512;
    } else if (kernel_arg != "auto") {
      args.fail("--kernel must be auto, portable, avx2 or avx512");
    }
    if (step_arg != "raw" && step_arg != "sgd-momentum" && step_arg != "sghmc") {
      args.fail("--step must be raw, sgd-momentum or sghmc");
    }
  }
  if (args.status() != 0) return args.status() == 1 ? 0 : 2;

  const sgmcmc::data::IdxPairResult train = sgmcmc::data::load_fashion_mnist(dir, true);
  if (!train.ok) {
    std::fprintf(stderr, "sgmcmc_fashion_timing: %s\n", train.error.c_str());
    return 1;
  }
  const std::size_t n_rows = train.images.count;

  // Scratch, parameters and momentum: allocated once, before any timing.
  auto ws = std::make_unique<Model::Workspace>();
  std::vector<float> theta(Model::Dim), grad(Model::Dim), velocity(Model::Dim, 0.0f);
  std::mt19937_64 rng(20140601);
  std::normal_distribution<float> init(0.0f, 0.01f);  // the SGHMC authors' init_sigma
  for (float& v : theta) v = init(rng);
  Eigen::Map<const Vec> theta_map(theta.data());
  Eigen::Map<Vec> grad_map(grad.data());

  Model model(train.images.pixels.data(), train.labels.labels.data(), n_rows, *ws, kernel);
  if (!model.valid()) {
    std::fprintf(stderr, "sgmcmc_fashion_timing: kernel %s is not available here\n",
                 kernel_arg.c_str());
    return 1;
  }
  std::vector<std::uint32_t> order(n_rows);
  sgmcmc::MinibatchSampler<kCapacity> batches(order.data(), n_rows, batch_size);
  const std::size_t steps = n_rows / batch_size;  // one epoch: every image once (N/n batches)
  const float lr = 1e-6f;
  const float momentum = 0.9f;

  // The same update through the library: SGD with momentum (η, α = 1 − momentum) or SGHMC with
  // those (η, α) (h = √η, C = α/h, T = 1: the same work plus d normals per step).
  const MomentumSampler momentum_sampler({lr, 1.0f - momentum});
  const SGHMCSampler sghmc_sampler(
      sgmcmc::SGHMCParams<float>::from_momentum_sgd(lr, 1.0f - momentum));
  MomentumSampler::StateMap zm(g_state);
  SGHMCSampler::StateMap zh(g_state);
  const BatchModel batch_model{&model};
  sgmcmc::host::Rng noise_rng(20140601, 1);
  const int step_kind = step_arg == "raw" ? 0 : step_arg == "sgd-momentum" ? 1 : 2;
  if (step_kind == 1) static_cast<void>(momentum_sampler.start(zm, theta_map));
  if (step_kind == 2) static_cast<void>(sghmc_sampler.start(zh, theta_map));

  std::vector<double> seconds;
  std::vector<double> wall;
  float checksum = 0;
  bool failed = false;
  for (std::uint64_t epoch = 0; epoch <= epochs; ++epoch) {  // epoch 0 warms up, untimed
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = cpu_seconds();
    for (std::size_t s = 0; s < steps; ++s) {
      batches.next(rng, model.batch());
      if (step_kind == 1) {
        failed = failed || !momentum_sampler.step(zm, batch_model, noise_rng);
        continue;
      }
      if (step_kind == 2) {
        failed = failed || !sghmc_sampler.step(zh, batch_model, noise_rng);
        continue;
      }
      model.gradient(theta_map, grad_map);
      for (int i = 0; i < Model::Dim; ++i) {
        velocity[i] = momentum * velocity[i] - lr * grad[i];
        theta[i] += velocity[i];
      }
    }
    const double cpu = cpu_seconds() - cpu_start;
    const double dt =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (epoch > 0) {
      seconds.push_back(cpu);
      wall.push_back(dt);
    }
    checksum += step_kind == 0 ? theta[0] : step_kind == 1 ? zm.position()[0] : zh.position()[0];
  }
  if (failed) {
    std::fprintf(stderr, "sgmcmc_fashion_timing: a sampler step failed\n");
    return 1;
  }
  std::sort(seconds.begin(), seconds.end());
  std::sort(wall.begin(), wall.end());
  const double median = seconds[seconds.size() / 2];
  const double images = double(steps * batch_size);
  std::printf(
      "sgmcmc %s batch %llu kernel %s: epoch %.4f s, %.0f ns/image (CPU time, median of %zu;"
      " min %.4f s; wall %.4f s) [checksum %g]\n",
      step_arg.c_str(), static_cast<unsigned long long>(batch_size), kernel_name(model.kernel()),
      median, median / images * 1e9, seconds.size(), seconds.front(), wall[wall.size() / 2],
      double(checksum));
  return 0;
}
