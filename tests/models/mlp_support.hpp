// SPDX-License-Identifier: MIT
// Test support for the 784-100-10 network: synthetic FashionMNIST-like images, parameters of a
// realistic scale, Eigen maps over caller-owned vectors, and a naive double-precision reference
// of the model's definition (written from docs/models/mlp.md, independent of the kernels).
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "local_rng.hpp"
#include "sgmcmc/models/mlp.hpp"

namespace mlp_test {

constexpr int kDim = 79510;
constexpr int kPixels = 784;
constexpr int kHidden = 100;
constexpr int kClasses = 10;
constexpr int kW1 = 0;
constexpr int kB1 = 78400;
constexpr int kW2 = 78500;
constexpr int kB2 = 79500;

template <class S>
using Map = Eigen::Map<Eigen::Matrix<S, kDim, 1>>;
template <class S>
using ConstMap = Eigen::Map<const Eigen::Matrix<S, kDim, 1>>;

/// Uniform in [0, 1) from the top 53 bits.
inline double uniform(sgmcmc_test::LocalRng& rng) {
  return double(rng() >> 11) * 0x1p-53;
}

/// Standard normal by Box–Muller (test-local, so the data are the same with any standard library).
inline double normal(sgmcmc_test::LocalRng& rng) {
  const double u = 1.0 - uniform(rng);
  return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * uniform(rng));
}

/// `rows` images whose pixels are 0 with probability one half (FashionMNIST's share of
/// background), otherwise uniform in 1..255, and labels uniform in 0..9.
struct Images {
  std::vector<std::uint8_t> pixels;
  std::vector<std::uint8_t> labels;
  std::size_t rows;

  Images(std::size_t rows_, std::uint64_t seed) : rows(rows_) {
    sgmcmc_test::LocalRng rng(seed);
    pixels.resize(rows * kPixels);
    labels.resize(rows);
    for (auto& p : pixels) p = uniform(rng) < 0.5 ? 0 : std::uint8_t(1 + rng() % 255);
    for (auto& y : labels) y = std::uint8_t(rng() % kClasses);
  }
};

/// θ with W1 ~ N(0, 0.05²) (hidden pre-activations of order 1 on these images), b1, b2 ~
/// N(0, 0.1²) and W2 ~ N(0, 0.3²).
inline std::vector<double> parameters(std::uint64_t seed) {
  sgmcmc_test::LocalRng rng(seed);
  std::vector<double> t(kDim);
  for (int i = 0; i < kDim; ++i) {
    const double sd = i < kB1 ? 0.05 : i < kW2 ? 0.1 : i < kB2 ? 0.3 : 0.1;
    t[std::size_t(i)] = sd * normal(rng);
  }
  return t;
}

template <class To>
std::vector<To> cast(const std::vector<double>& v) {
  return std::vector<To>(v.begin(), v.end());
}

/// The model's definition, directly: logits of image i, from the θ layout of docs/models/mlp.md.
inline void reference_logits(const std::vector<double>& t, const std::uint8_t* image, bool relu,
                             double (&z)[kClasses], double (&a)[kHidden]) {
  double h[kHidden];
  for (int i = 0; i < kHidden; ++i) {
    a[i] = t[std::size_t(kB1 + i)];
    for (int j = 0; j < kPixels; ++j) {
      a[i] += t[std::size_t(kW1 + j * kHidden + i)] * (double(image[j]) / 255.0);
    }
    h[i] = relu ? (a[i] > 0 ? a[i] : 0.0) : 1.0 / (1.0 + std::exp(-a[i]));
  }
  for (int c = 0; c < kClasses; ++c) {
    z[c] = t[std::size_t(kB2 + c)];
    for (int i = 0; i < kHidden; ++i) z[c] += t[std::size_t(kW2 + c * kHidden + i)] * h[i];
  }
}

/// −log p(y | x, θ) of one image.
inline double reference_nll(const std::vector<double>& t, const std::uint8_t* image, int y,
                            bool relu) {
  double z[kClasses], a[kHidden];
  reference_logits(t, image, relu, z, a);
  double m = z[0];
  for (double v : z) m = v > m ? v : m;
  double s = 0;
  for (double v : z) s += std::exp(v - m);
  return std::log(s) + m - z[y];
}

/// Σ_k λ_k ‖θ_k‖² / 2 with the given precisions.
inline double reference_prior(const std::vector<double>& t, const double (&lambda)[4]) {
  const int bounds[5] = {kW1, kB1, kW2, kB2, kDim};
  double u = 0;
  for (int k = 0; k < 4; ++k) {
    for (int i = bounds[k]; i < bounds[k + 1]; ++i) {
      u += 0.5 * lambda[k] * t[std::size_t(i)] * t[std::size_t(i)];
    }
  }
  return u;
}

}  // namespace mlp_test
