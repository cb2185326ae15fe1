"""Incorrect CUDA ReLU for level1/19_ReLU.py: a row/column layout bug.

A mistake LLMs really make with 2-D launches: the kernel reads the input row-major
(x[row * cols + col]) but writes the output column-major (y[col * rows + row]). Every output
element is written (the mapping is a permutation, so no uninitialised memory is involved and
the result is deterministic), but almost every element lands in the wrong place: the output is
wrong on ordinary torch.rand inputs, at the default size and at the small size, for any shape
with more than one row and more than one column.

kbv must conclude: incorrect under every protocol (large max abs error on D1 already);
it compiles and runs without error.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = r"""
#include <torch/extension.h>

__global__ void relu2d_kernel(const float* x, float* y, int rows, int cols) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) {
        float v = x[row * cols + col];
        y[col * rows + row] = v > 0.f ? v : 0.f;   // BUG: output indexed column-major
    }
}

torch::Tensor relu_cuda(torch::Tensor x) {
    auto x2 = x.contiguous().view({x.size(0), -1});
    auto y = torch::empty_like(x2);
    int rows = x2.size(0);
    int cols = x2.size(1);
    dim3 block(32, 8);
    dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
    relu2d_kernel<<<grid, block>>>(x2.data_ptr<float>(), y.data_ptr<float>(), rows, cols);
    return y.view(x.sizes());
}
"""

relu = load_inline(
    name="relu",
    cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);",
    cuda_sources=relu_source,
    functions=["relu_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return relu.relu_cuda(x)
