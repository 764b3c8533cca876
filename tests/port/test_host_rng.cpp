// SPDX-License-Identifier: MIT
// host::Rng: contract, determinism, streams and jumps, the cache, the run-time kernel choice, and
// every kernel's accuracy against exact Box-Muller on the same random bits.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/host/rng.hpp"

namespace {

using sgmcmc::host::Rng;
namespace hd = sgmcmc::host::detail;

static_assert(sgmcmc::is_rng_v<Rng>);
static_assert(sgmcmc::HasFillNormal<Rng, float>::value);
static_assert(sgmcmc::HasFillNormal<Rng, double>::value);
static_assert(!sgmcmc::HasFillNormal<Rng, int>::value, "only float and double are offered");

template <class Scalar, int N>
bool same_bits(const Eigen::Matrix<Scalar, N, 1>& a, const Eigen::Matrix<Scalar, N, 1>& b) {
  return std::memcmp(a.data(), b.data(), sizeof(Scalar) * N) == 0;
}

// True when a and b give bit-identical words and float and double normals for a while.
bool same_draws(Rng a, Rng b) {
  for (int i = 0; i < 100; ++i) {
    if (a() != b()) return false;
  }
  Eigen::Matrix<float, 17, 1> fa, fb;
  Eigen::Matrix<double, 5, 1> da, db;
  for (int i = 0; i < 50; ++i) {
    a.fill_normal(fa);
    b.fill_normal(fb);
    a.fill_normal(da);
    b.fill_normal(db);
    if (!same_bits(fa, fb) || !same_bits(da, db)) return false;
  }
  return true;
}

bool words_differ(Rng a, Rng b) {
  int equal = 0;
  for (int i = 0; i < 100; ++i) equal += a() == b() ? 1 : 0;
  return equal == 0;
}

bool normals_differ(Rng a, Rng b) {
  Eigen::Matrix<float, 64, 1> fa, fb;
  a.fill_normal(fa);
  b.fill_normal(fb);
  int equal = 0;
  for (int i = 0; i < 64; ++i) equal += fa[i] == fb[i] ? 1 : 0;
  return equal == 0;
}

}  // namespace

TEST_CASE("reference values of the building blocks") {
  std::uint64_t sm = 0;
  CHECK(hd::splitmix64(sm) == 0xe220a8397b1dcdafULL);  // splitmix64 from state 0
  std::uint64_t s0 = 1, s1 = 2, s2 = 3, s3 = 4;
  CHECK(hd::xoshiro_next(s0, s1, s2, s3) == (5ULL << 23) + 1);  // rotl(1 + 4, 23) + 1
}

TEST_CASE("same seed and stream give bit-identical draws; others differ") {
  CHECK(same_draws(Rng(42), Rng(42)));
  CHECK(same_draws(Rng(42, 3), Rng(42, 3)));
  CHECK(words_differ(Rng(42), Rng(43)));
  CHECK(normals_differ(Rng(42), Rng(43)));
  CHECK(words_differ(Rng(42, 0), Rng(42, 1)));
  CHECK(normals_differ(Rng(42, 0), Rng(42, 1)));
  CHECK(normals_differ(Rng(42, 1), Rng(42, 2)));
}

TEST_CASE("jump changes the sequence and equals the next stream") {
  Rng a(42);
  a.jump();
  CHECK(words_differ(a, Rng(42)));
  CHECK(normals_differ(a, Rng(42)));
  CHECK(same_draws(a, Rng(42, 1)));
  a.jump();
  CHECK(same_draws(a, Rng(42, 2)));
}

TEST_CASE("jump discards cached normals") {
  Rng a(5);
  Eigen::Matrix<float, 3, 1> v;
  a.fill_normal(v);  // leaves cached normals
  a.jump();
  // b's lanes take the steps a's took (a's first fill made a cache of cache_size floats, one lane
  // step per block), but b has no cache: a matches b only if the jump dropped the 253 normals a
  // still held.
  Rng b(5, 1);
  float skip[Rng::cache_size];
  b.fill_normal(skip, Rng::cache_size);
  CHECK(same_draws(a, b));
}

