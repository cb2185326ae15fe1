#pragma once
// Launchers for the real kernels the KernelTracer tests need (tracer_test_kernels.cu): kbv_cuda
// has no device code, and cudaMemset* shows up in CUPTI as a memset, not as a kernel.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace kbv::cuda::test {

// The mangled name CUPTI reports contains this; the demangled one starts with it and "(".
inline constexpr const char* kSpinKernelName = "kbv_tracer_spin_kernel";

// Launches kbv_tracer_spin_kernel<<<blocks, threads, 0, stream>>>: every thread waits about
// `spin_ns` ns of GPU time, then writes its index into out[] (out must hold blocks * threads).
cudaError_t launch_spin_kernel(cudaStream_t stream, int blocks, int threads, int* out,
                               std::int64_t spin_ns);

}  // namespace kbv::cuda::test
