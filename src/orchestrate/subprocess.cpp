#include "orchestrate/subprocess.hpp"
