"""Sum over one dimension, keepdim (level1/16_Sum_reduction.py), sample 1. The input is viewed
as [outer, R, inner]. inner > 1: 2-D blocks of 32 (inner columns) x 16 (slices of R); each
thread accumulates a strided share of R in double, then a shared-memory tree reduction over the
16 slices. inner == 1: one block per row with a shared-memory tree reduction."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>
#include <vector>

#define SUM1_TX 32
#define SUM1_TY 16
#define SUM1_ROW_THREADS 256

// ==== device ====
// grid.x = outer * tiles, tiles = ceil(inner / 32); block (32, 16)
__global__ void __launch_bounds__(SUM1_TX * SUM1_TY) sum_tiled_kernel(const float* __restrict__ x,
                                                                      float* __restrict__ y,
                                                                      int64_t R, int64_t inner,
                                                                      int64_t tiles) {
    __shared__ double sh[SUM1_TY][SUM1_TX + 1];
    const int64_t o = (int64_t)blockIdx.x / tiles;
    const int64_t tile = (int64_t)blockIdx.x - o * tiles;
    const int64_t i = tile * SUM1_TX + threadIdx.x;
    double acc = 0.0;
    if (i < inner) {
        const float* p = x + o * R * inner + i;
        for (int64_t r = threadIdx.y; r < R; r += SUM1_TY) acc += (double)p[r * inner];
    }
    sh[threadIdx.y][threadIdx.x] = acc;  // every slot is written (0 for columns past inner)
    __syncthreads();
#pragma unroll
    for (int s = SUM1_TY / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.y < s) sh[threadIdx.y][threadIdx.x] += sh[threadIdx.y + s][threadIdx.x];
        __syncthreads();
    }
    if (threadIdx.y == 0 && i < inner) y[o * inner + i] = (float)sh[0][threadIdx.x];
}

// one block per row (inner == 1)
__global__ void __launch_bounds__(SUM1_ROW_THREADS) sum_rows_block_kernel(const float* __restrict__ x,
                                                                          float* __restrict__ y, int64_t R) {
    __shared__ double sh[SUM1_ROW_THREADS];
    const float* p = x + (int64_t)blockIdx.x * R;
    double acc = 0.0;
    for (int64_t r = threadIdx.x; r < R; r += SUM1_ROW_THREADS) acc += (double)p[r];
    sh[threadIdx.x] = acc;
    __syncthreads();
#pragma unroll
    for (int s = SUM1_ROW_THREADS / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) y[blockIdx.x] = (float)sh[0];
}
// ==== host ====

torch::Tensor sum_dim_forward(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda(), "sum_dim_forward: x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "sum_dim_forward: x must be float32");
    TORCH_CHECK(x.dim() >= 1, "sum_dim_forward: x must have at least one dimension");
    c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    const int64_t nd = x.dim();
    const int64_t d = dim < 0 ? dim + nd : dim;
    TORCH_CHECK(d >= 0 && d < nd, "sum_dim_forward: dim out of range");
    int64_t outer = 1, inner = 1;
    for (int64_t k = 0; k < d; ++k) outer *= x.size(k);
    for (int64_t k = d + 1; k < nd; ++k) inner *= x.size(k);
    const int64_t R = x.size(d);
    std::vector<int64_t> out_sizes = x.sizes().vec();
    out_sizes[d] = 1;
    auto y = torch::empty(out_sizes, x.options());
    if (outer * inner == 0) return y;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    if (inner == 1) {
        TORCH_CHECK(outer <= 2147483647LL, "sum_dim_forward: too many rows");
        sum_rows_block_kernel<<<dim3((unsigned)outer), SUM1_ROW_THREADS, 0, stream>>>(x.data_ptr<float>(), y.data_ptr<float>(), R);
    } else {
        const int64_t tiles = (inner + SUM1_TX - 1) / SUM1_TX;
        const int64_t blocks = outer * tiles;
        TORCH_CHECK(blocks <= 2147483647LL, "sum_dim_forward: too many blocks");
        sum_tiled_kernel<<<dim3((unsigned)blocks), dim3(SUM1_TX, SUM1_TY), 0, stream>>>(
            x.data_ptr<float>(), y.data_ptr<float>(), R, inner, tiles);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor sum_dim_forward(torch::Tensor x, int64_t dim);"

_ext = load_inline(
    name="kbv_own_l1_p16_s1",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["sum_dim_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.sum_dim_forward(x.contiguous(), int(self.dim))
