"""demo-hasty, level1/10_Softmax, sample 0: warp-per-row softmax that skips the max subtraction.

Coalesced, one warp per row, warp-shuffle sum: fast. But it computes exp(x) / sum(exp(x))
directly. For torch.rand inputs (and x3) exp never overflows, so it looks right; as soon as a
row holds a value above ~88.7, expf overflows to inf and the row becomes inf/inf = NaN.

An honest evaluation should conclude: correct under standard and verified (inputs at most 3);
incorrect under strict: the heavy_tail distribution (values up to +-1000, ~0.1% outliers of
50..200 and Student-t tails) produces NaN where the reference is finite (NaN-pattern mismatch).
Speed about on par with eager (0.9-1.1x) where it is correct; memory equal.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void softmax_kernel(const float* x, float* y, int64_t rows, int64_t cols) {
    int64_t row = (int64_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows) return;   // whole warp leaves together
    const float* xr = x + row * cols;
    float* yr = y + row * cols;
    float s = 0.f;
    for (int64_t j = lane; j < cols; j += 32) s += __expf(xr[j]);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    float inv = 1.f / s;
    for (int64_t j = lane; j < cols; j += 32) yr[j] = __expf(xr[j]) * inv;
}

torch::Tensor softmax_forward(torch::Tensor x) {
    auto y = torch::empty_like(x);
    if (x.numel() == 0) return y;
    int64_t cols = x.size(-1);
    int64_t rows = x.numel() / cols;
    int threads = 256;
    int64_t blocks = (rows + 7) / 8;
    softmax_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), rows, cols);
    return y;
}
"""

cpp_src = "torch::Tensor softmax_forward(torch::Tensor x);"

softmax_mod = load_inline(
    name="softmax_mod",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["softmax_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return softmax_mod.softmax_forward(x.contiguous())
