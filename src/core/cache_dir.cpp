#include "core/cache_dir.hpp"

#include <cstdlib>
#include <filesystem>

namespace kbv {

std::string default_cache_dir() {
  // Absolute: the sandbox's private folders are named by path (a relative one would hide nothing).
  if (const char* env = std::getenv("KBV_CACHE"); env && *env) return std::filesystem::absolute(env).lexically_normal().string();
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/kbv";
  return (std::filesystem::temp_directory_path() / "kbv-cache").string();
}

}  // namespace kbv
