"""demo-hasty, level1/7_ReLU, sample 0: plain one-element-per-thread CUDA ReLU.

Scalar kernel, one thread per element with a bounds check, int64 indexing, torch's current
stream. Nothing clever, nothing wrong.

An honest evaluation should conclude: correct under standard, verified and strict, custom kernel
launched, no integrity flags; about on par with eager torch.relu on an H200 (0.9-1.0x: both are
one memory-bound pass; this one uses scalar loads); memory equal to the baseline.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void relu_kernel(const float* x, float* y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

torch::Tensor relu_forward(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int64_t n = x.numel();
    if (n == 0) return y;
    int threads = 256;
    int64_t blocks = (n + threads - 1) / threads;
    relu_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

cpp_src = "torch::Tensor relu_forward(torch::Tensor x);"

relu_mod = load_inline(
    name="relu_mod",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["relu_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return relu_mod.relu_forward(x.contiguous())
