"""Softmax over the last dim (level1/10_Softmax.py), sample 1: one block (128 threads) per row,
three passes (max, sum of exp(x - max), write) with shared-memory tree reductions.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cstdint>
#include <cmath>

#define SM_THREADS 128  // power of two, multiple of 32

__global__ void __launch_bounds__(SM_THREADS)
softmax_block_row_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t rows, int64_t D) {
    __shared__ float red[SM_THREADS];
    const int tid = threadIdx.x;
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {  // block-uniform loop
        const float* xr = x + row * D;
        float* yr = y + row * D;

        // pass 1: row max (every slot written, identity -inf for threads with no elements)
        float m = -INFINITY;
        for (int64_t j = tid; j < D; j += SM_THREADS) m = fmaxf(m, xr[j]);
        red[tid] = m;
        __syncthreads();
        for (int s = SM_THREADS / 2; s > 0; s >>= 1) {
            if (tid < s) red[tid] = fmaxf(red[tid], red[tid + s]);
            __syncthreads();
        }
        const float row_max = red[0];
        __syncthreads();  // everyone has read red[0] before it is overwritten

        // pass 2: sum of exp(x - max) (identity 0)
        float sum = 0.0f;
        for (int64_t j = tid; j < D; j += SM_THREADS) sum += expf(xr[j] - row_max);
        red[tid] = sum;
        __syncthreads();
        for (int s = SM_THREADS / 2; s > 0; s >>= 1) {
            if (tid < s) red[tid] += red[tid + s];
            __syncthreads();
        }
        const float inv = 1.0f / red[0];
        __syncthreads();  // red is reused by the next row

        // pass 3: write
        for (int64_t j = tid; j < D; j += SM_THREADS) yr[j] = expf(xr[j] - row_max) * inv;
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
    int64_t blocks = rows;
    if (blocks > 2147483647LL) blocks = 2147483647LL;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    softmax_block_row_kernel<<<(unsigned)blocks, SM_THREADS, 0, stream>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), rows, D);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor softmax_forward(torch::Tensor x);"

softmax_ext = load_inline(
    name="kbv_own_l1_p10_s1",
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
