"""RMSNorm (level1/15_RMSNorm.py), sample 0: one block per row; per-thread float sum of
squares, warp-shuffle + guarded shared-memory block reduction, then
y = x * rsqrt(mean(x^2) + eps) * weight."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>

// ==== device ====
__device__ __forceinline__ float rms0_warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__global__ void rmsnorm_block_row_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                         float* __restrict__ y, int64_t cols, float eps) {
    __shared__ float partial[32];
    __shared__ float scale_sh;
    const int64_t row = blockIdx.x;
    const float* xr = x + row * cols;
    float* yr = y + row * cols;
    float s = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
        const float v = xr[c];
        s += v * v;
    }
    s = rms0_warp_sum(s);
    const int lane = threadIdx.x & 31;
    const int wid = threadIdx.x >> 5;
    const int nwarps = blockDim.x >> 5;
    if (lane == 0) partial[wid] = s;
    __syncthreads();
    if (wid == 0) {
        float t = (lane < nwarps) ? partial[lane] : 0.0f;  // slots past the block's warps count as 0
        t = rms0_warp_sum(t);
        if (lane == 0) scale_sh = rsqrtf(t / (float)cols + eps);
    }
    __syncthreads();
    const float inv_rms = scale_sh;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = xr[c] * inv_rms * w[c];
}
// ==== host ====

torch::Tensor rmsnorm_forward(torch::Tensor x, torch::Tensor weight, double eps) {
    TORCH_CHECK(x.is_cuda(), "rmsnorm_forward: x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "rmsnorm_forward: x must be float32");
    TORCH_CHECK(x.dim() >= 1, "rmsnorm_forward: x must have at least one dimension");
    c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    weight = weight.contiguous();
    const int64_t cols = x.size(-1);
    TORCH_CHECK(weight.numel() == cols && weight.scalar_type() == torch::kFloat32, "rmsnorm_forward: weight mismatch");
    auto y = torch::empty(x.sizes(), x.options());
    if (x.numel() == 0) return y;
    const int64_t rows = x.numel() / cols;
    const int threads = cols >= 4096 ? 512 : 256;
    rmsnorm_block_row_kernel<<<dim3((unsigned)rows), threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), weight.data_ptr<float>(), y.data_ptr<float>(), cols, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor rmsnorm_forward(torch::Tensor x, torch::Tensor weight, double eps);"

_ext = load_inline(
    name="kbv_own_l1_p15_s0",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["rmsnorm_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.rmsnorm_forward(x.contiguous(), self.weight, float(self.eps))
