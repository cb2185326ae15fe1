"""Correct fused CUDA Swish for level1/7_Swish.py (Model(beta), beta = 1.5).

Eager PyTorch runs three elementwise kernels (beta * x, sigmoid, multiply), so it reads and
writes the 512 MiB tensor three times; this candidate does one pass (float4 loads/stores,
grid-stride, scalar tail), about 3x less DRAM traffic: genuinely faster than eager on an H200
under every baseline (TF32 does not affect elementwise ops).

kbv must conclude: correct under every protocol, custom kernel launched, speedup > 1
(expected around 2-3x) against both the TF32-off and TF32-on eager baselines.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

swish_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cstdint>

__device__ __forceinline__ float swish_f(float v, float beta) {
    // x * sigmoid(beta * x) == x / (1 + exp(-beta * x)); for very negative beta*x the
    // denominator is +inf and the result is -0, matching the reference within tolerance.
    return v / (1.0f + __expf(-beta * v));
}

__global__ void swish_vec4_kernel(const float4* __restrict__ x, float4* __restrict__ y,
                                  float beta, int64_t n4) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 v = x[i];
        v.x = swish_f(v.x, beta);
        v.y = swish_f(v.y, beta);
        v.z = swish_f(v.z, beta);
        v.w = swish_f(v.w, beta);
        y[i] = v;
    }
}

__global__ void swish_scalar_kernel(const float* __restrict__ x, float* __restrict__ y,
                                    float beta, int64_t start, int64_t n) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = swish_f(x[i], beta);
    }
}

torch::Tensor swish_cuda(torch::Tensor x, double beta) {
    TORCH_CHECK(x.is_cuda(), "swish_cuda: x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "swish_cuda: x must be float32");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return y;

    const float* xp = x.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    const float b = (float)beta;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const int threads = 256;
    const int64_t max_blocks = 132 * 16;  // enough to fill an H100/H200; grid-stride does the rest

    int64_t done = 0;
    if ((reinterpret_cast<uintptr_t>(xp) % 16 == 0) && (reinterpret_cast<uintptr_t>(yp) % 16 == 0)) {
        const int64_t n4 = n / 4;
        if (n4 > 0) {
            int64_t blocks = (n4 + threads - 1) / threads;
            if (blocks > max_blocks) blocks = max_blocks;
            swish_vec4_kernel<<<(unsigned)blocks, threads, 0, stream>>>(
                reinterpret_cast<const float4*>(xp), reinterpret_cast<float4*>(yp), b, n4);
            C10_CUDA_KERNEL_LAUNCH_CHECK();
        }
        done = n4 * 4;
    }
    const int64_t rest = n - done;
    if (rest > 0) {
        int64_t blocks = (rest + threads - 1) / threads;
        if (blocks > max_blocks) blocks = max_blocks;
        swish_scalar_kernel<<<(unsigned)blocks, threads, 0, stream>>>(xp, yp, b, done, n);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return y;
}
"""

swish = load_inline(
    name="swish",
    cpp_sources="torch::Tensor swish_cuda(torch::Tensor x, double beta);",
    cuda_sources=swish_source,
    functions=["swish_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return swish.swish_cuda(x.contiguous(), self.beta)
