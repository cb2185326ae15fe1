"""demo-careful, level1/10_Softmax, sample 0: naive softmax, one thread per row.

Each thread owns one row and walks it three times (max, sum of exp(x - max), write), so it is
numerically safe (max subtracted) and correct for any shape, but the loads are uncoalesced
(neighbouring threads touch addresses 1 KiB apart) and there are only 524288 threads of long
serial work: far from the memory roofline.

An honest evaluation should conclude: correct under standard, verified and strict (including
heavy-tailed inputs, thanks to the max subtraction), no integrity flags; clearly slower than
eager on an H200 (expect roughly 0.2-0.5x); memory equal to the baseline.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

softmax_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cstdint>
#include <cfloat>

__global__ void softmax_row_per_thread(const float* __restrict__ x, float* __restrict__ y, int64_t rows, int64_t cols) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += stride) {
        const float* xr = x + r * cols;
        float* yr = y + r * cols;
        float m = -FLT_MAX;
        for (int64_t j = 0; j < cols; ++j) m = fmaxf(m, xr[j]);
        float s = 0.0f;
        for (int64_t j = 0; j < cols; ++j) s += expf(xr[j] - m);
        const float inv = 1.0f / s;
        for (int64_t j = 0; j < cols; ++j) yr[j] = expf(xr[j] - m) * inv;
    }
}

torch::Tensor softmax_naive(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "softmax_naive: float32 CUDA tensor expected");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    if (x.numel() == 0) return y;
    const int64_t cols = x.size(-1);
    const int64_t rows = x.numel() / cols;
    const int threads = 128;
    const int64_t blocks = std::min<int64_t>((rows + threads - 1) / threads, (int64_t)1 << 20);
    softmax_row_per_thread<<<(unsigned)blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), rows, cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

softmax_ext = load_inline(
    name="softmax_naive",
    cpp_sources="torch::Tensor softmax_naive(torch::Tensor x);",
    cuda_sources=softmax_source,
    functions=["softmax_naive"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return softmax_ext.softmax_naive(x.contiguous())
