import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

l2norm_block_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cstdint>

#define L2_THREADS 256

// One block per row. Pass 1: sum of squares (float), block reduction -> norm =
// sqrt(ss), clamped below at eps (a NaN norm stays NaN, like clamp_min). Pass 2:
// y = x / norm (true division, as the reference).
__global__ void l2norm_rows_block_kernel(const float* __restrict__ x, float* __restrict__ y,
                                         int64_t rows, int64_t D, float eps) {
    __shared__ float warp_sums[L2_THREADS / 32];
    __shared__ float s_norm;
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const float* xr = x + row * D;
        float* yr = y + row * D;
        float acc = 0.0f;
        for (int64_t j = threadIdx.x; j < D; j += L2_THREADS) {
            const float v = __ldg(xr + j);
            acc = fmaf(v, v, acc);
        }
        #pragma unroll
        for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
        if (lane == 0) warp_sums[warp] = acc;
        __syncthreads();
        if (warp == 0) {
            float v = (lane < L2_THREADS / 32) ? warp_sums[lane] : 0.0f;
            #pragma unroll
            for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
            if (lane == 0) {
                float n = sqrtf(v);
                s_norm = (n < eps) ? eps : n;
            }
        }
        __syncthreads();
        const float n = s_norm;
        for (int64_t j = threadIdx.x; j < D; j += L2_THREADS) yr[j] = __ldg(xr + j) / n;
        __syncthreads();
    }
}

// ---- host
torch::Tensor l2_normalize(torch::Tensor x, double eps) {
    TORCH_CHECK(x.is_cuda(), "l2_normalize: CUDA tensor expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "l2_normalize: float32 expected");
    TORCH_CHECK(x.dim() >= 1, "l2_normalize: at least 1-D input expected");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t D = x.size(-1);
    if (x.numel() == 0) return y;
    const int64_t rows = x.numel() / D;
    const int64_t blocks = std::min<int64_t>(rows, (int64_t)1 << 20);
    l2norm_rows_block_kernel<<<(unsigned)blocks, L2_THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), rows, D, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

l2norm_ext = load_inline(
    name="kbvown_l2norm_block_27_0",
    cpp_sources="torch::Tensor l2_normalize(torch::Tensor x, double eps);",
    cuda_sources=l2norm_block_source,
    functions=["l2_normalize"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.eps = 1e-12

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return l2norm_ext.l2_normalize(x, self.eps)
