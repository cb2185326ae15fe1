"""demo-hasty, level2/1_Gemm_Bias_ReLU, sample 0: cuBLAS GEMM + bias/ReLU kernel with a
missing bounds check (bug that only shows when out_features is not a multiple of 128).

The epilogue launches a grid of (ceil(cols / 128), rows) blocks of 128 threads and never
checks col < cols. At the default size (out_features 4096 = 32 x 128) every thread is in
range and the result is right. When cols % 128 != 0 (the KBV_SMALL size has out_features 96),
the extra threads of row r read bias[96..127] (past the end of the bias) and do a
read-modify-write of y[r*cols + col], which is an element of row r+1 (or past the end of y for
the last row), racing with that element's own thread: wrong values.

An honest evaluation should conclude: at the default size, correct under standard, verified
and strict (the bug is latent: kbv only runs the problem's shapes); at the KBV_SMALL size (or
any out_features % 128 != 0) incorrect under every protocol, possibly flaky (a race), and a
memory checker would report the out-of-bounds accesses. Speed at the default size about 1.0x.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void bias_relu_kernel(float* y, const float* bias, int cols) {
    int row = blockIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int64_t idx = (int64_t)row * cols + col;
    float v = y[idx] + bias[col];
    y[idx] = v > 0.0f ? v : 0.0f;
}

torch::Tensor linear_relu_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
    auto y = at::matmul(x, weight.t()).contiguous();
    int rows = y.size(0);
    int cols = y.size(1);
    dim3 block(128);
    dim3 grid((cols + 127) / 128, rows);
    bias_relu_kernel<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(y.data_ptr<float>(), bias.data_ptr<float>(), cols);
    return y;
}
"""

cpp_src = "torch::Tensor linear_relu_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias);"

linear_relu_mod = load_inline(
    name="linear_relu_mod",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["linear_relu_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return linear_relu_mod.linear_relu_forward(x.contiguous(), self.linear.weight, self.linear.bias.contiguous())
