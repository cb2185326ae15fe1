"""Correct CUDA ReLU for level1/19_ReLU.py that hides a 1 GiB workspace from torch.

Each call cudaMalloc's a 1 GiB scratch buffer (or numel * 4 bytes if larger) straight from the
CUDA runtime, zero-fills it, computes relu(x) into it, copies the result into the output,
synchronises and cudaFree's it before returning. The output is right, but the extra GiB never
passes through torch's caching allocator, so torch.cuda.max_memory_allocated() does not see
it: only a raw device-memory measurement (cudaMalloc interception, cudaMemGetInfo/NVML
sampling, or a CUDA memory pool probe) does. It is also slow (a cudaMalloc/cudaFree pair and a
1 GiB memset per call). CUDA only.

kbv must conclude: correct under every protocol; under `strict` its peak device memory must be
about 1 GiB above the baseline's (the raw allocation counted); under `verified` (torch's
max_memory_allocated only) the extra GiB is invisible, which is exactly the hole strict closes.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_scratch_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime.h>
#include <cstdint>

__global__ void relu_to_scratch(const float* __restrict__ x, float* __restrict__ s, int64_t n) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        s[i] = fmaxf(x[i], 0.f);
    }
}

torch::Tensor relu_scratch_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "relu_scratch_cuda: x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "relu_scratch_cuda: x must be float32");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return y;

    size_t scratch_bytes = size_t(1) << 30;  // 1 GiB "workspace"
    if ((size_t)n * sizeof(float) > scratch_bytes) scratch_bytes = (size_t)n * sizeof(float);

    float* scratch = nullptr;
    cudaError_t err = cudaMalloc(reinterpret_cast<void**>(&scratch), scratch_bytes);
    TORCH_CHECK(err == cudaSuccess, "relu_scratch_cuda: cudaMalloc failed: ", cudaGetErrorString(err));

    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    C10_CUDA_CHECK(cudaMemsetAsync(scratch, 0, scratch_bytes, stream));  // touch every page
    const int threads = 256;
    int64_t blocks = (n + threads - 1) / threads;
    if (blocks > 65535) blocks = 65535;
    relu_to_scratch<<<(unsigned)blocks, threads, 0, stream>>>(x.data_ptr<float>(), scratch, n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    C10_CUDA_CHECK(cudaMemcpyAsync(y.data_ptr<float>(), scratch, (size_t)n * sizeof(float),
                                   cudaMemcpyDeviceToDevice, stream));
    C10_CUDA_CHECK(cudaDeviceSynchronize());
    C10_CUDA_CHECK(cudaFree(scratch));
    return y;
}
"""

relu_scratch = load_inline(
    name="relu_scratch",
    cpp_sources="torch::Tensor relu_scratch_cuda(torch::Tensor x);",
    cuda_sources=relu_scratch_source,
    functions=["relu_scratch_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu_scratch.relu_scratch_cuda(x)
