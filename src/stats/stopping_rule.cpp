#include "stats/stopping_rule.hpp"