TEST_CASE("the normal stream does not depend on how calls split it") {
  Rng a(11), b(11);
  float fa[1000];
  a.fill_normal(fa, 1000);
  float fb[1000];
  std::size_t at = 0;
  for (std::size_t n : {1, 3, 17, 32, 33, 5, 64, 100, 2, 7}) {
    b.fill_normal(fb + at, n);
    at += n;
  }
  b.fill_normal(fb + at, 1000 - at);
  CHECK(std::memcmp(fa, fb, sizeof fa) == 0);

  Rng c(12), d(12);
  Eigen::Matrix<double, 24, 1> whole;
  c.fill_normal(whole);
  Eigen::Matrix<double, 7, 1> part1;
  Eigen::Matrix<double, 17, 1> part2;
  d.fill_normal(part1);
  d.fill_normal(part2);
  CHECK(std::memcmp(whole.data(), part1.data(), sizeof(double) * 7) == 0);
  CHECK(std::memcmp(whole.data() + 7, part2.data(), sizeof(double) * 17) == 0);
}

TEST_CASE("operator() and fill_normal use separate generators") {
  Rng a(8), b(8);
  Eigen::Matrix<double, 9, 1> v;
  for (int i = 0; i < 100; ++i) {
    b.fill_normal(v);
    CHECK(a() == b());
  }
}

TEST_CASE("fill_normal writes exactly N elements, never past the end") {
  struct Guarded {
    float before;
    Eigen::Matrix<float, 5, 1> v;
    float after;
  } g{123.0f, Eigen::Matrix<float, 5, 1>::Zero(), 456.0f};
  Rng r(3);
  for (int i = 0; i < 100; ++i) r.fill_normal(g.v);
  CHECK(g.before == 123.0f);
  CHECK(g.after == 456.0f);
}

TEST_CASE("core dispatch uses the port's fill_normal") {
  Rng a(21), b(21);
  Eigen::Matrix<float, 6, 1> x, y;
  sgmcmc::fill_normal(a, x);
  b.fill_normal(y);
  CHECK(same_bits(x, y));
}

TEST_CASE("refill keeps the stream and makes the next small fills copies") {
  Rng a(31), b(31);
  float x[400], y[400];
  a.fill_normal(x, 200);
  b.fill_normal(y, 100);  // fewer than cache_size: a fresh cache, 100 of it used
  CHECK(b.cached<float>() == Rng::cache_size - 100);
  b.fill_normal(y + 100, 100);
  CHECK(b.cached<float>() == Rng::cache_size - 200);
  b.refill<float>();  // whole blocks behind the 56 still cached
  CHECK(b.cached<float>() == Rng::cache_size - 200 + 6 * Rng::block);
  b.refill<float>();  // no room for another block: unchanged
  CHECK(b.cached<float>() == Rng::cache_size - 200 + 6 * Rng::block);
  b.fill_normal(y + 200, 7);
  b.fill_normal(y + 207, 193);
  a.fill_normal(x + 200, 200);
  CHECK(std::memcmp(x, y, sizeof x) == 0);
  Rng c(32);
  c.refill<double>();  // from empty: a full cache
  CHECK(c.cached<double>() == Rng::cache_size);
  CHECK(c.cached<float>() == 0);
}

