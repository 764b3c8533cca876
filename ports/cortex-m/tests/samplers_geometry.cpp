// SPDX-License-Identifier: MIT
// On-target suite for the state-dependent geometry samplers in float, one firmware per sampler
// (SGMCMC_FW_SGRLD, _SGRHMC, _GSGRHMC): conformance (determinism, the zero-noise update and Γ
// written by hand from MATH.md §2.2, bad input) and stationarity on fw::Gaussian (σ = 1, 1.5)
// with a state-dependent metric, against the chain's first-order discretisation bias derived
// below, with a negative control (Γ dropped or halved) that must fail the same check.
//
// Discretisation bias (Talay–Tubaro). If one step maps a test function ψ to
//   E[ψ(z')] = ψ + h Lψ + h² A₁ψ + O(h³)
// (L the generator of the recipe's SDE), the chain's stationary law π_h satisfies
//   E_{π_h}[Lψ] = −h E_π[A₁ψ] + O(h²),
// while E_π[Lψ] = 0 exactly. So for a test function φ = Lψ whose ψ is known in closed form, the
// first-order bias b₁ = −h E_π[A₁ψ] is an explicit integral against the Gaussian target, computed
// here by quadrature. Each check is |mean − b₁| <= 5 SE + |b₁|/4 + h², where the last two terms
// cover the O(h²) remainder: measured on the host in double (the same samplers, targets, metrics
// and h, 4·10⁷ steps) the remainder is 4–10 % of b₁, and below 0.002 where b₁ = 0.
#include <cmath>
#include <cstdint>

#include <Eigen/Core>

#include "sampler_checks.hpp"
#include "sgmcmc/sgmcmc.hpp"

using namespace fw;  // NOLINT: the shared checks, models and batch means of the suites

