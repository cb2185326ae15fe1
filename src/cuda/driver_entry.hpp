#pragma once
// Driver API functions reached through the runtime's entry-point query, so that nothing links
// libcuda (CPU machines have none). Only .cpp files include it: it brings the CUDA headers.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <string>

namespace kbv::cuda {

// The driver's `name` (CUDA 12 ABI) as a function pointer of type Fn, or nullptr.
template <typename Fn>
Fn driver_function(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    fn = nullptr;
    cudaGetLastError();  // our failed query only: an error pending before it is not ours to clear
  }
  return reinterpret_cast<Fn>(fn);
}

// Sets `error` (when given), clears the runtime's last error, returns false: the tail of every
// failed driver call in src/cuda.
inline bool fail(std::string* error, const std::string& text) {
  if (error) *error = text;
  cudaGetLastError();
  return false;
}

}  // namespace kbv::cuda
