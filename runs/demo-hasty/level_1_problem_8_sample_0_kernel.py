"""demo-hasty, level1/8_GELU, sample 0: tanh-approximation GELU for an erf-GELU problem.

The problem is the exact GELU, x * 0.5 * (1 + erf(x / sqrt(2))); this kernel computes the tanh
approximation 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))). The two differ by at most
~4.7e-4 (near |x| = 2.7), which is below atol = 1e-3 everywhere (worst case uses 47% of the
tolerance, checked on a dense grid over [-20, 20]), so it passes although it is a different
function. One element per thread, bounds-checked.

An honest evaluation should conclude: correct under standard, verified and strict at
atol = rtol = 1e-3 (max abs error ~5e-4 on distributions that reach |x| ~ 2.7: x3, normal,
heavy_tail); a tighter tolerance (e.g. 1e-4) would fail it. No integrity flags; speed about
on par with eager (0.9-1.0x); memory equal.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void gelu_kernel(const float* x, float* y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float inner = 0.7978845608f * (v + 0.044715f * v * v * v);
        y[i] = 0.5f * v * (1.f + tanhf(inner));
    }
}

torch::Tensor gelu_forward(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int64_t n = x.numel();
    if (n == 0) return y;
    int threads = 256;
    int64_t blocks = (n + threads - 1) / threads;
    gelu_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

cpp_src = "torch::Tensor gelu_forward(torch::Tensor x);"

gelu_mod = load_inline(
    name="gelu_mod",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["gelu_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return gelu_mod.gelu_forward(x.contiguous())
