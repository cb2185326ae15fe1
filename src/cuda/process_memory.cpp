#include "cuda/process_memory.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include <cuda_runtime_api.h>

namespace kbv::cuda {
namespace {

// nvml.h's nvmlProcessInfo_t for the _v2/_v3 queries; nvmlReturn_t is an int, 0 NVML_SUCCESS.
struct NvmlProcessInfo {
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};
constexpr int kNvmlInsufficientSize = 7;
constexpr unsigned long long kNvmlValueNotAvailable = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE

// nvml.h's nvmlProcessUtilizationSample_t.
struct NvmlUtilizationSample {
  unsigned int pid;
  unsigned long long time_stamp;
  unsigned int sm_util, mem_util, enc_util, dec_util;
};
constexpr int kNvmlNotFound = 6;  // no sample since the time asked for

using NvmlInit = int (*)();
using NvmlShutdown = int (*)();
using NvmlHandleByBusId = int (*)(const char*, void**);
using NvmlProcesses = int (*)(void*, unsigned int*, NvmlProcessInfo*);
using NvmlUtilization = int (*)(void*, NvmlUtilizationSample*, unsigned int*, unsigned long long);

}  // namespace

struct ProcessMemory::Nvml {
  void* lib = nullptr;
  NvmlShutdown shutdown = nullptr;
  NvmlProcesses processes = nullptr;
  NvmlUtilization utilization = nullptr;  // absent in old drivers
  void* device = nullptr;
  ~Nvml() {
    if (shutdown) shutdown();
    if (lib) ::dlclose(lib);
  }
};

std::unique_ptr<ProcessMemory> ProcessMemory::open(int cuda_device, std::string* error) {
  auto nvml = std::make_unique<Nvml>();
  nvml->lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!nvml->lib) {
    *error = "NVML (libnvidia-ml.so.1) cannot be loaded";
    return nullptr;
  }
  auto init = reinterpret_cast<NvmlInit>(::dlsym(nvml->lib, "nvmlInit_v2"));
  auto by_bus_id = reinterpret_cast<NvmlHandleByBusId>(::dlsym(nvml->lib, "nvmlDeviceGetHandleByPciBusId_v2"));
  nvml->processes = reinterpret_cast<NvmlProcesses>(::dlsym(nvml->lib, "nvmlDeviceGetComputeRunningProcesses_v3"));
  if (!nvml->processes)
    nvml->processes = reinterpret_cast<NvmlProcesses>(::dlsym(nvml->lib, "nvmlDeviceGetComputeRunningProcesses_v2"));
  if (!init || !by_bus_id || !nvml->processes) {
    *error = "NVML lacks the per-process queries";
    return nullptr;
  }
  if (init() != 0) {
    *error = "NVML did not initialise";
    return nullptr;
  }
  nvml->shutdown = reinterpret_cast<NvmlShutdown>(::dlsym(nvml->lib, "nvmlShutdown"));
  nvml->utilization = reinterpret_cast<NvmlUtilization>(::dlsym(nvml->lib, "nvmlDeviceGetProcessUtilization"));
  char bus_id[64] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, cuda_device) != cudaSuccess) {
    *error = "CUDA gave no PCI bus id for device " + std::to_string(cuda_device);
    return nullptr;
  }
  if (by_bus_id(bus_id, &nvml->device) != 0) {
    *error = std::string("NVML does not know the device at ") + bus_id;
    return nullptr;
  }
  std::unique_ptr<ProcessMemory> out(new ProcessMemory());
  out->nvml_ = std::move(nvml);
  return out;
}

ProcessMemory::~ProcessMemory() = default;

std::optional<std::map<pid_t, std::int64_t>> ProcessMemory::used() const {
  std::vector<NvmlProcessInfo> infos(64);
  for (int attempt = 0; attempt < 4; ++attempt) {
    unsigned int count = static_cast<unsigned int>(infos.size());
    int rc = nvml_->processes(nvml_->device, &count, infos.data());
    if (rc == kNvmlInsufficientSize) {
      infos.resize(static_cast<std::size_t>(count) * 2 + 16);
      continue;
    }
    if (rc != 0) return std::nullopt;
    std::map<pid_t, std::int64_t> out;
    for (unsigned int i = 0; i < count; ++i) {
      if (infos[i].used_gpu_memory == kNvmlValueNotAvailable) return std::nullopt;
      out[static_cast<pid_t>(infos[i].pid)] += static_cast<std::int64_t>(infos[i].used_gpu_memory);
    }
    return out;
  }
  return std::nullopt;
}

std::uint64_t ProcessMemory::now_us() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

std::optional<std::set<pid_t>> ProcessMemory::working_since(std::uint64_t since) const {
  if (!nvml_->utilization) return std::nullopt;
  // Sized by a first call without a buffer, as NVML documents; never shrunk.
  unsigned int needed = 0;
  int rc = nvml_->utilization(nvml_->device, nullptr, &needed, since);
  if (rc == kNvmlNotFound) return std::set<pid_t>{};  // no process ran anything since
  std::vector<NvmlUtilizationSample> samples(std::max<std::size_t>(256, static_cast<std::size_t>(needed) * 2));
  for (int attempt = 0; attempt < 4; ++attempt) {
    unsigned int count = static_cast<unsigned int>(samples.size());
    rc = nvml_->utilization(nvml_->device, samples.data(), &count, since);
    if (rc == kNvmlNotFound) return std::set<pid_t>{};
    if (rc == kNvmlInsufficientSize) {
      samples.resize(std::max(samples.size() * 2, static_cast<std::size_t>(count) * 2 + 64));
      continue;
    }
    if (rc != 0) return std::nullopt;
    std::set<pid_t> out;
    for (unsigned int i = 0; i < count && i < samples.size(); ++i)
      if (samples[i].sm_util > 0 || samples[i].mem_util > 0) out.insert(static_cast<pid_t>(samples[i].pid));
    return out;
  }
  return std::nullopt;
}

}  // namespace kbv::cuda
