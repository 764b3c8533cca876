# SPDX-License-Identifier: MIT
# Stan NUTS on the logistic-regression posteriors of docs/experiments/logreg.md (all rows of each
# data set, prepared as sgmcmc_logreg prepares them), for the side-by-side of
# docs/stan-comparison.md. Writes, per data set, OUT/NAME_TAG.csv (per coefficient: mean, sd,
# bulk and tail ESS, R-hat) and OUT/NAME_TAG_summary.csv (settings, CPU seconds, ESS per second,
# sampler diagnostics).
#
#   Rscript run_stan.R --data data/logreg --out out/stan --datasets heart,pima --tag default
#     [--chains 4] [--warmup 1000] [--draws 1000] [--metric diag_e] [--adapt-delta 0.8]
#     [--max-treedepth 10] [--seed 20170806] [--cache DIR] [--cores 1]
#
# Timing. Chains run one after another in this process (one core). Stan reports each chain's
# warm-up and sampling time as wall time; on a loaded machine that overstates its cost, so each
# chain's sampling time is taken as its CPU time (proc.time, user + system) times the sampling
# share of its wall time. "ESS per post-warmup chain-second" is min bulk ESS / the sum over chains
# of those sampling seconds.

suppressPackageStartupMessages(library(rstan))

args <- commandArgs(trailingOnly = TRUE)
opt <- list(data = "data/logreg", out = "out/stan", datasets = "heart", tag = "default",
            chains = 4L, warmup = 1000L, draws = 1000L, metric = "diag_e", adapt_delta = 0.8,
            max_treedepth = 10L, seed = 20170806L, cache = "", prior_sd = 10, cores = 1L)
i <- 1
while (i <= length(args)) {
  key <- sub("^--", "", args[i])
  key <- gsub("-", "_", key)
  if (!(key %in% names(opt)) || i == length(args)) stop("bad argument: ", args[i])
  val <- args[i + 1]
  opt[[key]] <- if (is.integer(opt[[key]])) as.integer(val) else
    if (is.numeric(opt[[key]])) as.numeric(val) else val
  i <- i + 2
}
if (opt$cache == "") opt$cache <- file.path(opt$out, "cache")
dir.create(opt$out, recursive = TRUE, showWarnings = FALSE)
dir.create(opt$cache, recursive = TRUE, showWarnings = FALSE)

# The preparation of sgmcmc_logreg (data/logreg/README.md): standardise every feature on all rows
# (n − 1 sd), Ripley's cubic basis [z1, z2, z1², z2², z1³, z2³] of the standardised inputs, an
# intercept column first. The last CSV column is y.
prepare <- function(name) {
  raw <- read.csv(file.path(opt$data, paste0(name, ".csv")))
  y <- as.integer(raw[[ncol(raw)]])
  x <- as.matrix(raw[, -ncol(raw), drop = FALSE])
  z <- scale(x, center = TRUE, scale = TRUE)
  if (name == "ripley") z <- cbind(z[, 1], z[, 2], z[, 1]^2, z[, 2]^2, z[, 1]^3, z[, 2]^3)
  list(N = nrow(z), D = ncol(z) + 1L, X = unname(cbind(1, z)), y = y, prior_sd = opt$prior_sd)
}

# The compiled model is cached as an .rds keyed by the program's md5 (compiling takes minutes).
stan_file <- file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE),
                                                       value = TRUE))), "logreg.stan")
load_model <- function() {
  key <- unname(tools::md5sum(stan_file))
  rds <- file.path(opt$cache, paste0("logreg_", key, ".rds"))
  if (file.exists(rds)) return(readRDS(rds))
  boost <- system.file("include", package = "BH")
  # Debian's r-cran-bh is an empty shell over libboost-dev's /usr/include.
  if (boost == "") boost <- "/usr/include"
  m <- stan_model(stan_file, model_name = "logreg", boost_lib = boost)
  saveRDS(m, rds)
  m
}

model <- load_model()

