"""Crashing CUDA candidate for level1/19_ReLU.py: an illegal memory access on the device.

The kernel computes the right value but stores it 2^40 floats (4 TiB) past the output
buffer: an address no allocation covers, so the GPU raises cudaErrorIllegalAddress
("an illegal memory access was encountered"). The error is asynchronous and sticky: the
launch itself succeeds, the error surfaces at the next synchronising call, and the CUDA context
of that process is unusable afterwards. CUDA only.

kbv must conclude: runtime_error (CUDA illegal address; the report should name it), under every
protocol; the worker's CUDA context is lost, so kbv must not reuse that worker for the next
candidate.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void relu_kernel(const float* x, float* y, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        // BUG (deliberate): index offset by 2^40 elements, far outside any allocation.
        y[i + (1L << 40)] = v > 0.f ? v : 0.f;
    }
}

torch::Tensor relu_cuda(torch::Tensor x) {
    x = x.contiguous();
    auto y = torch::empty_like(x);
    long n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

relu_oob = load_inline(
    name="relu_oob",
    cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);",
    cuda_sources=relu_source,
    functions=["relu_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return relu_oob.relu_cuda(x)
