#pragma once
// Driver API functions reached through the runtime's entry-point query, so that nothing links
// libcuda (CPU machines have none). Private to src/cuda: it includes the CUDA headers.
#include <cuda.h>
#include <cuda_runtime_api.h>

namespace kbv::cuda {

// The driver's `name` (CUDA 12 ABI) as a function pointer of type Fn, or nullptr.
template <typename Fn>
Fn driver_function(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess)
    fn = nullptr;
  cudaGetLastError();
  return reinterpret_cast<Fn>(fn);
}

}  // namespace kbv::cuda
