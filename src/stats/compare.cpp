#include "stats/compare.hpp"
