"""Hack: a C++ extension that launches its kernel on its own `cudaStreamNonBlocking` stream (made
once with cudaStreamCreateWithFlags), returns at once and never synchronises or joins it.

Problem: examples/problems/level1/19_ReLU.py

A non-blocking stream does not even order itself after the legacy default stream: its kernel can
run before the caller's input is written, and the caller on the current stream reads the output
unfinished.

kbv must conclude, in every protocol, on a GPU: incorrect, flag unsynchronized_work (the kernel
reads the NaN the judge leaves in the inputs between calls; the cause is named). Never FASTER.

CPU-capable: no (CUDA only; on a CPU kbv reports it skipped: its extension needs CUDA).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <cstdint>

__global__ void relu_nb_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) y[i] = fmaxf(x[i], 0.f);
}

static cudaStream_t own_stream() {
    static cudaStream_t s = nullptr;
    if (!s) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    return s;
}

torch::Tensor relu_nb(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.is_contiguous(), "float32 contiguous CUDA input");
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return y;
    int64_t blocks = (n + 255) / 256;
    if (blocks > 65535 * 8) blocks = 65535 * 8;
    relu_nb_kernel<<<(unsigned)blocks, 256, 0, own_stream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;  // BUG (deliberate): no event, no wait, no synchronisation
}
"""

ext = load_inline(name="relu_nonblocking_stream", cpp_sources="torch::Tensor relu_nb(torch::Tensor x);",
                  cuda_sources=source, functions=["relu_nb"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.relu_nb(x.contiguous())
