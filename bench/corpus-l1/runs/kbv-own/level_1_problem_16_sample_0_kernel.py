"""Sum over one dimension, keepdim (level1/16_Sum_reduction.py), sample 0. The input is viewed
as [outer, R, inner] around the reduced dim. inner > 1: one thread per output column walks R
with coalesced loads across the inner index, four independent double accumulators.
inner == 1 (reducing the last dim): one warp per row, double accumulation, warp shuffles."""
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

// ==== device ====
// one thread per (o, i) output; x[(o * R + r) * inner + i]
__global__ void sum_columns_kernel(const float* __restrict__ x, float* __restrict__ y,
                                   int64_t outer, int64_t R, int64_t inner) {
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= outer * inner) return;
    const int64_t o = t / inner;
    const int64_t i = t - o * inner;
    const float* p = x + o * R * inner + i;
    double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
    int64_t r = 0;
    for (; r + 4 <= R; r += 4) {
        a0 += (double)p[(r + 0) * inner];
        a1 += (double)p[(r + 1) * inner];
        a2 += (double)p[(r + 2) * inner];
        a3 += (double)p[(r + 3) * inner];
    }
    for (; r < R; ++r) a0 += (double)p[r * inner];
    y[t] = (float)((a0 + a1) + (a2 + a3));
}

// one warp per row of length R (inner == 1)
__global__ void sum_rows_warp_kernel(const float* __restrict__ x, float* __restrict__ y,
                                     int64_t rows, int64_t R) {
    const int lane = threadIdx.x & 31;
    const int64_t row = (int64_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= rows) return;  // whole warp leaves together
    const float* p = x + row * R;
    double acc = 0.0;
    for (int64_t r = lane; r < R; r += 32) acc += (double)p[r];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (lane == 0) y[row] = (float)acc;
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
    const int64_t n_out = outer * inner;
    if (n_out == 0) return y;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const int threads = 256;
    if (inner == 1) {
        const int64_t blocks = (outer + 7) / 8;
        sum_rows_warp_kernel<<<dim3((unsigned)blocks), threads, 0, stream>>>(x.data_ptr<float>(), y.data_ptr<float>(), outer, R);
    } else {
        const int64_t blocks = (n_out + threads - 1) / threads;
        sum_columns_kernel<<<dim3((unsigned)blocks), threads, 0, stream>>>(x.data_ptr<float>(), y.data_ptr<float>(), outer, R, inner);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor sum_dim_forward(torch::Tensor x, int64_t dim);"

_ext = load_inline(
    name="kbv_own_l1_p16_s0",
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
