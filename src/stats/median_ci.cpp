#include "stats/median_ci.hpp"
