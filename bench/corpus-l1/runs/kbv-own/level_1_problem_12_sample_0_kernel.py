"""LayerNorm (level1/12_LayerNorm.py), sample 0: one block per row, two-pass statistics
(mean, then mean of squared deviations) with warp-shuffle block reductions; float4 loads
when the row length and pointers allow it. Uses the module's weight and bias."""
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
__device__ __forceinline__ float ln_warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Block-wide sum, result in every thread. blockDim.x is a multiple of 32, at most 1024.
__device__ __forceinline__ float ln_block_sum(float v, float* sh) {
    const int lane = threadIdx.x & 31;
    const int wid = threadIdx.x >> 5;
    const int nwarps = blockDim.x >> 5;
    v = ln_warp_sum(v);
    __syncthreads();  // earlier readers of sh are done
    if (lane == 0) sh[wid] = v;
    __syncthreads();
    const float t = (lane < nwarps) ? sh[lane] : 0.0f;  // only slots written above are read
    return ln_warp_sum(t);
}

template <bool VEC>
__global__ void layernorm_rows_twopass_kernel(const float* __restrict__ x,
                                              const float* __restrict__ w,
                                              const float* __restrict__ b,
                                              float* __restrict__ y,
                                              int64_t cols, float eps) {
    __shared__ float sh[32];
    const int64_t row = blockIdx.x;
    const float* xr = x + row * cols;
    float* yr = y + row * cols;

    // pass 1: mean
    float s = 0.0f;
    if (VEC) {
        const float4* x4 = reinterpret_cast<const float4*>(xr);
        const int64_t n4 = cols >> 2;
        for (int64_t i = threadIdx.x; i < n4; i += blockDim.x) {
            const float4 v = x4[i];
            s += (v.x + v.y) + (v.z + v.w);
        }
    } else {
        for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) s += xr[i];
    }
    const float mean = ln_block_sum(s, sh) / (float)cols;

    // pass 2: biased variance from squared deviations
    float q = 0.0f;
    if (VEC) {
        const float4* x4 = reinterpret_cast<const float4*>(xr);
        const int64_t n4 = cols >> 2;
        for (int64_t i = threadIdx.x; i < n4; i += blockDim.x) {
            const float4 v = x4[i];
            const float d0 = v.x - mean, d1 = v.y - mean, d2 = v.z - mean, d3 = v.w - mean;
            q += (d0 * d0 + d1 * d1) + (d2 * d2 + d3 * d3);
        }
    } else {
        for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
            const float d = xr[i] - mean;
            q += d * d;
        }
    }
    const float var = ln_block_sum(q, sh) / (float)cols;
    const float rstd = rsqrtf(var + eps);

    // pass 3: normalise and apply the affine transform
    if (VEC) {
        const float4* x4 = reinterpret_cast<const float4*>(xr);
        const float4* w4 = reinterpret_cast<const float4*>(w);
        const float4* b4 = reinterpret_cast<const float4*>(b);
        float4* y4 = reinterpret_cast<float4*>(yr);
        const int64_t n4 = cols >> 2;
        for (int64_t i = threadIdx.x; i < n4; i += blockDim.x) {
            const float4 v = x4[i];
            const float4 g = w4[i];
            const float4 bb = b4[i];
            float4 o;
            o.x = (v.x - mean) * rstd * g.x + bb.x;
            o.y = (v.y - mean) * rstd * g.y + bb.y;
            o.z = (v.z - mean) * rstd * g.z + bb.z;
            o.w = (v.w - mean) * rstd * g.w + bb.w;
            y4[i] = o;
        }
    } else {
        for (int64_t i = threadIdx.x; i < cols; i += blockDim.x)
            yr[i] = (xr[i] - mean) * rstd * w[i] + b[i];
    }
}
// ==== host ====

static bool ln_aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

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
    const float* xp = x.data_ptr<float>();
    const float* wp = weight.data_ptr<float>();
    const float* bp = bias.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    const bool vec = (cols % 4 == 0) && ln_aligned16(xp) && ln_aligned16(wp) && ln_aligned16(bp) && ln_aligned16(yp);
    const int threads = cols >= 4096 ? 512 : 256;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    if (vec) {
        layernorm_rows_twopass_kernel<true><<<dim3((unsigned)rows), threads, 0, stream>>>(xp, wp, bp, yp, cols, (float)eps);
    } else {
        layernorm_rows_twopass_kernel<false><<<dim3((unsigned)rows), threads, 0, stream>>>(xp, wp, bp, yp, cols, (float)eps);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor layernorm_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps);"

_ext = load_inline(
    name="kbv_own_l1_p12_s0",
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
