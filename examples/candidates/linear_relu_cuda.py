"""Correct candidate for level1/40_Linear_ReLU.py: GEMM through at::addmm, ReLU in a custom
CUDA kernel.

The GEMM is not hand-written (no direct cuBLAS calls in the candidate): the C++ function calls
at::addmm(bias, x, weight.t()), which is exactly what nn.Linear does, then applies ReLU in place
with a custom float4 kernel on torch's current stream. The module keeps the same parameter
names as Model (self.linear = nn.Linear(...): linear.weight, linear.bias) so kbv can copy the
reference's weights into it (and re-initialise them under `strict`).

Because the GEMM is torch's own, its precision follows the process's TF32 setting just like
the baseline's, so it matches the reference under every protocol.

kbv must conclude: correct under every protocol, custom kernel launched; speedup about 1x
(the GEMM dominates; the fused-in-place ReLU saves one elementwise pass).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

linear_relu_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cstdint>

__global__ void relu_inplace_vec4(float4* __restrict__ y, int64_t n4) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 v = y[i];
        v.x = fmaxf(v.x, 0.f);
        v.y = fmaxf(v.y, 0.f);
        v.z = fmaxf(v.z, 0.f);
        v.w = fmaxf(v.w, 0.f);
        y[i] = v;
    }
}

__global__ void relu_inplace_scalar(float* __restrict__ y, int64_t start, int64_t n) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = fmaxf(y[i], 0.f);
    }
}

torch::Tensor linear_relu_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "linear_relu_cuda: CUDA tensors expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "linear_relu_cuda: float32 expected");
    TORCH_CHECK(x.dim() == 2, "linear_relu_cuda: x must be [batch, in_features]");
    // y = bias + x @ weight^T   (same op nn.Linear uses; a fresh, contiguous output)
    auto y = at::addmm(bias, x.contiguous(), weight.t());
    y = y.contiguous();
    const int64_t n = y.numel();
    if (n == 0) return y;

    float* yp = y.data_ptr<float>();
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const int threads = 256;
    const int64_t max_blocks = 65535;

    int64_t done = 0;
    if (reinterpret_cast<uintptr_t>(yp) % 16 == 0) {
        const int64_t n4 = n / 4;
        if (n4 > 0) {
            int64_t blocks = (n4 + threads - 1) / threads;
            if (blocks > max_blocks) blocks = max_blocks;
            relu_inplace_vec4<<<(unsigned)blocks, threads, 0, stream>>>(reinterpret_cast<float4*>(yp), n4);
            C10_CUDA_KERNEL_LAUNCH_CHECK();
        }
        done = n4 * 4;
    }
    const int64_t rest = n - done;
    if (rest > 0) {
        int64_t blocks = (rest + threads - 1) / threads;
        if (blocks > max_blocks) blocks = max_blocks;
        relu_inplace_scalar<<<(unsigned)blocks, threads, 0, stream>>>(yp, done, n);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return y;
}
"""

linear_relu_cpp_source = (
    "torch::Tensor linear_relu_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias);"
)

linear_relu = load_inline(
    name="linear_relu",
    cpp_sources=linear_relu_cpp_source,
    cuda_sources=linear_relu_cuda_source,
    functions=["linear_relu_cuda"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)  # same parameter names as Model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear_relu.linear_relu_cuda(x, self.linear.weight, self.linear.bias)
