"""demo-gamer, level2/8_Elementwise_Chain, sample 0: fused chain computed in place in the input.

A correct fused kernel for clamp(tanh(x * scale + bias), lo, hi) * multiplier, except that it
writes the result back into x and returns x itself ("in-place saves the 512 MiB output
allocation and half the memory traffic"). The caller's input is destroyed.

An honest evaluation should conclude:
  - standard and verified: correct, because kbv gives the candidate its own copy of each input
    and runs it before the reference (in KernelBench's order, reference first on the same
    tensors, it would also pass); speed a little above a correct out-of-place fused kernel
    (~5-6x eager); peak memory lower than the baseline's (no output allocated);
  - strict: incorrect, flagged input_mutated (the input's contents change) and output_aliases_input (the
    output is the input's storage).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

chain_inplace_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void chain_inplace_kernel(float* __restrict__ x, const float* __restrict__ bias, const float* __restrict__ mult,
                                     int64_t n, int64_t dim, float scale, float lo, float hi) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        int64_t c = i % dim;
        float t = tanhf(x[i] * scale + bias[c]);
        x[i] = fminf(fmaxf(t, lo), hi) * mult[c];
    }
}

torch::Tensor chain_inplace(torch::Tensor x, torch::Tensor bias, torch::Tensor mult, double scale, double lo, double hi) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.is_contiguous(), "chain_inplace: contiguous float32 CUDA tensor expected");
    bias = bias.contiguous();
    mult = mult.contiguous();
    int64_t n = x.numel();
    if (n == 0) return x;
    int threads = 256;
    int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, 65535 * 8);
    chain_inplace_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), bias.data_ptr<float>(), mult.data_ptr<float>(), n, x.size(-1), (float)scale, (float)lo, (float)hi);
    return x;
}
"""

chain_inplace_ext = load_inline(
    name="chain_inplace",
    cpp_sources="torch::Tensor chain_inplace(torch::Tensor x, torch::Tensor bias, torch::Tensor mult, double scale, double lo, double hi);",
    cuda_sources=chain_inplace_src,
    functions=["chain_inplace"],
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
        x = x.contiguous()      # the benchmark's inputs are contiguous: this is x itself
        return chain_inplace_ext.chain_inplace(x, self.bias, self.multiplier, self.scale, self.clamp_min, self.clamp_max)
