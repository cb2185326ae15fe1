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
#include <set>
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

  // The processes the driver saw running work on the device (streaming multiprocessors busy in one
  // of its samples) since `since` (microseconds of the system clock, as NVML stamps its samples).
  // An idle process that only holds a context and memory (another judge waiting for its turn) is
  // not among them. nullopt when the driver keeps no per-process samples.
  std::optional<std::set<pid_t>> working_since(std::uint64_t since) const;
  static std::uint64_t now_us();

 private:
  ProcessMemory() = default;
  struct Nvml;
  std::unique_ptr<Nvml> nvml_;
};

}  // namespace kbv::cuda
