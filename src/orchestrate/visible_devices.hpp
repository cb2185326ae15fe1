#pragma once
// Which GPUs `kbv run` may use when none are named: what CUDA itself would show this process.
// CUDA_VISIBLE_DEVICES is read by CUDA's rules: a comma-separated list of indices or UUIDs
// ("GPU-...", "MIG-..."), the list ending at the first entry that names no device (so "" and "-1"
// mean no GPU). Devices are then numbered cuda:0..cuda:k-1 in the variable's order (logical
// indices, as in CUDA): kbv passes the variable on to every judge and sandbox unchanged and
// hands each the logical index, so cuda:1 under CUDA_VISIBLE_DEVICES=3,5 is physical GPU 5.
#include <optional>
#include <string>
#include <vector>

namespace kbv {

// What the host says about its GPUs, gathered without initialising CUDA (injectable in tests).
struct GpuInventory {
  // Every GPU's UUID ("GPU-xxxxxxxx-..."), from NVML when libnvidia-ml could be loaded.
  std::optional<std::vector<std::string>> nvml_uuids;
  int device_files = 0;  // /dev/nvidia0, /dev/nvidia1... present
  // How many GPUs there are: NVML's count when known, else the device files'.
  int gpu_count() const;
};

// The inventory of this host: NVML through dlopen (never linked), and /dev/nvidiaN.
GpuInventory gpu_inventory();

// "cuda:0".."cuda:k-1" for the GPUs CUDA would show under `cuda_visible_devices` (nullopt: the
// variable is not set, every GPU). An index must be below the GPU count; a UUID must match
// one of NVML's (a unique prefix, as CUDA accepts) or, without NVML, is taken on trust; a
// repeated device ends the list, so two workers never share a GPU thinking it is two.
std::vector<std::string> visible_cuda_devices(const std::optional<std::string>& cuda_visible_devices,
                                              const GpuInventory& host);

}  // namespace kbv
