#pragma once
// Device memory per process, as the driver accounts it (NVML), so the judge can see what the
// candidate's sandbox holds on the GPU without asking the sandbox: its CUDA context, its
// allocator's cache, raw cudaMalloc, extension statics, everything. NVML is loaded with dlopen
// (kbv never links libnvidia-ml) and creates no CUDA context.
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace kbv::cuda {

class ProcessMemory {
 public:
  // NVML's handle on the device CUDA calls `cuda_device` (matched by PCI bus id, so it holds
  // under CUDA_VISIBLE_DEVICES). nullptr with `error` set when NVML or the device is missing.
  static std::unique_ptr<ProcessMemory> open(int cuda_device, std::string* error);
  ~ProcessMemory();
  ProcessMemory(const ProcessMemory&) = delete;
  ProcessMemory& operator=(const ProcessMemory&) = delete;

  // Bytes of device memory each compute process on the device uses (host pids). nullopt when
  // NVML does not answer, or reports no figure for a process (some drivers, MIG without rights).
  std::optional<std::map<pid_t, std::int64_t>> used() const;

 private:
  ProcessMemory() = default;
  struct Nvml;
  std::unique_ptr<Nvml> nvml_;
};

}  // namespace kbv::cuda
