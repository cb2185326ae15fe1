#include "orchestrate/host.hpp"

#include <cstdlib>
#include <filesystem>

namespace fs = std::filesystem;

namespace kbv {

std::string default_cache_dir() {
  if (const char* env = std::getenv("KBV_CACHE"); env && *env) return env;
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/kbv";
  return (fs::temp_directory_path() / "kbv-cache").string();
}

std::vector<std::string> detect_devices() {
  std::vector<std::string> devices;
  for (int i = 0; i < 64 && fs::exists("/dev/nvidia" + std::to_string(i)); ++i) devices.push_back("cuda:" + std::to_string(i));
  if (devices.empty()) devices.push_back("cpu");
  return devices;
}

std::string default_device() { return detect_devices().front(); }

}  // namespace kbv
