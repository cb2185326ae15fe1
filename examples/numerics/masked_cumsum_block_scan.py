"""Honest CUDA kernel for examples/numerics/93_masked_cumsum.py: one block per row; each of 1024
threads sums its contiguous chunk of x*mask, a block-wide scan of the chunk totals gives each
chunk's offset, and each thread writes its running sums. It adds in a different order from
torch.cumsum, nothing else.

kbv must conclude: correct under every protocol; where cancelling prefix sums put elements
outside atol = rtol = 1e-3 of the float32 reference, the numerics model must find an error of
eager's own size.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

constexpr int THREADS = 1024;

__global__ void masked_cumsum_rows(const float* x, const bool* mask, float* y, long long length) {
    __shared__ float totals[THREADS];
    const float* xr = x + blockIdx.x * length;
    const bool* mr = mask + blockIdx.x * length;
    float* yr = y + blockIdx.x * length;
    long long chunk = (length + THREADS - 1) / THREADS;
    long long begin = threadIdx.x * chunk, end = min(length, begin + chunk);
    float s = 0.f;
    for (long long i = begin; i < end; ++i) s += mr[i] ? xr[i] : 0.f;
    totals[threadIdx.x] = s;
    __syncthreads();
    for (int step = 1; step < THREADS; step <<= 1) {  // inclusive Hillis-Steele scan of the totals
        float add = threadIdx.x >= step ? totals[threadIdx.x - step] : 0.f;
        __syncthreads();
        totals[threadIdx.x] += add;
        __syncthreads();
    }
    float run = threadIdx.x > 0 ? totals[threadIdx.x - 1] : 0.f;
    for (long long i = begin; i < end; ++i) {
        run += mr[i] ? xr[i] : 0.f;
        yr[i] = run;
    }
}

torch::Tensor masked_cumsum(torch::Tensor x, torch::Tensor mask) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.scalar_type() == torch::kFloat32 && mask.scalar_type() == torch::kBool);
    x = x.contiguous();
    mask = mask.contiguous();
    auto y = torch::empty_like(x);
    if (x.numel() == 0) return y;
    masked_cumsum_rows<<<(unsigned)x.size(0), THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), mask.data_ptr<bool>(), y.data_ptr<float>(), x.size(1));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

ext = load_inline(name="kbv_numerics_masked_cumsum", cpp_sources="torch::Tensor masked_cumsum(torch::Tensor x, torch::Tensor mask);",
                  cuda_sources=source, functions=["masked_cumsum"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        assert dim == 1, "rows along dim 1 only"

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return ext.masked_cumsum(x, mask)
