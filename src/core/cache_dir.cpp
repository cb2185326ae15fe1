#include "core/cache_dir.hpp"

#include <cstdlib>
#include <filesystem>

namespace kbv {

std::string default_cache_dir() {
  if (const char* env = std::getenv("KBV_CACHE"); env && *env) return env;
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/kbv";
  return (std::filesystem::temp_directory_path() / "kbv-cache").string();
}

}  // namespace kbv
