"""demo-hasty, level1/24_Tanh, sample 0: never writes the tensor it returns (bug; stale memory).

forward allocates y = torch.empty_like(x) and passes it to the extension, but the C++ function
re-binds its parameter (`out = torch::empty_like(x);`) before launching the kernel, so tanh(x)
is written into a temporary that is dropped on return. The caller's y is never written: it holds
whatever the caching allocator's recycled block held before (an earlier input, output, or the
reference result of an earlier call). In a timing loop on one input it can even hold the
previous call's correct answer, because the dropped temporary's block is handed out again.

An honest evaluation should conclude: incorrect under standard, verified and strict (kbv runs
the candidate before the reference on each distribution, so the recycled memory never holds this
distribution's answer); strict's stale_memory check should name it: with freed memory poisoned,
the poison pattern shows up in the output. Any speed figure is meaningless.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void tanh_kernel(const float* x, float* y, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = tanhf(x[i]);
}

void tanh_forward(torch::Tensor x, torch::Tensor out) {
    out = torch::empty_like(x);            // "make sure out has the right shape"
    int64_t n = x.numel();
    if (n == 0) return;
    int threads = 256;
    int64_t blocks = (n + threads - 1) / threads;
    tanh_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), out.data_ptr<float>(), n);
}
"""

cpp_src = "void tanh_forward(torch::Tensor x, torch::Tensor out);"

tanh_mod = load_inline(
    name="tanh_mod",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["tanh_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        tanh_mod.tanh_forward(x, y)
        return y
