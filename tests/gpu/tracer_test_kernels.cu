// Device code for the KernelTracer tests (see tracer_test_kernels.hpp).
#include "tracer_test_kernels.hpp"

namespace {

__device__ std::uint64_t global_timer_ns() {
  std::uint64_t t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace

// Outside any namespace so that the reported name is easy to predict:
// _Z22kbv_tracer_spin_kernelPil.
__global__ void kbv_tracer_spin_kernel(int* out, long spin_ns) {
  const std::uint64_t until = global_timer_ns() + static_cast<std::uint64_t>(spin_ns);
  while (global_timer_ns() < until) {
  }
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = i;
}

namespace kbv::cuda::test {

cudaError_t launch_spin_kernel(cudaStream_t stream, int blocks, int threads, int* out,
                               std::int64_t spin_ns) {
  kbv_tracer_spin_kernel<<<blocks, threads, 0, stream>>>(out, static_cast<long>(spin_ns));
  return cudaGetLastError();
}

}  // namespace kbv::cuda::test
