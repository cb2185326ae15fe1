"""demo-hasty, level1/21_Cumprod, sample 0: cumprod as exp(cumsum(log x)) (wrong for x <= 0).

One thread per row keeps a running sum of logf(x) and writes expf(sum): "products become sums in
log space, which is cheaper and more stable". True only for positive inputs. For negative
entries logf gives NaN (the sign is lost), and for exact zeros it gives -inf (exp(-inf) = 0
happens to be right). Runs along the last dimension of a contiguous 2-D input (the problem's
dim=1); it falls back to torch.cumprod for any other dim.

An honest evaluation should conclude: correct under standard (inputs in [0.75, 1.25), errors
~1e-6 relative); incorrect under verified (D4_neg: all inputs negative -> NaN outputs where the
reference is finite; D1-D3 pass) and strict (D4_neg, normal, heavy_tail, zeros_ties all have
negative entries). Slow-ish: one thread per row of 64; expect well above eager's speed anyway
(eager cumprod on this shape is slow), but the speed is moot once it is incorrect.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void cumprod_log_kernel(const float* x, float* y, int64_t rows, int64_t len) {
    int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* xr = x + r * len;
    float* yr = y + r * len;
    float acc = 0.f;
    for (int64_t j = 0; j < len; j++) {
        acc += logf(xr[j]);
        yr[j] = expf(acc);
    }
}

torch::Tensor cumprod_forward(torch::Tensor x) {
    auto y = torch::empty_like(x);
    if (x.numel() == 0) return y;
    int64_t len = x.size(-1);
    int64_t rows = x.numel() / len;
    int threads = 256;
    int64_t blocks = (rows + threads - 1) / threads;
    cumprod_log_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), rows, len);
    return y;
}
"""

cpp_src = "torch::Tensor cumprod_forward(torch::Tensor x);"

cumprod_mod = load_inline(
    name="cumprod_mod",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["cumprod_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        if x.dim() != 2 or self.dim not in (1, -1):
            return torch.cumprod(x, dim=self.dim)
        return cumprod_mod.cumprod_forward(x.contiguous())
