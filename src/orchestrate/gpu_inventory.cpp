// GPU UUIDs from NVML, loaded with dlopen at run time: kbv never links libnvidia-ml (the CLI
// must start on machines without a driver), and NVML, unlike CUDA, creates no context.
#include <dlfcn.h>

#include <filesystem>
#include <memory>

#include "orchestrate/visible_devices.hpp"

namespace kbv {
namespace {

// The few NVML entry points used, with their C signatures (nvml.h; nvmlReturn_t is an int,
// 0 is NVML_SUCCESS, a device handle an opaque pointer).
using NvmlInit = int (*)();
using NvmlShutdown = int (*)();
using NvmlCount = int (*)(unsigned int*);
using NvmlHandle = int (*)(unsigned int, void**);
using NvmlUuid = int (*)(void*, char*, unsigned int);
constexpr unsigned kUuidBufferBytes = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE is 96

std::optional<std::vector<std::string>> nvml_uuids() {
  void* lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return std::nullopt;
  std::unique_ptr<void, int (*)(void*)> close(lib, ::dlclose);
  auto init = reinterpret_cast<NvmlInit>(::dlsym(lib, "nvmlInit_v2"));
  auto shutdown = reinterpret_cast<NvmlShutdown>(::dlsym(lib, "nvmlShutdown"));
  auto count = reinterpret_cast<NvmlCount>(::dlsym(lib, "nvmlDeviceGetCount_v2"));
  auto handle = reinterpret_cast<NvmlHandle>(::dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
  auto uuid = reinterpret_cast<NvmlUuid>(::dlsym(lib, "nvmlDeviceGetUUID"));
  if (!init || !shutdown || !count || !handle || !uuid || init() != 0) return std::nullopt;
  std::optional<std::vector<std::string>> out;
  unsigned int n = 0;
  if (count(&n) == 0) {
    out.emplace();
    for (unsigned int i = 0; i < n; ++i) {
      void* device = nullptr;
      char buffer[kUuidBufferBytes] = {};
      if (handle(i, &device) != 0 || uuid(device, buffer, sizeof buffer) != 0) {
        out.reset();  // a partial list would miscount
        break;
      }
      out->push_back(buffer);
    }
  }
  shutdown();
  return out;
}

}  // namespace

GpuInventory gpu_inventory() {
  GpuInventory host;
  host.nvml_uuids = nvml_uuids();
  while (host.device_files < 64 && std::filesystem::exists("/dev/nvidia" + std::to_string(host.device_files)))
    ++host.device_files;
  return host;
}

}  // namespace kbv
