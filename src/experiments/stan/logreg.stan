// SPDX-License-Identifier: MIT
// Bayesian logistic regression of docs/experiments/logreg.md, for the side-by-side with Stan
// (docs/stan-comparison.md): y_i ~ Bernoulli(logit⁻¹(x_iᵀβ)), β ~ N(0, prior_sd² I). X holds the
// prepared features (standardised, Ripley's cubic basis, intercept column first).
data {
  int<lower=1> N;
  int<lower=1> D;
  matrix[N, D] X;
  int<lower=0, upper=1> y[N];
  real<lower=0> prior_sd;
}
parameters {
  vector[D] beta;
}
model {
  beta ~ normal(0, prior_sd);
  // The fused GLM likelihood: Stan's fastest form of this model (one matrix-vector product and
  // an analytic gradient).
  y ~ bernoulli_logit_glm(X, 0, beta);
}