TEST_CASE_TEMPLATE("take_normals hands out the fill_normal stream in place", Scalar, float,
                   double) {
  Rng a(41), b(41);
  Scalar x[3000], y[3000];
  a.fill_normal(x, 3000);
  std::size_t at = 0;
  // Sizes that cross refills, take whole caches' worth and mix with fill_normal.
  for (std::size_t n : {1, 8, 8, 200, 225, 3, 17, 225, 64, 1, 225, 100, 0, 225, 32}) {
    const Scalar* p = b.template take_normals<Scalar>(n);
    REQUIRE(p != nullptr);
    std::memcpy(y + at, p, n * sizeof(Scalar));
    at += n;
    b.fill_normal(y + at, 5);
    at += 5;
  }
  CHECK(Rng::take_limit == Rng::cache_size - Rng::block + 1);
  // Too many: nullptr, nothing drawn.
  CHECK(b.template take_normals<Scalar>(Rng::take_limit + 1) == nullptr);
  b.fill_normal(y + at, 3000 - at);
  CHECK(std::memcmp(x, y, sizeof x) == 0);
  CHECK(sgmcmc::HasTakeNormals<Rng, Scalar>::value);
}

TEST_CASE("the kernel is chosen at run time and can be forced") {
  const sgmcmc::host::Isa best = Rng::best_isa();
  Rng r(1);
  CHECK(r.isa() == best);
  CHECK(Rng::supported(sgmcmc::host::Isa::Base));
  MESSAGE("best kernel on this machine: " << std::string(sgmcmc::host::to_string(best)));
  for (auto isa : {sgmcmc::host::Isa::Base, sgmcmc::host::Isa::Avx2, sgmcmc::host::Isa::Avx512}) {
    const bool ok = r.set_isa(isa);
    CHECK(ok == Rng::supported(isa));
    CHECK(r.isa() == (ok ? isa : r.isa()));
  }
  // Switching kernels does not move the stream: the same lanes make the next normals.
  Rng a(9), b(9);
  float x[64], y[64];
  a.fill_normal(x, 64);
  b.set_isa(sgmcmc::host::Isa::Base);
  b.fill_normal(y, 64);
  int close = 0;
  for (int i = 0; i < 64; ++i) close += std::fabs(x[i] - y[i]) < 1e-5f ? 1 : 0;
  CHECK(close == 64);
}

namespace {

/// The words lane j (0..15) gives at its next step, from a copy of the lane states.
void next_words(std::uint64_t (&lanes)[4][16], std::uint64_t (&w)[16]) {
  for (int j = 0; j < 16; ++j)
    w[j] = hd::xoshiro_next(lanes[0][j], lanes[1][j], lanes[2][j], lanes[3][j]);
}

/// Largest |kernel − exact Box-Muller| over `blocks` float blocks from r (exact: the same bits
/// through the kernel's documented layout, then maths in double, whose ~1e-16 rounding is far
/// below the float kernel's ~1e-7; long double would be software quad on AArch64). Each fill of
/// cache_size normals goes straight from the kernel (the cache stays empty).
double float_kernel_error(Rng& r, int blocks) {
  const double half_pi = 1.570796326794896619231321691639751442;
  constexpr int per_fill = Rng::cache_size / Rng::block;
  double worst = 0;
  std::uint64_t lanes[4][16];
  float all[Rng::cache_size];
  for (int b = 0; b < blocks; ++b) {
    if (b % per_fill == 0) {
      std::memcpy(lanes, r.lane_words(), sizeof lanes);
      r.fill_normal(all, Rng::cache_size);
    }
    std::uint64_t w[16];
    next_words(lanes, w);
    const float* out = all + Rng::block * (b % per_fill);
    for (int j = 0; j < 16; ++j) {
      // Radius word j: 32-bit half j % 2 (low first) of lane j / 2; angle word: same of lane 8 + j
      // / 2.
      const auto a = static_cast<std::uint32_t>(w[j / 2] >> (32 * (j % 2)));
      const auto c = static_cast<std::uint32_t>(w[8 + j / 2] >> (32 * (j % 2)));
      const float u1 =
          static_cast<float>(static_cast<std::int32_t>(a >> 1)) * 4.656612873077393e-10f +
          2.3283064365386963e-10f;  // rounded to float, as the kernel does
      const double rad = std::sqrt(-2.0 * std::log(static_cast<double>(u1)));
      const double frac = static_cast<double>((c >> 7) & 0x007fffffU) / 8388608.0;
      const double th = (c >> 30) * half_pi + (frac - 0.5) * half_pi;
      worst = std::max({worst, std::fabs(out[j] - rad * std::cos(th)),
                        std::fabs(out[16 + j] - rad * std::sin(th))});
    }
  }
  return worst;
}

/// The same for double blocks (two lane steps: radius words, then angle words), in long double.
double double_kernel_error(Rng& r, int blocks) {
  const long double half_pi = 1.570796326794896619231321691639751442L;
  constexpr int per_fill = Rng::cache_size / Rng::block;
  double worst = 0;
  std::uint64_t lanes[4][16];
  double all[Rng::cache_size];
  for (int b = 0; b < blocks; ++b) {
    if (b % per_fill == 0) {
      std::memcpy(lanes, r.lane_words(), sizeof lanes);
      r.fill_normal(all, Rng::cache_size);
    }
    std::uint64_t w1[16], w2[16];
    next_words(lanes, w1);
    next_words(lanes, w2);
    const double* out = all + Rng::block * (b % per_fill);
    for (int j = 0; j < 16; ++j) {
      const long double u1 =
          (2.0L * static_cast<long double>(w1[j] >> 12) + 1) / 9007199254740992.0L;
      const long double frac =
          static_cast<long double>((w2[j] >> 10) & 0x000fffffffffffffULL) / std::ldexp(1.0L, 52);
      const long double th = (w2[j] >> 62) * half_pi + (frac - 0.5L) * half_pi;
      const long double rad = std::sqrt(-2.0L * std::log(u1));
      worst = std::max({worst, static_cast<double>(std::fabs(out[j] - rad * std::cos(th))),
                        static_cast<double>(std::fabs(out[16 + j] - rad * std::sin(th)))});
    }
  }
  return worst;
}

}  // namespace