for (name in strsplit(opt$datasets, ",")[[1]]) {
  d <- prepare(name)
  # One chain: its draws, CPU seconds (user + system of this process, or of the forked child
  # with --cores > 1, whose counters start at zero) and wall times (warm-up, sampling).
  run_chain <- function(k) {
    t0 <- proc.time()
    fit <- sampling(model, data = d, chains = 1, iter = opt$warmup + opt$draws,
                    warmup = opt$warmup, seed = opt$seed, chain_id = k, refresh = 0,
                    control = list(metric = opt$metric, adapt_delta = opt$adapt_delta,
                                   max_treedepth = opt$max_treedepth))
    t1 <- proc.time() - t0
    sp <- get_sampler_params(fit, inc_warmup = FALSE)[[1]]
    list(cpu = t1[["user.self"]] + t1[["sys.self"]], wall = as.numeric(get_elapsed_time(fit)),
         draws = as.matrix(fit, pars = "beta"),  # draws × D
         diag = data.frame(chain = k, stepsize = sp[1, "stepsize__"],
                           leapfrog = mean(sp[, "n_leapfrog__"]),
                           treedepth_hit = mean(sp[, "treedepth__"] >= opt$max_treedepth),
                           divergent = sum(sp[, "divergent__"]),
                           accept = mean(sp[, "accept_stat__"])))
  }
  # --cores N runs N chains at a time (forked processes; for long reference runs).
  runs <- if (opt$cores > 1L) {
    parallel::mclapply(seq_len(opt$chains), run_chain, mc.cores = opt$cores)
  } else {
    lapply(seq_len(opt$chains), run_chain)
  }
  cpu <- sapply(runs, function(r) r$cpu)
  wall <- t(sapply(runs, function(r) r$wall))
  draws <- lapply(runs, function(r) r$draws)
  diag <- do.call(rbind, lapply(runs, function(r) r$diag))
  D <- d$D
  stats <- data.frame(coefficient = seq_len(D) - 1L, mean = 0, sd = 0, ess_bulk = 0,
                      ess_tail = 0, rhat = 0)
  for (j in seq_len(D)) {
    s <- sapply(draws, function(m) m[, j])  # iterations × chains
    stats$mean[j] <- mean(s)
    stats$sd[j] <- sd(as.vector(s))
    stats$ess_bulk[j] <- ess_bulk(s)
    stats$ess_tail[j] <- ess_tail(s)
    stats$rhat[j] <- Rhat(s)
  }
  share <- wall[, 2] / rowSums(wall)
  sampling_cpu <- sum(cpu * share)
  summary <- data.frame(
    dataset = name, tag = opt$tag, rows = d$N, dim = D, chains = opt$chains,
    warmup = opt$warmup, draws = opt$draws, metric = opt$metric, adapt_delta = opt$adapt_delta,
    max_treedepth = opt$max_treedepth, seed = opt$seed, cpu_seconds = sum(cpu),
    wall_warmup_seconds = sum(wall[, 1]), wall_sampling_seconds = sum(wall[, 2]),
    sampling_cpu_seconds = sampling_cpu, min_ess_bulk = min(stats$ess_bulk),
    min_ess_per_second = min(stats$ess_bulk) / sampling_cpu, max_rhat = max(stats$rhat),
    stepsize = mean(diag$stepsize), leapfrog = mean(diag$leapfrog),
    treedepth_hit = mean(diag$treedepth_hit), divergent = sum(diag$divergent),
    accept = mean(diag$accept))
  write.csv(stats, file.path(opt$out, paste0(name, "_", opt$tag, ".csv")), row.names = FALSE)
  write.csv(summary, file.path(opt$out, paste0(name, "_", opt$tag, "_summary.csv")),
            row.names = FALSE)
  cat(sprintf("%s [%s]: min bulk ESS %.0f, sampling CPU %.2f s, %.1f ESS/s, max R-hat %.3f, treedepth hits %.0f%%, %d divergent\n",
              name, opt$tag, summary$min_ess_bulk, sampling_cpu, summary$min_ess_per_second,
              summary$max_rhat, 100 * summary$treedepth_hit, summary$divergent))
}
