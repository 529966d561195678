#pragma once
// Every factorization: approximate a dense matrix by a structured operator.
#include "strop/factorize/blast.hpp"
#include "strop/factorize/butterfly.hpp"
#include "strop/factorize/kron_approx.hpp"
#include "strop/factorize/lowrank.hpp"
#include "strop/factorize/monarch.hpp"
#include "strop/factorize/report.hpp"
#include "strop/factorize/stl.hpp"