// Tolerances: the measured maxima rounded up. The float kernel's error is a few ulp of the
// result (|z| <= 6.67: 1 ulp is up to 4.8e-7); the double kernel's a few ulp of |z| <= 8.58.
TEST_CASE("every kernel equals exact Box-Muller on the same bits") {
#if defined(SGMCMC_NORMAL_DRAWS)
  const int blocks = 3000;  // emulated runs: a tenth
#else
  const int blocks = 30000;
#endif
  for (auto isa : {sgmcmc::host::Isa::Base, sgmcmc::host::Isa::Avx2, sgmcmc::host::Isa::Avx512}) {
    if (!Rng::supported(isa)) continue;
    Rng rf(77), rd(78);
    REQUIRE(rf.set_isa(isa));
    REQUIRE(rd.set_isa(isa));
    const double ef = float_kernel_error(rf, blocks);
    const double ed = double_kernel_error(rd, blocks / 2);
    MESSAGE(std::string(sgmcmc::host::to_string(isa))
            << ": max abs error float " << ef << ", double " << ed);
    CHECK(ef < 2e-6);
    CHECK(ed < 8e-15);
  }
}

TEST_CASE("negative control: the accuracy check sees a kernel that is off by one bit of layout") {
  // Feed the reference the radius of the wrong half: the check must report a large error.
  Rng r(5);
  std::uint64_t lanes[4][16];
  std::memcpy(lanes, r.lane_words(), sizeof lanes);
  std::uint64_t w[16];
  next_words(lanes, w);
  float out[Rng::cache_size];
  r.fill_normal(out, Rng::cache_size);
  double worst = 0;
  for (int j = 0; j < 16; ++j) {
    const auto a = static_cast<std::uint32_t>(w[j / 2] >> (32 * (1 - j % 2)));  // swapped halves
    const float u1 =
        static_cast<float>(static_cast<std::int32_t>(a >> 1)) * 4.656612873077393e-10f +
        2.3283064365386963e-10f;
    const double rad = std::sqrt(-2.0 * std::log(static_cast<double>(u1)));
    worst = std::max(worst, std::fabs(std::hypot(out[j], out[16 + j]) - rad));
  }
  CHECK(worst > 1e-2);
}
