"""Softmax over the last dim (level1/10_Softmax.py), sample 0: one warp per row.

Pass 1: each lane keeps an online (max, sum-of-exp) pair over its strided elements, the pairs
are merged with warp shuffles; pass 2 writes exp(x - max) / sum. Accumulation in fp32.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cstdint>
#include <cmath>

// merge two (max, sum) partials; an empty partial is (-inf, 0)
__device__ __forceinline__ void online_merge(float& m, float& s, float m2, float s2) {
    const float mn = fmaxf(m, m2);
    if (mn == -INFINITY) { m = mn; s = 0.0f; return; }
    s = s * expf(m - mn) + s2 * expf(m2 - mn);
    m = mn;
}

__global__ void softmax_warp_row_kernel(const float* __restrict__ x, float* __restrict__ y,
                                        int64_t rows, int64_t D) {
    const int lane = threadIdx.x & 31;
    const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
    for (int64_t row = warp; row < rows; row += nwarps) {  // warp-uniform loop
        const float* xr = x + row * D;
        float* yr = y + row * D;
        float m = -INFINITY, s = 0.0f;
        for (int64_t j = lane; j < D; j += 32) {
            const float v = xr[j];
            if (v > m) { s = s * expf(m - v) + 1.0f; m = v; }
            else       { s += expf(v - m); }
        }
        #pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            const float m2 = __shfl_xor_sync(0xffffffffu, m, off);
            const float s2 = __shfl_xor_sync(0xffffffffu, s, off);
            online_merge(m, s, m2, s2);
        }
        const float inv = 1.0f / s;
        for (int64_t j = lane; j < D; j += 32) {
            yr[j] = expf(xr[j] - m) * inv;
        }
    }
}

// ---- host ----
torch::Tensor softmax_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "softmax_forward: x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "softmax_forward: x must be float32");
    TORCH_CHECK(x.dim() >= 1, "softmax_forward: x must have at least one dimension");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return y;
    const int64_t D = x.size(x.dim() - 1);
    const int64_t rows = n / D;
    const int threads = 256;                 // 8 warps = 8 rows per block
    const int64_t warps_per_block = threads / 32;
    int64_t blocks = (rows + warps_per_block - 1) / warps_per_block;
    if (blocks > 2147483647LL) blocks = 2147483647LL;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    softmax_warp_row_kernel<<<(unsigned)blocks, threads, 0, stream>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), rows, D);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor softmax_forward(torch::Tensor x);"

softmax_ext = load_inline(
    name="kbv_own_l1_p10_s0",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["softmax_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softmax_ext.softmax_forward(x.contiguous())
