#include "orchestrate/host.hpp"

#include <cstdlib>
#include <filesystem>
#include <optional>

#include "orchestrate/visible_devices.hpp"

namespace fs = std::filesystem;

namespace kbv {

std::vector<std::string> detect_devices() {
  std::optional<std::string> visible;
  if (const char* env = std::getenv("CUDA_VISIBLE_DEVICES")) visible = env;
  std::vector<std::string> devices = visible_cuda_devices(visible, gpu_inventory());
  if (devices.empty()) devices.push_back("cpu");
  return devices;
}

std::string default_device() { return detect_devices().front(); }

}  // namespace kbv
