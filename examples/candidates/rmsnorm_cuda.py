"""RMSNorm (problems/level1/15_RMSNorm.py), one block per row: the honest control of
rmsnorm_unguarded_shared.py, whose final reduction step reads per-warp slots it never wrote.
Here the slots beyond the block's warps count as zero: correct under every protocol.
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

GUARDED = True

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
