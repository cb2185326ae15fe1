#pragma once
// Where kbv keeps what outlives a command: builds, the Python API's staging, spill files.
#include <string>

namespace kbv {

// $KBV_CACHE, else ~/.cache/kbv, else a folder under the temp dir. Builds go to <cache>/builds.
std::string default_cache_dir();

}  // namespace kbv
