"""Correct C++-only Swish for level1/7_Swish.py (runs on CPU; no CUDA needed to build).

load_inline with cpp_sources holding the function body (a plain loop over contiguous float
data, no OpenMP) and functions=["swish_forward"]. It passes name="my_ext", the same name as
relu_cpp_ext.py: kbv must build both (in parallel, in one cache) without the two colliding.
A CUDA input is copied to the CPU, processed there and copied back, so it stays correct on a
GPU run too (slowly, and with no custom GPU kernel launched).

kbv must conclude: correct under every protocol (on CPU; on a GPU also correct, but slow and
reported as launching no custom CUDA kernel).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

swish_cpp_source = r"""
#include <cmath>

torch::Tensor swish_forward(torch::Tensor x, double beta) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "swish_forward: float32 expected");
    auto xc = x.to(torch::kCPU).contiguous();
    auto out = torch::empty_like(xc);
    const float* src = xc.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    const float b = static_cast<float>(beta);
    const int64_t n = xc.numel();
    for (int64_t i = 0; i < n; ++i) {
        const float v = src[i];
        dst[i] = v / (1.0f + std::exp(-b * v));
    }
    return out.to(x.device());
}
"""

my_ext = load_inline(
    name="my_ext",
    cpp_sources=swish_cpp_source,
    functions=["swish_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return my_ext.swish_forward(x, self.beta)
