#include "torch_host/device.hpp"

#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include <ATen/Context.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime_api.h>

#include "core/speed_bound.hpp"

namespace kbv::torch_host {

at::Device resolve_device(const std::string& spec) {
  at::Device device(spec);
  if (device.is_cuda()) {
    if (!at::hasCUDA() || c10::cuda::device_count() == 0) {
      int count = 0;
      cudaError_t e = cudaGetDeviceCount(&count);
      cudaGetLastError();
      throw std::runtime_error("device '" + spec + "' asked for, but no CUDA device is visible (" +
                               (e == cudaSuccess ? std::string("none found") : cudaGetErrorString(e)) + "); use --device cpu");
    }
    if (!device.has_index()) device.set_index(0);
    c10::cuda::set_device(device.index());
  } else if (!device.is_cpu()) {
    throw std::runtime_error("unsupported device '" + spec + "'; use cuda[:N] or cpu");
  }
  return device;
}

namespace {
std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "cpu";
}

// KBV_PEAK_DRAM_BYTES_PER_S: for a device whose attributes misreport, and for testing
// implausible_speed where there is no GPU.
void apply_peak_override(DeviceInfo& info) {
  if (const char* v = std::getenv("KBV_PEAK_DRAM_BYTES_PER_S")) {
    char* end = nullptr;
    double peak = std::strtod(v, &end);
    if (end != v && peak > 0) info.peak_dram_bytes_per_s = peak;
  }
}
}  // namespace

DeviceInfo describe_device(const at::Device& device) {
  DeviceInfo info;
  if (!device.is_cuda()) {
    info.kind = "cpu";
    info.name = cpu_model_name();
    apply_peak_override(info);
    return info;
  }
  const cudaDeviceProp* prop = at::cuda::getDeviceProperties(device.index());
  info.kind = "cuda";
  info.name = prop->name;
  info.capability = std::to_string(prop->major) + "." + std::to_string(prop->minor);
  info.l2_bytes = prop->l2CacheSize;
  info.memory_bytes = static_cast<std::int64_t>(prop->totalGlobalMem);
  int driver = 0;
  if (cudaDriverGetVersion(&driver) == cudaSuccess)
    info.driver = "CUDA driver API " + std::to_string(driver / 1000) + "." + std::to_string((driver % 1000) / 10);
  int clock_khz = 0, bus_bits = 0;
  if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device.index()) == cudaSuccess &&
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device.index()) == cudaSuccess)
    info.peak_dram_bytes_per_s = peak_dram_bytes_per_s(clock_khz, bus_bits);
  cudaGetLastError();
  apply_peak_override(info);
  return info;
}

void synchronize(const at::Device& device) {
  if (device.is_cuda()) c10::cuda::device_synchronize();
}

void set_tf32(bool on) {
  auto& ctx = at::globalContext();
  ctx.setFloat32MatmulPrecision(on ? "high" : "highest");
  ctx.setAllowTF32CuBLAS(on);
  ctx.setAllowTF32CuDNN(on);
}

Tf32State read_tf32() {
  auto& ctx = at::globalContext();
  Tf32State s;
  s.cublas = ctx.allowTF32CuBLAS();
  s.cudnn = ctx.allowTF32CuDNN();
  switch (ctx.float32MatmulPrecision()) {
    case at::Float32MatmulPrecision::HIGHEST: s.matmul_precision = "highest"; break;
    case at::Float32MatmulPrecision::HIGH: s.matmul_precision = "high"; break;
    case at::Float32MatmulPrecision::MEDIUM: s.matmul_precision = "medium"; break;
  }
  return s;
}

void restore_tf32(const Tf32State& state) {
  auto& ctx = at::globalContext();
  // The precision last: setting the cuBLAS switch rewrites it.
  ctx.setAllowTF32CuBLAS(state.cublas);
  ctx.setAllowTF32CuDNN(state.cudnn);
  ctx.setFloat32MatmulPrecision(state.matmul_precision);
}

Tf32State tf32_state_for(bool on) { return {on, on, on ? "high" : "highest"}; }

}  // namespace kbv::torch_host
