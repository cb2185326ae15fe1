"""RMSNorm (problems/level1/15_RMSNorm.py) with an honest-looking bug: the last warp-level step of
the block reduction reads all 32 per-warp slots, but a 128-thread block writes only 4 of them.

The other 28 slots hold whatever the SM's shared memory held before. When the candidate shared a
process with kbv's reference kernels that was their leftovers; in a sandbox of its own it is
zeros and the bug would pass. kbv fills shared memory with garbage before every call, so this
kernel must be incorrect under every protocol. rmsnorm_cuda.py is the same kernel with the guard.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

constexpr int kThreads = 128;

__global__ void rms_rows(const float* x, const float* weight, float* y, long cols, float eps) {
    __shared__ float partial[32];
    __shared__ float scale;
    const float* row = x + blockIdx.x * cols;
    float* out = y + blockIdx.x * cols;
    float sum = 0.f;
    for (long c = threadIdx.x; c < cols; c += kThreads) sum += row[c] * row[c];
    for (int step = 16; step > 0; step /= 2) sum += __shfl_down_sync(0xffffffff, sum, step);
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = sum;
    __syncthreads();
    if (threadIdx.x < 32) {
        float total = GUARDED ? (threadIdx.x < kThreads / 32 ? partial[threadIdx.x] : 0.f) : partial[threadIdx.x];
        for (int step = 16; step > 0; step /= 2) total += __shfl_down_sync(0xffffffff, total, step);
        if (threadIdx.x == 0) scale = rsqrtf(total / cols + eps);
    }
    __syncthreads();
    for (long c = threadIdx.x; c < cols; c += kThreads) out[c] = row[c] * scale * weight[c];
}

torch::Tensor rms_norm(torch::Tensor x, torch::Tensor weight, double eps) {
    auto y = torch::empty_like(x);
    long cols = x.size(-1), rows = x.numel() / cols;
    if (rows > 0)
        rms_rows<<<rows, kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
            x.data_ptr<float>(), weight.data_ptr<float>(), y.data_ptr<float>(), cols, (float)eps);
    return y;
}
"""

GUARDED = False

ext = load_inline(
    name="rmsnorm_guarded" if GUARDED else "rmsnorm_unguarded",
    cpp_sources="torch::Tensor rms_norm(torch::Tensor x, torch::Tensor weight, double eps);",
    cuda_sources=SOURCE.replace("GUARDED", "true" if GUARDED else "false"),
    functions=["rms_norm"],
)


class ModelNew(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return ext.rms_norm(x.contiguous(), self.weight.contiguous(), self.eps)
