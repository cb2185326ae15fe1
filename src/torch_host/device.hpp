#pragma once
// The device under evaluation: what it is, how to wait for it, and the TF32 switches that
// separate the two eager baselines.
#include <string>

#include <ATen/ATen.h>

#include "core/verdict.hpp"

namespace kbv::torch_host {

// "cuda", "cuda:1", "cpu". Throws std::runtime_error when CUDA is asked for but not available.
at::Device resolve_device(const std::string& spec);

DeviceInfo describe_device(const at::Device& device);

// Waits for all work on the device (every stream), so a measurement ends only when it ends.
void synchronize(const at::Device& device);

// TF32 on:  torch.set_float32_matmul_precision('high') and cuDNN TF32 on (KernelBench-Verified).
// TF32 off: matmul precision 'highest' and cuDNN TF32 off (true fp32 everywhere).
void set_tf32(bool on);

struct Tf32State {
  bool cublas = false;
  bool cudnn = false;
  std::string matmul_precision;
  bool operator==(const Tf32State&) const = default;
};
Tf32State read_tf32();
void restore_tf32(const Tf32State& state);
// What set_tf32(on) leaves behind.
Tf32State tf32_state_for(bool on);

}  // namespace kbv::torch_host
