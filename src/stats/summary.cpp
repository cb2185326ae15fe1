#include "stats/summary.hpp"
