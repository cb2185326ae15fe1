import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

tanh_vec_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cstdint>

// Vectorised element-wise tanh: 128-bit loads/stores (float4) over the aligned body,
// scalar loop for the tail. Accurate tanhf, no fast-math.
__global__ void tanh_vec4_kernel(const float4* __restrict__ x4, float4* __restrict__ y4, int64_t n4) {
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += step) {
        float4 v = x4[i];
        v.x = tanhf(v.x);
        v.y = tanhf(v.y);
        v.z = tanhf(v.z);
        v.w = tanhf(v.w);
        y4[i] = v;
    }
}

__global__ void tanh_scalar_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t start, int64_t n) {
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        y[i] = tanhf(x[i]);
    }
}

// ---- host
torch::Tensor tanh_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "tanh_forward: CUDA tensor expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "tanh_forward: float32 expected");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return y;
    auto stream = at::cuda::getCurrentCUDAStream();
    const float* xp = x.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    const int threads = 256;
    const bool aligned = (reinterpret_cast<uintptr_t>(xp) % 16 == 0) && (reinterpret_cast<uintptr_t>(yp) % 16 == 0);
    int64_t done = 0;
    if (aligned) {
        const int64_t n4 = n / 4;
        if (n4 > 0) {
            const int64_t blocks = std::min<int64_t>((n4 + threads - 1) / threads, (int64_t)132 * 16);
            tanh_vec4_kernel<<<(unsigned)blocks, threads, 0, stream>>>(
                reinterpret_cast<const float4*>(xp), reinterpret_cast<float4*>(yp), n4);
            C10_CUDA_KERNEL_LAUNCH_CHECK();
        }
        done = n4 * 4;
    }
    if (done < n) {
        const int64_t rest = n - done;
        const int64_t blocks = std::min<int64_t>((rest + threads - 1) / threads, (int64_t)132 * 32);
        tanh_scalar_kernel<<<(unsigned)blocks, threads, 0, stream>>>(xp, yp, done, n);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    return y;
}
"""

tanh_vec_ext = load_inline(
    name="kbvown_tanh_vec4_24_1",
    cpp_sources="torch::Tensor tanh_forward(torch::Tensor x);",
    cuda_sources=tanh_vec_source,
    functions=["tanh_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return tanh_vec_ext.tanh_forward(x)
