"""demo-hasty, level2/8_Elementwise_Chain, sample 0: fused chain with a wrong index (bug).

One fused kernel for clamp(tanh(x * scale + bias), lo, hi) * multiplier, but the per-column
parameters are indexed with the ROW (i / dim) instead of the column (i % dim). The row index is
always below dim at the default and small sizes, so nothing reads out of bounds and nothing
crashes: every element just gets some other column's bias and multiplier.

An honest evaluation should conclude: incorrect under standard, verified and strict (large
mismatches on every distribution; the bias is 0.2 * randn and the multiplier 1 + 0.25 * randn,
so the wrong column's values are visibly wrong). Compiles and runs; no integrity flag needed.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void chain_kernel(const float* x, const float* bias, const float* mult, float* y,
                             int64_t n, int64_t dim, float scale, float lo, float hi) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int64_t c = i / dim;   // column of element i
        float t = tanhf(x[i] * scale + bias[c]);
        t = fminf(fmaxf(t, lo), hi);
        y[i] = t * mult[c];
    }
}

torch::Tensor chain_forward(torch::Tensor x, torch::Tensor bias, torch::Tensor mult, double scale, double lo, double hi) {
    auto y = torch::empty_like(x);
    int64_t n = x.numel();
    if (n == 0) return y;
    int64_t dim = x.size(-1);
    int threads = 256;
    int64_t blocks = (n + threads - 1) / threads;
    chain_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), bias.data_ptr<float>(), mult.data_ptr<float>(), y.data_ptr<float>(),
        n, dim, (float)scale, (float)lo, (float)hi);
    return y;
}
"""

cpp_src = "torch::Tensor chain_forward(torch::Tensor x, torch::Tensor bias, torch::Tensor mult, double scale, double lo, double hi);"

chain_mod = load_inline(
    name="chain_mod",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["chain_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim, scale, clamp_min, clamp_max):
        super().__init__()
        self.scale = scale
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max
        self.bias = nn.Parameter(0.2 * torch.randn(dim))
        self.multiplier = nn.Parameter(1.0 + 0.25 * torch.randn(dim))

    def forward(self, x):
        return chain_mod.chain_forward(x.contiguous(), self.bias.contiguous(), self.multiplier.contiguous(),
                                       self.scale, self.clamp_min, self.clamp_max)
