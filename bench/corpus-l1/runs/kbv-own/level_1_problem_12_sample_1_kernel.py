"""LayerNorm (level1/12_LayerNorm.py), sample 1: one warp per row, single-pass Welford
statistics per lane merged across the warp with Chan's formula (shuffle-down, then a
broadcast from lane 0), then a normalise + affine pass. Uses the module's weight and bias."""
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
__global__ void layernorm_warp_welford_kernel(const float* __restrict__ x,
                                              const float* __restrict__ w,
                                              const float* __restrict__ b,
                                              float* __restrict__ y,
                                              int64_t rows, int64_t cols, float eps) {
    const unsigned FULL = 0xffffffffu;
    const int lane = threadIdx.x & 31;
    const int64_t row = (int64_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= rows) return;  // whole warp leaves together; no block-level sync below
    const float* xr = x + row * cols;
    float* yr = y + row * cols;

    float cnt = 0.0f, mean = 0.0f, m2 = 0.0f;
    for (int64_t c = lane; c < cols; c += 32) {
        const float v = xr[c];
        cnt += 1.0f;
        const float d = v - mean;
        mean += d / cnt;
        m2 += d * (v - mean);
    }
    // merge lane statistics into lane 0 (Chan et al.)
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float cb = __shfl_down_sync(FULL, cnt, o);
        const float mb = __shfl_down_sync(FULL, mean, o);
        const float qb = __shfl_down_sync(FULL, m2, o);
        if (cb > 0.0f) {
            const float ct = cnt + cb;
            const float d = mb - mean;
            const float f = cb / ct;
            mean += d * f;
            m2 += qb + d * d * cnt * f;
            cnt = ct;
        }
    }
    mean = __shfl_sync(FULL, mean, 0);
    m2 = __shfl_sync(FULL, m2, 0);
    const float var = fmaxf(m2 / (float)cols, 0.0f);
    const float rstd = rsqrtf(var + eps);
    for (int64_t c = lane; c < cols; c += 32) yr[c] = (xr[c] - mean) * rstd * w[c] + b[c];
}
// ==== host ====

torch::Tensor layernorm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
    TORCH_CHECK(x.is_cuda(), "layernorm_forward: x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "layernorm_forward: x must be float32");
    TORCH_CHECK(x.dim() >= 1, "layernorm_forward: x must have at least one dimension");
    c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    weight = weight.contiguous();
    bias = bias.contiguous();
    const int64_t cols = x.size(-1);
    TORCH_CHECK(weight.numel() == cols && bias.numel() == cols, "layernorm_forward: weight/bias size mismatch");
    TORCH_CHECK(weight.scalar_type() == torch::kFloat32 && bias.scalar_type() == torch::kFloat32,
                "layernorm_forward: weight/bias must be float32");
    auto y = torch::empty(x.sizes(), x.options());
    if (x.numel() == 0) return y;
    const int64_t rows = x.numel() / cols;
    const int threads = 256;                 // 8 rows per block
    const int64_t rows_per_block = threads / 32;
    const int64_t blocks = (rows + rows_per_block - 1) / rows_per_block;
    layernorm_warp_welford_kernel<<<dim3((unsigned)blocks), threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(), y.data_ptr<float>(),
        rows, cols, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor layernorm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps);"

_ext = load_inline(
    name="kbv_own_l1_p12_s1",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["layernorm_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(dim)  # holds weight/bias under the same names as Model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.layernorm_forward(x.contiguous(), self.norm.weight, self.norm.bias, float(self.norm.eps))
