"""RMSNorm (level1/15_RMSNorm.py), sample 1: one warp per row (8 rows per block), float4
loads/stores when the row length and pointers allow it (scalar path otherwise), warp-shuffle
sum of squares, y = x * rsqrt(mean(x^2) + eps) * weight."""
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
template <bool VEC>
__global__ void rmsnorm_warp_row_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                        float* __restrict__ y, int64_t rows, int64_t cols, float eps) {
    const int lane = threadIdx.x & 31;
    const int64_t row = (int64_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= rows) return;  // whole warp leaves together
    const float* xr = x + row * cols;
    float* yr = y + row * cols;
    float s = 0.0f;
    if (VEC) {
        const float4* x4 = reinterpret_cast<const float4*>(xr);
        const int64_t n4 = cols >> 2;
        for (int64_t i = lane; i < n4; i += 32) {
            const float4 v = x4[i];
            s += (v.x * v.x + v.y * v.y) + (v.z * v.z + v.w * v.w);
        }
    } else {
        for (int64_t i = lane; i < cols; i += 32) {
            const float v = xr[i];
            s += v * v;
        }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    const float inv_rms = rsqrtf(s / (float)cols + eps);
    if (VEC) {
        const float4* x4 = reinterpret_cast<const float4*>(xr);
        const float4* w4 = reinterpret_cast<const float4*>(w);
        float4* y4 = reinterpret_cast<float4*>(yr);
        const int64_t n4 = cols >> 2;
        for (int64_t i = lane; i < n4; i += 32) {
            const float4 v = x4[i];
            const float4 g = w4[i];
            float4 o;
            o.x = v.x * inv_rms * g.x;
            o.y = v.y * inv_rms * g.y;
            o.z = v.z * inv_rms * g.z;
            o.w = v.w * inv_rms * g.w;
            y4[i] = o;
        }
    } else {
        for (int64_t i = lane; i < cols; i += 32) yr[i] = xr[i] * inv_rms * w[i];
    }
}
// ==== host ====

static bool rms1_aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

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
    const float* xp = x.data_ptr<float>();
    const float* wp = weight.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    const bool vec = (cols % 4 == 0) && rms1_aligned16(xp) && rms1_aligned16(wp) && rms1_aligned16(yp);
    const int threads = 256;
    const int64_t blocks = (rows + 7) / 8;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    if (vec) {
        rmsnorm_warp_row_kernel<true><<<dim3((unsigned)blocks), threads, 0, stream>>>(xp, wp, yp, rows, cols, (float)eps);
    } else {
        rmsnorm_warp_row_kernel<false><<<dim3((unsigned)blocks), threads, 0, stream>>>(xp, wp, yp, rows, cols, (float)eps);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor rmsnorm_forward(torch::Tensor x, torch::Tensor weight, double eps);"

_ext = load_inline(
    name="kbv_own_l1_p15_s1",
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