namespace {

using sgmcmc::Matrix;
using sgmcmc::Vector;
using Mat = Matrix<float, kDim, kDim>;

// ---------------------------------------------------------------------------------------------
// Shared pieces (templates and inline functions: each firmware uses a subset).

/// The zero-noise step (or Γ) against its hand-written value: max |error| <= 1e-6 (1 + max |x|),
/// a few float roundings of quantities of order 1.
template <class V>
void check_close(const char* what, const V& got, const V& expected) {
  const float err = (got - expected).cwiseAbs().maxCoeff();
  const float scale = 1.0f + expected.cwiseAbs().maxCoeff();
  Line().decimals(9) << "  " << what << ": max |error| " << err << '\n';
  SGMCMC_CHECK(err <= 1e-6f * scale);
}

/// The zero-noise step of s from z0 and Γ(z0) (the sampler's Recipe::gamma, the model in the
/// context) against the hand-written expected state and Γ.
template <class S, class Model>
void check_step_and_gamma(const char* what, const S& s, const Model& model, const StateOf<S>& z0,
                          const StateOf<S>& expected, const StateOf<S>& gamma) {
  StateOf<S> z = z0;
  const auto gamma_engine = s.recipe().gamma(z0, model);  // a BlockState
  SGMCMC_CHECK(static_cast<bool>(s.step_with_noise(z, model, S::NoiseVector::Zero())));
  Line() << "  " << what << '\n';
  check_close("    Gamma", gamma_engine.flat(), gamma.flat());
  check_close("    step ", z.flat(), expected.flat());
}

/// E f(x) for x ~ N(0, v): trapezoid rule over ±10σ with spacing σ/10 (for these smooth,
/// Gaussian-weighted integrands the rule is exact to far below the Monte Carlo error).
template <class F>
double normal_mean(double v, F f) {
  const double sd = std::sqrt(v);
  double acc = 0.0, w = 0.0;
  for (int k = -100; k <= 100; ++k) {
    const double p = std::exp(-0.005 * k * k);
    acc += p * f(0.1 * k * sd);
    w += p;
  }
  return acc / w;
}

/// E f(θ) for θ ~ fw::Gaussian (the 2-D target): the same rule on a tensor grid, ±8σ, σ/5.
template <class F>
double target_mean(F f) {
  const double sd0 = std::sqrt(double(kVar0)), sd1 = std::sqrt(double(kVar1));
  double acc = 0.0, w = 0.0;
  for (int i = -40; i <= 40; ++i) {
    for (int j = -40; j <= 40; ++j) {
      const double p = std::exp(-0.02 * (i * i + j * j));
      acc += p * f(0.2 * i * sd0, 0.2 * j * sd1);
      w += p;
    }
  }
  return acc / w;
}

/// Allowance for the O(h²) remainder after the first-order bias b₁ (see the file comment).
inline double remainder_allowance(double b1, double h) {
  return 0.25 * std::fabs(b1) + h * h;
}

/// A test-function mean against its first-order expectation b₁, within 5 SE + the remainder.
template <int Q>
bool biased_ok(const char* name, const BatchMeans<Q>& bm, int q, double b1, double h) {
  return moment_ok(name, bm.mean(q), bm.standard_error(q), b1, remainder_allowance(b1, h));
}

/// Prints a mean that is not checked (its O(h) bias has no closed form).
template <int Q>
void report(const char* name, const BatchMeans<Q>& bm, int q, double target) {
  Line().decimals(4) << "  " << name << ": " << bm.mean(q) << " +- " << bm.standard_error(q)
                     << " (target " << target << "; reported, not checked)\n";
}

/// Step sizes -1, 0 and NaN: InvalidStepSize, state unchanged.
template <class S, class Model>
void check_invalid_step_sizes(const typename S::Params& p, const Model& model,
                              const typename S::StateType& z0) {
  const char* what[3] = {"step size -1", "step size 0", "step size NaN"};
  const float h[3] = {-1.0f, 0.0f, std::nanf("")};
  for (int i = 0; i < 3; ++i) {
    typename S::Params bad = p;
    bad.step_size = h[i];
    check_rejects(what[i], S(bad), model, z0, StatusCode::InvalidStepSize);
  }
}

/// Diagonal G⁻¹ with entry i a function of θ_i only: a(x) = 0.5 + 1/(1 + x²), in (0.5, 1.5].
struct SepInverse {
  template <class T, int N>
  Vector<T, N> operator()(const Vector<T, N>& th) const noexcept {
    Vector<T, N> g;
    for (int i = 0; i < N; ++i) g[i] = T(0.5f) + T(1.0f) / (T(1.0f) + th[i] * th[i]);
    return g;
  }
};
inline double sep_a(double x) {
  return 0.5 + 1.0 / (1.0 + x * x);
}
inline double sep_da(double x) {
  const double q = 1.0 + x * x;
  return -2.0 * x / (q * q);
}

/// The same metric given as G = diag(1/a(θ_i)) (the G form: the sampler takes reciprocals); mode 1
/// makes G_00 = 0 (G⁻¹ infinite), mode 2 G_00 < 0 (G⁻¹ not PSD).
struct SepMetricG {
  int mode = 0;
  template <class T, int N>
  Vector<T, N> operator()(const Vector<T, N>& th) const noexcept {
    Vector<T, N> g;
    for (int i = 0; i < N; ++i) g[i] = T(1.0f) + th[i] * th[i];
    for (int i = 0; i < N; ++i) g[i] = g[i] / (T(0.5f) * g[i] + T(1.0f));  // 1 / a(θ_i)
    if (mode == 1) g[0] = T(0.0f);
    if (mode == 2) g[0] = T(-1.0f);
    return g;
  }
};

/// The same metric that can be made bad: mode 1 not PSD, 2 NaN, 3 +Inf (0: good).
struct SwitchInverse {
  int mode = 0;
  template <class T, int N>
  Vector<T, N> operator()(const Vector<T, N>& th) const noexcept {
    Vector<T, N> g = SepInverse{}(th);
    if (mode == 1) g[0] = T(-0.5f);
    if (mode == 2) g[N - 1] = T(std::nanf(""));
    if (mode == 3) g[0] = T(HUGE_VALF);
    return g;
  }
};

/// Dense G⁻¹(θ) = I + J(ψ)/2, J(ψ) = [[cos ψ, sin ψ], [sin ψ, −cos ψ]], ψ = 2(0.5 θ₀ + 0.3 θ₁):
/// a rotation R(ψ/2) of diag(1.5, 0.5), so every entry varies with θ, while G (its inverse),
/// S = G^{-1/2} and their divergences have closed forms (RotatedForms).
constexpr float kRot0 = 0.5f, kRot1 = 0.3f;
struct RotatedInverse {
  template <class T, int N>
  Matrix<T, N, N> operator()(const Vector<T, N>& th) const noexcept {
    static_assert(N == 2, "a 2-D metric");
    using std::cos;
    using std::sin;
    const T psi = T(2.0f * kRot0) * th[0] + T(2.0f * kRot1) * th[1];
    const T c = cos(psi), s = sin(psi);
    Matrix<T, N, N> g;
    g(0, 0) = T(1.0f) + T(0.5f) * c;
    g(0, 1) = T(0.5f) * s;
    g(1, 0) = T(0.5f) * s;
    g(1, 1) = T(1.0f) - T(0.5f) * c;
    return g;
  }
};
/// The same G⁻¹ given in the G form, dense: J = [[cos ψ, sin ψ], [sin ψ, −cos ψ]] is a reflection
/// (J² = I), so G = (I + J/2)⁻¹ = (4/3)(I − J/2); the sampler inverts it by Cholesky
/// (core/linalg.hpp), and Γ comes by AD through that inverse.
struct RotatedMetricG {
  template <class T, int N>
  Matrix<T, N, N> operator()(const Vector<T, N>& th) const noexcept {
    static_assert(N == 2, "a 2-D metric");
    using std::cos;
    using std::sin;
    const T psi = T(2.0f * kRot0) * th[0] + T(2.0f * kRot1) * th[1];
    const T c = cos(psi), s = sin(psi);
    const T k = T(4.0f / 3.0f);
    Matrix<T, N, N> g;
    g(0, 0) = k * (T(1.0f) - T(0.5f) * c);
    g(0, 1) = k * (T(-0.5f) * s);
    g(1, 0) = k * (T(-0.5f) * s);
    g(1, 1) = k * (T(1.0f) + T(0.5f) * c);
    return g;
  }
};
/// Hand-written G⁻¹, S = G^{-1/2} = m_s I + h_s J, Σ_j ∂_j G⁻¹_ij and (∇·S)_i at θ.
/// ∂_j J = J'(ψ) ∂_jψ with J' = [[−sin ψ, cos ψ], [cos ψ, sin ψ]] and ∂ψ = (1.0, 0.6), so
/// Σ_j ∂_j G⁻¹_ij = (J' k)_i with k = (0.5, 0.3), and ∇·S = 2 h_s J' k.
struct RotatedForms {
  Mat ginv, s;
  Vec div_ginv, div_s;
  explicit RotatedForms(const Vec& th) {
    const float psi = 2.0f * kRot0 * th[0] + 2.0f * kRot1 * th[1];
    const float c = std::cos(psi), sn = std::sin(psi);
    Mat j;
    j << c, sn, sn, -c;
    const float ms = 0.5f * (std::sqrt(1.5f) + std::sqrt(0.5f));
    const float hs = 0.5f * (std::sqrt(1.5f) - std::sqrt(0.5f));
    ginv = Mat::Identity() + 0.5f * j;
    s = ms * Mat::Identity() + hs * j;
    div_ginv = Vec(-sn * kRot0 + c * kRot1, c * kRot0 + sn * kRot1);
    div_s = 2.0f * hs * div_ginv;
  }
};

// ---------------------------------------------------------------------------------------------
// One firmware per sampler.

#if defined(SGMCMC_FW_SGRLD)
constexpr const char* kName = "SGRLD";

/// Coupled diagonal G⁻¹: a_i = 0.5 + 1/(1 + θ_i² + 0.5 θ_{i+1}²), so Γ by automatic
/// differentiation needs both directions; Γ_i = ∂_i a_i = −2θ_i / q_i².
struct CoupledInverse {
  template <class T, int N>
  Vector<T, N> operator()(const Vector<T, N>& th) const noexcept {
    Vector<T, N> g;
    for (int i = 0; i < N; ++i) {
      const T b = th[(i + 1) % N];
      g[i] = T(0.5f) + T(1.0f) / (T(1.0f) + th[i] * th[i] + T(0.5f) * b * b);
    }
    return g;
  }
};
/// The analytic Γ of CoupledInverse (a user divergence).
struct CoupledDivergence {
  template <class T, int N>
  Vector<T, N> operator()(const Vector<T, N>& th) const noexcept {
    Vector<T, N> out;
    for (int i = 0; i < N; ++i) {
      const T b = th[(i + 1) % N];
      const T q = T(1.0f) + th[i] * th[i] + T(0.5f) * b * b;
      out[i] = T(-2.0f) * th[i] / (q * q);
    }
    return out;
  }
};
/// Γ of SepInverse scaled by `factor`: 1 is the correct Γ, 0.5 a wrong (halved) one.
struct ScaledSepDivergence {
  float factor = 1.0f;
  template <int N>
  Vector<float, N> operator()(const Vector<float, N>& th) const noexcept {
    Vector<float, N> out;
    for (int i = 0; i < N; ++i) {
      const float q = 1.0f + th[i] * th[i];
      out[i] = factor * -2.0f * th[i] / (q * q);
    }
    return out;
  }
};

using Sep = sgmcmc::InverseMetric<sgmcmc::DiagonalShape, SepInverse, true>;
using Coupled = sgmcmc::InverseMetric<sgmcmc::DiagonalShape, CoupledInverse>;
using Rotated = sgmcmc::InverseMetric<sgmcmc::DenseShape, RotatedInverse>;
using SepG = sgmcmc::Metric<sgmcmc::DiagonalShape, SepMetricG, true>;
using RotatedG = sgmcmc::Metric<sgmcmc::DenseShape, RotatedMetricG>;
using Switch = sgmcmc::InverseMetric<sgmcmc::DiagonalShape, SwitchInverse, true>;

/// Zero noise (MATH.md §2.2): θ' = θ − h G⁻¹(θ) g + h Γ(θ); also Γ alone (Recipe::gamma).
template <class S>
void check_zero_noise(const char* what, const S& s, const Mat& ginv, const Vec& gamma) {
  const StateOf<S> z0 = s.start(start_position());
  Vec g;
  fw::Gaussian().gradient(z0.position(), g);
  const float h = s.step_size();
  StateOf<S> expected = z0, gamma_state = z0;
  expected.position() = z0.position() - h * (ginv * g) + h * gamma;
  gamma_state.position() = gamma;
  check_step_and_gamma(what, s, fw::Gaussian(), z0, expected, gamma_state);
}

/// Stationarity of SGRLD-type chains on fw::Gaussian with the SepInverse metric. The chain
/// factorises into two 1-D chains (diagonal noise, entry i of the drift depends on θ_i only). In
/// 1-D, L = a ∂² + (a' − a x/v) ∂ and ψ with ψ' = −v x / a(x) solves Lψ = x² − v; one Euler step
/// has A₁ψ = ½b²ψ'' + abψ''' + ½a²ψ'''' (b the drift), and integrating by parts twice against the
/// Gaussian gives the first-order bias of E x²:
///   b₁ = (h/2) E[(a − x a')(v a'² + a²) / a²]      (constant a: b₁ = h a/2, the AR(1) value).
/// E θ_i = 0 exactly (the chain commutes with θ → −θ). Returns whether every moment is inside.
template <class S>
bool sgrld_stationary(const char* what, const S& s, long batch, std::uint64_t seed) {
  const double h = s.step_size();
  double b[2];
  for (int i = 0; i < 2; ++i) {
    const double v = fw::Gaussian::kVar[i];
    b[i] = 0.5 * h * normal_mean(v, [v](double x) {
             const double a = sep_a(x), da = sep_da(x);
             return (a - x * da) * (v * da * da + a * a) / (a * a);
           });
  }
  Line() << what << ": h = " << static_cast<float>(h) << ", " << 40 * batch << " steps\n";
  StateOf<S> z = s.start(Vec::Zero());
  Rng rng(seed);
  fw::BatchMeans<4> bm(batch);
  SGMCMC_CHECK(run_chain(s, z, rng, 2000, bm, position_moments<StateOf<S>>));
  return position_ok(bm, kVar0 + b[0], kVar1 + b[1], remainder_allowance(b[0], h),
                     remainder_allowance(b[1], h));
}

void run() {
  using S = sgmcmc::SGRLD<float, fw::kDim, Sep>;
  S::Params p;
  p.step_size = 0.1f;
  const S s(p);
  SGMCMC_CHECK(static_cast<bool>(s.status()));

  Line() << "conformance\n";
  check_deterministic(s, s.start(start_position()), true);
  {
    const Vec th = start_position();
    const Mat sep = Vec(sep_a(th[0]), sep_a(th[1])).asDiagonal();
    const Vec sep_gamma(sep_da(th[0]), sep_da(th[1]));
    check_zero_noise("separable diagonal G^-1, Gamma by AD (one direction)", s, sep, sep_gamma);
    const Vec cg = CoupledInverse{}(th);
    const Vec cgamma = CoupledDivergence{}(th);
    check_zero_noise("coupled diagonal G^-1, Gamma by AD (two directions)",
                     sgmcmc::SGRLD<float, fw::kDim, Coupled>({p.step_size, {}, {}}),
                     Mat(cg.asDiagonal()), cgamma);
    check_zero_noise(
        "coupled diagonal G^-1, analytic Gamma",
        sgmcmc::SGRLD<float, fw::kDim, Coupled, CoupledDivergence>({p.step_size, {}, {}}),
        Mat(cg.asDiagonal()), cgamma);
    const RotatedForms rf(th);
    check_zero_noise("dense rotated G^-1, Gamma by AD",
                     sgmcmc::SGRLD<float, fw::kDim, Rotated>({p.step_size, {}, {}}), rf.ginv,
                     rf.div_ginv);
    check_zero_noise("separable diagonal G form (G^-1 = 1/G), Gamma by AD",
                     sgmcmc::SGRLD<float, fw::kDim, SepG>({p.step_size, {}, {}}), sep, sep_gamma);
    check_zero_noise("dense rotated G form (G^-1 by Cholesky), Gamma by AD",
                     sgmcmc::SGRLD<float, fw::kDim, RotatedG>({p.step_size, {}, {}}), rf.ginv,
                     rf.div_ginv);
  }
  const StateOf<S> z0 = s.start(start_position());
  check_invalid_step_sizes<S>(p, fw::Gaussian(), z0);
  check_rejects("NaN gradient", s, fw::NanGradient(), z0, StatusCode::NonFiniteGradient);
  S::Params big = p;
  big.step_size = 100.0f;  // valid, but h * 3e38 overflows
  check_rejects("overflowing step", S(big), fw::HugeGradient(), z0, StatusCode::NonFiniteState);
  check_rejects("NaN position", s, fw::Gaussian(), nan_state(s), StatusCode::NonFiniteGradient);
  {
    using W = sgmcmc::SGRLD<float, fw::kDim, Switch>;
    W::Params q;
    q.step_size = p.step_size;
    const StateOf<W> w0 = W(q).start(start_position());
    {  // control: mode 0 is a good metric, and the step succeeds
      StateOf<W> w = w0;
      Rng rng(5);
      SGMCMC_CHECK(static_cast<bool>(W(q).step(w, fw::Gaussian(), rng)));
    }
    q.metric.fn.mode = 1;
    check_rejects("G^-1 not PSD", W(q), fw::Gaussian(), w0, StatusCode::NoiseNotPSD);
    q.metric.fn.mode = 2;
    check_rejects("G^-1 NaN", W(q), fw::Gaussian(), w0, StatusCode::NonFiniteMetric);
    q.metric.fn.mode = 3;
    check_rejects("G^-1 +Inf", W(q), fw::Gaussian(), w0, StatusCode::NonFiniteMetric);
    using WG = sgmcmc::SGRLD<float, fw::kDim, SepG>;
    WG::Params qg;
    qg.step_size = p.step_size;
    qg.metric.fn.mode = 1;
    check_rejects("G = 0 (G^-1 infinite)", WG(qg), fw::Gaussian(), z0, StatusCode::NonFiniteMetric);
    qg.metric.fn.mode = 2;
    check_rejects("G < 0 (G^-1 not PSD)", WG(qg), fw::Gaussian(), z0, StatusCode::NoiseNotPSD);
  }
  {
    S noisy(p);
    // V̂ is checked against the state-dependent G⁻¹ at every step, not when it is set.
    SGMCMC_CHECK(static_cast<bool>(noisy.set_gradient_noise(1.0e6f)));
    check_rejects("gradient noise V = 1e6", noisy, fw::Gaussian(), z0, StatusCode::NoiseNotPSD);
  }

  // Stationarity: 800000 steps in 40 batches of 20000, far longer than the integrated
  // autocorrelation times (below 100 steps here, measured on the host).
  Line() << "stationarity\n";
  SGMCMC_CHECK(sgrld_stationary("SGRLD, G^-1 = diag(0.5 + 1/(1 + theta_i^2))", s, 20000, 2024));

  // Negative controls on the same check: without Γ the chain samples exp(−U)/a (E θ_0² = 1.35
  // in continuous time), with Γ halved exp(−U)/√a (E θ_0² = 1.16): the halved Γ shows that the
  // tolerance resolves a 50 % error in the correction term.
  Line() << "negative controls (must be outside)\n";
  SGMCMC_CHECK(!sgrld_stationary("SGRLD without Gamma (NaiveSGRLD)",
                                 sgmcmc::NaiveSGRLD<float, fw::kDim, Sep>({p.step_size, {}}), 20000,
                                 2025));
  using Halved = sgmcmc::SGRLD<float, fw::kDim, Sep, ScaledSepDivergence>;
  SGMCMC_CHECK(!sgrld_stationary("SGRLD with Gamma halved",
                                 Halved({p.step_size, {}, ScaledSepDivergence{0.5f}}), 20000,
                                 2026));
}

#elif defined(SGMCMC_FW_SGRHMC)
constexpr const char* kName = "SGRHMC";

/// SGRHMC's metric: G⁻¹ = diag(s(θ_i)²), s(x) = 0.8 + 0.6/(1 + x²) in (0.8, 1.4], so S = diag(s)
/// and (∇·S)_i = s'(θ_i).
struct SqrtSepInverse {
  template <class T, int N>
  Vector<T, N> operator()(const Vector<T, N>& th) const noexcept {
    Vector<T, N> g;
    for (int i = 0; i < N; ++i) {
      const T s = T(0.8f) + T(0.6f) / (T(1.0f) + th[i] * th[i]);
      g[i] = s * s;
    }
    return g;
  }
};
inline double sq_s(double x) {
  return 0.8 + 0.6 / (1.0 + x * x);
}
inline double sq_ds(double x) {
  const double q = 1.0 + x * x;
  return -1.2 * x / (q * q);
}
/// S₁(x) = ∫₀ˣ s = 0.8 x + 0.6 atan x.
inline double sq_s1(double x) {
  return 0.8 * x + 0.6 * std::atan(x);
}

using SqrtSep = sgmcmc::InverseMetric<sgmcmc::DiagonalShape, SqrtSepInverse, true>;
using Rotated = sgmcmc::InverseMetric<sgmcmc::DenseShape, RotatedInverse>;
using Switch = sgmcmc::InverseMetric<sgmcmc::DiagonalShape, SwitchInverse, true>;

/// Zero noise (MATH.md §2.2): r' = r − hSg − hG⁻¹r + h∇·S, then θ' = θ + hS(θ_t)r' (kick–drift)
/// or θ + hSr (Algorithm 1), everything at θ_t; with_gamma = false drops ∇·S (naive SGRHMC).
/// Also Γ alone (Recipe::gamma): (0, ∇·S), or 0 for the naive sampler.
template <class S>
void check_zero_noise(const char* what, const S& s, const StateOf<S>& z0, const Mat& ginv,
                      const Mat& sq, const Vec& div_s, bool kick_drift, bool with_gamma) {
  StateOf<S> expected = z0, gamma;
  Vec g;
  fw::Gaussian().gradient(z0.position(), g);
  const float h = s.step_size();
  const Vec th = z0.position(), r = z0.momentum();
  gamma.momentum() = with_gamma ? div_s : Vec::Zero();
  expected.momentum() = r - h * (sq * g) - h * (ginv * r) + h * gamma.momentum();
  expected.position() = th + h * (sq * (kick_drift ? expected.momentum() : r));
  check_step_and_gamma(what, s, fw::Gaussian(), z0, expected, gamma);
}

/// Stationarity of kick–drift SGRHMC-type chains on fw::Gaussian with the SqrtSep metric. The
/// metric is separable and the target a product, so each (θ_i, r_i) is a 2-D chain of its own,
/// with generator L = s r ∂_θ + F ∂_r + a ∂_r², a = s², F = m − a r, m = s' − s θ/v, and one
/// kick–drift step has A₁f = sF f_θ + ½s²r² f_θθ + (srF + 2as) f_θr + ½F² f_rr + asr f_θrr
/// + aF f_rrr + ½a² f_rrrr. Three ψ give closed forms (r integrated exactly over N(0, 1), θ by
/// parts against the Gaussian):
///  - ψ = θr: φ = Lψ = s r² + θ m − a θ r (a virial identity); E_r A₁ψ = 0, so b₁ = 0 (with a
///    constant metric this is SGHMC's O(h²) position bias);
///  - ψ = −r²/2 + A(θ), A' = m/s: φ = a(r² − 1), b₁ = (h/2) E[m s' + a²];
///  - ψ = −r²/2 − S₁r + A(θ), S₁ = ∫₀^θ s, A' = m/s − sS₁: φ = −(S₁m + a), a function of θ alone
///    (∝ θ²/v − 1 for a constant metric), b₁ = h E[a m S₁ + ½ m s' + ½ a s' S₁ + a²].
/// E θ_i = 0 exactly ((θ, r) → (−θ, −r) commutes with the chain). Dropping ∇·S (naive SGRHMC)
/// shifts E[φ] by E[s' ∂_rψ] to first order: E[θ s'] < 0 (virial), −E[s' S₁] > 0 (third φ).
template <class S>
bool sgrhmc_stationary(const char* what, const S& s, long batch, std::uint64_t seed) {
  const double h = s.step_size();
  double b_phi[2], b_a[2];
  for (int i = 0; i < 2; ++i) {
    const double v = fw::Gaussian::kVar[i];
    b_phi[i] = h * normal_mean(v, [v](double x) {
                 const double sx = sq_s(x), ds = sq_ds(x), a = sx * sx, m = ds - sx * x / v;
                 const double s1 = sq_s1(x);
                 return a * m * s1 + 0.5 * m * ds + 0.5 * a * ds * s1 + a * a;
               });
    b_a[i] = 0.5 * h * normal_mean(v, [v](double x) {
               const double sx = sq_s(x), ds = sq_ds(x), m = ds - sx * x / v;
               return m * ds + sx * sx * sx * sx;
             });
  }
  Line() << what << ": h = " << static_cast<float>(h) << ", " << 40 * batch << " steps\n";
  StateOf<S> z = s.start(Vec::Zero());
  Rng rng(seed);
  fw::BatchMeans<10> bm(batch);
  SGMCMC_CHECK(run_chain(s, z, rng, 2000, bm, [](const StateOf<S>& w, double(&x)[10]) {
    for (int i = 0; i < 2; ++i) {
      const float t = w.position()[i], r = w.momentum()[i], v = fw::Gaussian::kVar[i];
      const float q = 1.0f + t * t;
      const float sx = 0.8f + 0.6f / q, ds = -1.2f * t / (q * q), a = sx * sx;
      const float m = ds - sx * t / v, s1 = 0.8f * t + 0.6f * std::atan(t);
      x[i] = t;
      x[2 + i] = sx * r * r + t * m - a * t * r;
      x[4 + i] = a * (r * r - 1.0f);
      x[6 + i] = -(s1 * m + a);
      x[8 + i] = double(t) * t;
    }
  }));
  bool ok = moment_ok("E theta_0        ", bm.mean(0), bm.standard_error(0), 0.0, 0.0);
  ok = moment_ok("E theta_1        ", bm.mean(1), bm.standard_error(1), 0.0, 0.0) && ok;
  ok = biased_ok("E virial_0       ", bm, 2, 0.0, h) && ok;
  ok = biased_ok("E virial_1       ", bm, 3, 0.0, h) && ok;
  ok = biased_ok("E a(r_0^2 - 1)   ", bm, 4, b_a[0], h) && ok;
  ok = biased_ok("E a(r_1^2 - 1)   ", bm, 5, b_a[1], h) && ok;
  ok = biased_ok("E -(S1 m + a)_0  ", bm, 6, b_phi[0], h) && ok;
  ok = biased_ok("E -(S1 m + a)_1  ", bm, 7, b_phi[1], h) && ok;
  report("E theta_0^2      ", bm, 8, kVar0);
  report("E theta_1^2      ", bm, 9, kVar1);
  return ok;
}

void run() {
  using S = sgmcmc::SGRHMC<float, fw::kDim, SqrtSep>;  // kick–drift, Γ by AD
  S::Params p;
  p.step_size = 0.05f;
  const S s(p);
  SGMCMC_CHECK(static_cast<bool>(s.status()));

  Line() << "conformance\n";
  StateOf<S> z0 = s.start(start_position());
  z0.momentum() = Vec(0.3f, 0.5f);
  check_deterministic(s, z0, true);
  {
    const Vec th = z0.position();
    const Vec sv(sq_s(th[0]), sq_s(th[1]));
    const Mat sq = sv.asDiagonal(), ginv = sv.cwiseAbs2().asDiagonal();
    const Vec div_s(sq_ds(th[0]), sq_ds(th[1]));
    check_zero_noise("diagonal S, Gamma by AD, kick-drift", s, z0, ginv, sq, div_s, true, true);
    check_zero_noise(
        "diagonal S, Gamma by AD, Algorithm 1 (explicit Euler)",
        sgmcmc::SGRHMC<float, fw::kDim, SqrtSep, sgmcmc::AutoGamma, sgmcmc::ExplicitEuler>(
            {p.step_size, {}, {}}),
        z0, ginv, sq, div_s, false, true);
    check_zero_noise("naive SGRHMC (no div S), kick-drift",
                     sgmcmc::NaiveSGRHMC<float, fw::kDim, SqrtSep>({p.step_size, {}}), z0, ginv, sq,
                     div_s, true, false);
    // Dense S: Jacobi eigen-decomposition (core/linalg.hpp), Daleckii–Krein Γ.
    const RotatedForms rf(th);
    check_zero_noise("dense rotated G^-1 (eigen S, Daleckii-Krein Gamma), kick-drift",
                     sgmcmc::SGRHMC<float, fw::kDim, Rotated>({p.step_size, {}, {}}), z0, rf.ginv,
                     rf.s, rf.div_s, true, true);
  }
  check_invalid_step_sizes<S>(p, fw::Gaussian(), z0);
  check_rejects("NaN gradient", s, fw::NanGradient(), z0, StatusCode::NonFiniteGradient);
  S::Params big = p;
  big.step_size = 100.0f;  // valid, but h * 3e38 overflows
  check_rejects("overflowing step", S(big), fw::HugeGradient(), z0, StatusCode::NonFiniteState,
                StatusCode::NonFiniteMetric);
  check_rejects("NaN position", s, fw::Gaussian(), nan_state(s), StatusCode::NonFiniteGradient);
  {
    using W = sgmcmc::SGRHMC<float, fw::kDim, Switch>;
    W::Params q;
    q.step_size = p.step_size;
    StateOf<W> w0 = W(q).start(start_position());
    w0.momentum() = z0.momentum();
    {  // control: mode 0 is a good metric, and the step succeeds
      StateOf<W> w = w0;
      Rng rng(5);
      SGMCMC_CHECK(static_cast<bool>(W(q).step(w, fw::Gaussian(), rng)));
    }
    q.metric.fn.mode = 1;
    check_rejects("G^-1 not PSD", W(q), fw::Gaussian(), w0, StatusCode::NoiseNotPSD);
    q.metric.fn.mode = 2;
    check_rejects("G^-1 NaN", W(q), fw::Gaussian(), w0, StatusCode::NonFiniteMetric);
    q.metric.fn.mode = 3;
    check_rejects("G^-1 +Inf", W(q), fw::Gaussian(), w0, StatusCode::NonFiniteMetric);
  }
  {
    S noisy(p);
    // V̂ is checked against the state-dependent S V̂ S at every step, not when it is set.
    SGMCMC_CHECK(static_cast<bool>(noisy.set_gradient_noise(1.0e6f)));
    check_rejects("gradient noise V = 1e6", noisy, fw::Gaussian(), z0, StatusCode::NoiseNotPSD);
  }

  // Stationarity: 800000 steps in 40 batches of 20000, far longer than the integrated
  // autocorrelation times (below 100 steps here, measured on the host).
  Line() << "stationarity\n";
  SGMCMC_CHECK(
      sgrhmc_stationary("SGRHMC kick-drift, S = diag(0.8 + 0.6/(1 + theta_i^2))", s, 20000, 2024));
  // Negative control on the same check: naive SGRHMC (recipe paper Eq. 27, ∇·S dropped).
  Line() << "negative control (must be outside)\n";
  SGMCMC_CHECK(!sgrhmc_stationary("naive SGRHMC (no div S)",
                                  sgmcmc::NaiveSGRHMC<float, fw::kDim, SqrtSep>({p.step_size, {}}),
                                  20000, 2025));
}

#elif defined(SGMCMC_FW_GSGRHMC)
constexpr const char* kName = "gSGRHMC";

/// fw::Gaussian with the potential templated on the scalar, so that Γ by automatic
/// differentiation (GSGRHMC<..., AutoGamma>) sees U's dependence on θ.
struct GaussianT : fw::Gaussian {
  template <class T>
  T potential(const Vector<T, kDim>& th) const noexcept {
    return T(0.5f / kVar[0]) * th[0] * th[0] + T(0.5f / kVar[1]) * th[1] * th[1];
  }
};
/// Finite gradient, NaN potential value (templated, for the AD variant too).
struct NanPotentialT {
  void gradient(const Vec& th, Vec& g) const noexcept { g = th; }
  template <class T>
  T potential(const Vector<T, kDim>&) const noexcept {
    return T(std::nanf(""));
  }
};

using Synthetic = sgmcmc::PotentialMetric<float>;
using S = sgmcmc::GSGRHMC<float, fw::kDim>;  // Algorithm 1, analytic ∇·S from ctx.gradient
using KD = sgmcmc::GSGRHMC<float, fw::kDim, sgmcmc::PotentialMetricSqrtDivergence<float>,
                           sgmcmc::KickDrift>;
using AD = sgmcmc::GSGRHMC<float, fw::kDim, sgmcmc::AutoGamma>;

/// The synthetic metric by hand (MATH.md §5.1): x = U + C, a = max(|x|, floor), G⁻¹ = D√a I,
/// S = √(G⁻¹) I, ∇·S = sign(x) (√D/4) a^{-3/4} ∇U where |x| > floor, else 0.
struct SyntheticForms {
  float ginv, s;
  Vec div_s;
  SyntheticForms(const Synthetic& pm, const Vec& th) {
    Vec g;
    fw::Gaussian().gradient(th, g);
    const float x = fw::Gaussian().potential(th) + pm.shift;
    const float a = std::fabs(x) < pm.floor ? pm.floor : std::fabs(x);
    ginv = pm.scale * std::sqrt(a);
    s = std::sqrt(ginv);
    const float c = std::sqrt(pm.scale) / 4.0f / std::pow(a, 0.75f);
    div_s = std::fabs(x) > pm.floor ? Vec((x > 0.0f ? c : -c) * g) : Vec(Vec::Zero());
  }
};

/// Zero noise (MATH.md §2.2, Algorithm 1 or kick–drift) and Γ = (0, ∇·S) against SyntheticForms.
template <class Sampler, class Model>
void check_zero_noise(const char* what, const Sampler& s, const Synthetic& pm,
                      const StateOf<Sampler>& z0, const Model& model, bool kick_drift) {
  const SyntheticForms f(pm, z0.position());
  Vec g;
  fw::Gaussian().gradient(z0.position(), g);
  const float h = s.step_size();
  StateOf<Sampler> expected = z0, gamma;
  gamma.momentum() = f.div_s;
  const Vec r = z0.momentum();
  expected.momentum() = r - h * f.s * g - h * f.ginv * r + h * f.div_s;
  expected.position() = z0.position() + h * f.s * (kick_drift ? expected.momentum() : r);
  check_step_and_gamma(what, s, model, z0, expected, gamma);
}

/// Stationarity of Algorithm-1 (explicit Euler) gSGRHMC-type chains on fw::Gaussian with the
/// default synthetic metric D = 1.5, C = 0.5: U + C >= 0.5 > floor, so s = √D (U + C)^{1/4},
/// ∇s = s ∇U / (4(U + C)) and ∇·S = ∇s. S is scalar but depends on both coordinates, so the
/// chain does not factorise; in d = 2, L = s r·∇_θ + F·∇_r + aΔ_r with a = s², F = m − a r,
/// m = ∇s − s∇U, and one Euler step (θ' = θ + hsr, r' = r + hF + noise) has
/// A₁f = ½s² rᵀ(∇²_θθ f) r + s Σ_jk r_j F_k ∂_θj ∂_rk f + ½ Σ_jk F_j F_k ∂_rj ∂_rk f + (terms
/// with at least two r-derivatives and three derivatives in all, zero for the ψ below). Two ψ
/// give closed forms (r integrated exactly, θ by parts):
///  - ψ = θ_i r_i: φ_i = Lψ = s r_i² + θ_i m_i − a θ_i r_i (a virial identity);
///    E_r A₁ψ = s E[r_i F_i] = −s³, so b₁ = h E[s³];
///  - ψ = −|r|²/2 + A(θ), ∇A = m/s = ∇(log s − U): φ = a(|r|² − 2),
///    b₁ = h E[|m|² + ½ m·∇s + a²].
/// E θ_i = 0 exactly (the chain commutes with (θ, r) → (−θ, −r)). Dropping ∇·S (naive gSGRHMC)
/// shifts the virial to first order by E[θ_i ∂_i s] > 0 (s grows with U).
template <class Sampler>
bool gsgrhmc_stationary(const char* what, const Sampler& s, long batch, std::uint64_t seed) {
  const double h = s.step_size();
  const Synthetic pm;  // the samplers below use the default metric
  const double scale = pm.scale, shift = pm.shift;
  // s, ∇s and m at θ = (x, y), in double.
  auto forms = [=](double x, double y, double& sx, double(&ds)[2], double(&m)[2]) {
    const double gu[2] = {x / kVar0, y / kVar1};
    const double u = 0.5 * (x * gu[0] + y * gu[1]);
    sx = std::sqrt(scale) * std::pow(u + shift, 0.25);
    for (int i = 0; i < 2; ++i) {
      ds[i] = sx * gu[i] / (4.0 * (u + shift));
      m[i] = ds[i] - sx * gu[i];
    }
  };
  const double b_virial = h * target_mean([&](double x, double y) {
                            double sx, ds[2], m[2];
                            forms(x, y, sx, ds, m);
                            return sx * sx * sx;
                          });
  const double b_a =
      h * target_mean([&](double x, double y) {
        double sx, ds[2], m[2];
        forms(x, y, sx, ds, m);
        return m[0] * m[0] + m[1] * m[1] + 0.5 * (m[0] * ds[0] + m[1] * ds[1]) + sx * sx * sx * sx;
      });
  Line() << what << ": h = " << static_cast<float>(h) << ", " << 40 * batch << " steps\n";
  StateOf<Sampler> z = s.start(Vec::Zero());
  Rng rng(seed);
  fw::BatchMeans<7> bm(batch);
  SGMCMC_CHECK(run_chain(s, z, rng, 2000, bm, [pm](const StateOf<Sampler>& w, double(&x)[7]) {
    const Vec th = w.position(), r = w.momentum();
    Vec gu;
    fw::Gaussian().gradient(th, gu);
    const float u1 = fw::Gaussian().potential(th) + pm.shift;
    const float sx = std::sqrt(pm.scale * std::sqrt(u1)), a = sx * sx;
    const Vec m = (sx / (4.0f * u1) - sx) * gu;
    for (int i = 0; i < 2; ++i) {
      x[i] = th[i];
      x[2 + i] = sx * r[i] * r[i] + th[i] * m[i] - a * th[i] * r[i];
      x[5 + i] = double(th[i]) * th[i];
    }
    x[4] = a * (r.squaredNorm() - 2.0f);
  }));
  bool ok = moment_ok("E theta_0      ", bm.mean(0), bm.standard_error(0), 0.0, 0.0);
  ok = moment_ok("E theta_1      ", bm.mean(1), bm.standard_error(1), 0.0, 0.0) && ok;
  ok = biased_ok("E virial_0     ", bm, 2, b_virial, h) && ok;
  ok = biased_ok("E virial_1     ", bm, 3, b_virial, h) && ok;
  ok = biased_ok("E a(|r|^2 - 2) ", bm, 4, b_a, h) && ok;
  report("E theta_0^2    ", bm, 5, kVar0);
  report("E theta_1^2    ", bm, 6, kVar1);
  return ok;
}

void run() {
  S::Params p;
  p.step_size = 0.05f;  // metric: the defaults D = 1.5, C = 0.5, floor 0.01
  const S s(p);
  SGMCMC_CHECK(static_cast<bool>(s.status()));

  Line() << "conformance\n";
  StateOf<S> z0 = s.start(start_position());
  z0.momentum() = Vec(0.3f, 0.5f);
  check_deterministic(s, z0, true);
  check_zero_noise("Algorithm 1, analytic div S", s, p.metric, z0, fw::Gaussian(), false);
  check_zero_noise("kick-drift, analytic div S", KD({p.step_size, {}}), p.metric, z0,
                   fw::Gaussian(), true);
  check_zero_noise("Algorithm 1, div S by AD of the potential", AD({p.step_size, {}}), p.metric, z0,
                   GaussianT(), false);
  {  // C = -0.5 puts θ = (1, 0) exactly on U + C = 0: the floor holds G⁻¹ at 1.5 √0.01, Γ = 0
    S::Params q = p;
    q.metric.shift = -0.5f;
    StateOf<S> w = z0;
    w.position() = Vec(1.0f, 0.0f);
    check_zero_noise("Algorithm 1 at the floor (U + C = 0)", S(q), q.metric, w, fw::Gaussian(),
                     false);
  }
  check_invalid_step_sizes<S>(p, fw::Gaussian(), z0);
  check_rejects("NaN gradient", s, fw::NanGradient(), z0, StatusCode::NonFiniteGradient);
  S::Params big = p;
  big.step_size = 100.0f;  // valid, but h * 3e38 overflows
  check_rejects("overflowing step", S(big), fw::HugeGradient(), z0, StatusCode::NonFiniteState,
                StatusCode::NonFiniteMetric);
  check_rejects("NaN position", s, fw::Gaussian(), nan_state(s), StatusCode::NonFiniteGradient);
  check_rejects("NaN potential value", s, fw::NanPotential(), z0, StatusCode::NonFiniteMetric);
  check_rejects("NaN potential value, AD", AD({p.step_size, {}}), NanPotentialT(), z0,
                StatusCode::NonFiniteMetric);
  {
    // D < 0 (G⁻¹ = D√a negative) and floor 0: refused by the constructor's check.
    S::Params q = p;
    q.metric.scale = -1.5f;
    SGMCMC_CHECK(S(q).status() == StatusCode::InvalidParameter);
    check_rejects("G^-1 negative (D = -1.5)", S(q), fw::Gaussian(), z0,
                  StatusCode::InvalidParameter);
    q = p;
    q.metric.floor = 0.0f;
    check_rejects("floor 0", S(q), fw::Gaussian(), z0, StatusCode::InvalidParameter);
  }
  {
    S noisy(p);
    // V̂ is checked against the state-dependent S V̂ S at every step, not when it is set.
    SGMCMC_CHECK(static_cast<bool>(noisy.set_gradient_noise(1.0e6f)));
    check_rejects("gradient noise V = 1e6", noisy, fw::Gaussian(), z0, StatusCode::NoiseNotPSD);
  }

  // Stationarity: 800000 steps in 40 batches of 20000, far longer than the integrated
  // autocorrelation times (below 100 steps here, measured on the host).
  Line() << "stationarity\n";
  SGMCMC_CHECK(
      gsgrhmc_stationary("gSGRHMC Algorithm 1, G^-1 = 1.5 sqrt(U + 0.5) I", s, 20000, 2024));
  // Negative control on the same check: naive gSGRHMC (recipe paper Eq. 27, ∇·S dropped).
  Line() << "negative control (must be outside)\n";
  SGMCMC_CHECK(!gsgrhmc_stationary("naive gSGRHMC (no div S)",
                                   sgmcmc::NaiveGSGRHMC<float, fw::kDim>({p.step_size, {}}), 20000,
                                   2025));
}

#else
#error "define one of SGMCMC_FW_SGRLD, _SGRHMC, _GSGRHMC"
#endif

}  // namespace

int main() {
  return fw::run_suite(kName, run);
}
