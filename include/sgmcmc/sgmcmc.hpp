// SPDX-License-Identifier: MIT
// Umbrella header: the core engine and every named sampler.
#pragma once

#include "sgmcmc/core/kinetic.hpp"
#include "sgmcmc/core/kinetic_mg.hpp"
#include "sgmcmc/core/layout.hpp"
#include "sgmcmc/core/model.hpp"
#include "sgmcmc/core/noise.hpp"
#include "sgmcmc/core/recipe.hpp"
#include "sgmcmc/core/status.hpp"
#include "sgmcmc/core/structure.hpp"
#include "sgmcmc/core/types.hpp"
#include "sgmcmc/port/clock.hpp"
#include "sgmcmc/port/rng.hpp"
#include "sgmcmc/samplers/hmc.hpp"
#include "sgmcmc/samplers/nuts.hpp"
#include "sgmcmc/samplers/sgd.hpp"
#include "sgmcmc/samplers/sghmc.hpp"
#include "sgmcmc/samplers/sghmc_learned.hpp"
#include "sgmcmc/samplers/sgld.hpp"
#include "sgmcmc/samplers/sgmgt.hpp"
#include "sgmcmc/samplers/sgnht.hpp"
