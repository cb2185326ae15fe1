"""demo-hasty, level2/8_Elementwise_Chain, sample 1: fused, correct, but stages every
intermediate in a 4x-output workspace allocated on every call (memory-hungry).

The kernel computes the whole chain in registers but also writes x*scale, +bias, tanh and
clamp into a [4, numel] workspace ("kept for the backward pass"), allocated with torch::empty
on each call (2 GiB at the default size) and dropped when forward returns. Traffic is 0.5 GiB
read + 2.5 GiB written instead of eager's ~5 GiB, so it is still faster than eager.

An honest evaluation should conclude: correct under standard, verified and strict, custom
kernel launched, no integrity flags; faster than eager on an H200 (about 1.4-1.7x), but far
slower than a plain fused kernel (see demo-careful's sample); peak memory for one forward about
+2.5 GiB over the inputs versus eager's +1 GiB (roughly 2x the baseline's peak): a "faster but
memory-hungry" kernel that only a memory metric catches.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void chain_staged_kernel(const float* x, const float* bias, const float* mult, float* y, float* ws,
                                    int64_t n, int64_t dim, float scale, float lo, float hi) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        int64_t c = i % dim;
        float s = x[i] * scale;
        float b = s + bias[c];
        float t = tanhf(b);
        float cl = fminf(fmaxf(t, lo), hi);
        ws[i] = s;              // stage 0: scaled
        ws[n + i] = b;          // stage 1: biased
        ws[2 * n + i] = t;      // stage 2: tanh
        ws[3 * n + i] = cl;     // stage 3: clamped
        y[i] = cl * mult[c];
    }
}

torch::Tensor chain_staged(torch::Tensor x, torch::Tensor bias, torch::Tensor mult, double scale, double lo, double hi) {
    auto y = torch::empty_like(x);
    int64_t n = x.numel();
    if (n == 0) return y;
    auto ws = torch::empty({4, n}, x.options());   // intermediates, one slot per stage
    int threads = 256;
    int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, 65535 * 8);
    chain_staged_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), bias.data_ptr<float>(), mult.data_ptr<float>(), y.data_ptr<float>(), ws.data_ptr<float>(),
        n, x.size(-1), (float)scale, (float)lo, (float)hi);
    return y;
}
"""

cpp_src = "torch::Tensor chain_staged(torch::Tensor x, torch::Tensor bias, torch::Tensor mult, double scale, double lo, double hi);"

chain_staged_mod = load_inline(
    name="chain_staged_mod",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["chain_staged"],
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
        return chain_staged_mod.chain_staged(x.contiguous(), self.bias.contiguous(), self.multiplier.contiguous(),
                                             self.scale, self.clamp_min, self.clamp_max)
