"""demo-hasty, level1/12_LayerNorm, sample 1: second attempt, compiles: Welford LayerNorm.

One block of 256 threads per row; each thread runs Welford's update over its strided elements,
then (count, mean, M2) triples are merged across the warp with __shfl_xor_sync and across warps
through shared memory (Chan's parallel merge). Biased variance, eps from the module, affine
weight and bias. Reads each row twice (statistics, then output). Any dim; grid-stride rows.

An honest evaluation should conclude: correct under standard, verified and strict (Welford is
stable on heavy-tailed and offset data), no integrity flags; speed about 0.7-1.0x of eager on
an H200 (the per-element division in Welford's update costs more than a plain two-pass sum);
memory equal to the baseline.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

struct WelfordStat { float n; float mean; float m2; };

__device__ __forceinline__ WelfordStat welford_merge(WelfordStat a, WelfordStat b) {
    if (b.n == 0.f) return a;
    if (a.n == 0.f) return b;
    WelfordStat r;
    r.n = a.n + b.n;
    float delta = b.mean - a.mean;
    float wb = b.n / r.n;
    r.mean = a.mean + delta * wb;
    r.m2 = a.m2 + b.m2 + delta * delta * a.n * wb;
    return r;
}

__device__ __forceinline__ WelfordStat warp_welford(WelfordStat s) {
    for (int o = 16; o > 0; o >>= 1) {
        WelfordStat other;
        other.n = __shfl_xor_sync(0xffffffffu, s.n, o);
        other.mean = __shfl_xor_sync(0xffffffffu, s.mean, o);
        other.m2 = __shfl_xor_sync(0xffffffffu, s.m2, o);
        s = welford_merge(s, other);
    }
    return s;
}

__global__ void layernorm_welford(const float* x, const float* w, const float* b, float* y,
                                  int64_t rows, int64_t dim, float eps) {
    __shared__ WelfordStat warp_stats[32];
    __shared__ float row_mean, row_rstd;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* xr = x + r * dim;
        float* yr = y + r * dim;
        WelfordStat s = {0.f, 0.f, 0.f};
        for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) {
            float v = xr[j];
            s.n += 1.f;
            float d = v - s.mean;
            s.mean += d / s.n;
            s.m2 += d * (v - s.mean);
        }
        s = warp_welford(s);
        if (lane == 0) warp_stats[warp] = s;
        __syncthreads();
        if (warp == 0) {
            WelfordStat t = lane < nwarps ? warp_stats[lane] : WelfordStat{0.f, 0.f, 0.f};
            t = warp_welford(t);
            if (lane == 0) {
                row_mean = t.mean;
                row_rstd = rsqrtf(t.m2 / (float)dim + eps);
            }
        }
        __syncthreads();
        float mean = row_mean, rstd = row_rstd;
        for (int64_t j = threadIdx.x; j < dim; j += blockDim.x)
            yr[j] = (xr[j] - mean) * rstd * w[j] + b[j];
        __syncthreads();   // row_mean/row_rstd/warp_stats are reused by the next row
    }
}

torch::Tensor layernorm_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps) {
    x = x.contiguous();
    w = w.contiguous();
    b = b.contiguous();
    auto y = torch::empty_like(x);
    if (x.numel() == 0) return y;
    int64_t dim = x.size(-1);
    int64_t rows = x.numel() / dim;
    int64_t blocks = std::min<int64_t>(rows, 65535 * 16);
    layernorm_welford<<<blocks, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), rows, dim, (float)eps);
    return y;
}
"""

cpp_src = "torch::Tensor layernorm_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps);"

layernorm_mod = load_inline(
    name="layernorm_mod",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["layernorm_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return layernorm_mod.layernorm_forward(x, self.norm.weight, self.norm.bias, self.norm.eps)
