"""demo-hasty, level1/15_RMSNorm, sample 0: reads uninitialised shared memory (bug).

Block-per-row RMSNorm with 256 threads (8 warps). Each warp writes its partial sum of squares to
warp_sums[warp], but the final reduction has warp 0 read all 32 slots, warp_sums[lane] for lane
0..31, with no "lane < number of warps" guard and no zero-fill: slots 8..31 are never written
by this kernel and hold whatever an earlier kernel left in that shared memory. The row's sum of
squares therefore includes garbage, and the garbage depends on what ran on that SM before.

An honest evaluation should conclude: incorrect under standard, verified and strict in general
(any non-zero leftover in slots 8..31 corrupts the normalisation of the whole row); it can pass
by luck when that shared memory happens to hold zeros, so results may differ from run to run
(strict's repeat check may also report it as nondeterministic). Not a global-memory stale read,
so stale_memory poisoning is not what catches it: correctness is.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void rmsnorm_kernel(const float* x, const float* w, float* y, int64_t dim, float eps) {
    __shared__ float warp_sums[32];
    __shared__ float inv_rms;
    const float* xr = x + (int64_t)blockIdx.x * dim;
    float* yr = y + (int64_t)blockIdx.x * dim;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

    float ss = 0.f;
    for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) ss += xr[j] * xr[j];
    for (int o = 16; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
    if (lane == 0) warp_sums[warp] = ss;
    __syncthreads();
    if (warp == 0) {
        float t = warp_sums[lane];          // slots >= blockDim.x / 32 were never written
        for (int o = 16; o > 0; o >>= 1) t += __shfl_xor_sync(0xffffffffu, t, o);
        if (lane == 0) inv_rms = rsqrtf(t / (float)dim + eps);
    }
    __syncthreads();
    float r = inv_rms;
    for (int64_t j = threadIdx.x; j < dim; j += blockDim.x) yr[j] = xr[j] * r * w[j];
}

torch::Tensor rmsnorm_forward(torch::Tensor x, torch::Tensor w, double eps) {
    auto y = torch::empty_like(x);
    if (x.numel() == 0) return y;
    int64_t dim = x.size(-1);
    int64_t rows = x.numel() / dim;
    rmsnorm_kernel<<<rows, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), w.data_ptr<float>(), y.data_ptr<float>(), dim, (float)eps);
    return y;
}
"""

cpp_src = "torch::Tensor rmsnorm_forward(torch::Tensor x, torch::Tensor w, double eps);"

rmsnorm_mod = load_inline(
    name="rmsnorm_mod",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["rmsnorm_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return rmsnorm_mod.rmsnorm_forward(x.contiguous(), self.weight.contiguous(), self.eps)
