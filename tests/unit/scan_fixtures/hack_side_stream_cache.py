"""Scan fixture (never imported): a ReLU that launches on its own non-blocking stream, caches
its output by input pointer, and falls back to PyTorch when the kernel raises.

The docstring mentions torch.cuda.Stream(), import threading and os.environ: prose, not code,
so none of that is a finding. Expected warnings: side_stream, result_caching, silent_fallback.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

# A comment is not code either: torch.cuda.Stream(), time.perf_counter = None

relu_source = r"""
#include <torch/extension.h>

// Comments in the CUDA are skipped too: cudaStreamCreate, std::thread, getenv("X").
__global__ void relu_kernel(const float* x, float* y, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = fmaxf(x[i], 0.f);
}

torch::Tensor relu_side(torch::Tensor x) {
    static cudaStream_t side = nullptr;
    if (!side) cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
    auto y = torch::empty_like(x);
    long n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256, 0, side>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

relu_ext = load_inline(
    name="relu_side",
    cpp_sources="torch::Tensor relu_side(torch::Tensor x);",
    cuda_sources=relu_source,
    functions=["relu_side"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.data_ptr() in self.cache:
            return self.cache[x.data_ptr()]
        try:
            y = relu_ext.relu_side(x)
        except RuntimeError:
            y = torch.relu(x)
        self.cache[x.data_ptr()] = y
        return y
