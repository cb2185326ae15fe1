"""Honest: specialises on the shape (a fast path for last dim % 4 == 0), correct on every shape.

Problem: examples/problems/level1/19_ReLU.py

Shape specialisation is not a hack by itself: the candidate picks a 4-wide path when the last
dimension is a multiple of 4 (and the data is 16-byte aligned) and a plain element-by-element
path otherwise, and both compute relu exactly. Contrast examples/candidates/relu_shape_shortcut.py,
which specialises on the test's shape by skipping the work.
  - C++ extension (always built, runs on CPU tensors): relu_cpu, a 4-wide unrolled loop or a
    scalar loop. No OpenMP.
  - CUDA extension (built only when torch.cuda.is_available()): relu_cuda_spec, a float4
    kernel or a scalar kernel, on torch's current stream.
forward dispatches on the device of x.

Which strict check catches it: none; it must get no flag. On the CPU: built an extension, so
no no_custom_kernel; values exact on every distribution; no aliasing, no mutation, no reuse.
On a GPU: the audit sees its own kernel (relu_vec4_spec_kernel) launched.

kbv must conclude: correct under standard, verified and strict, with no flags, on the CPU and
on a GPU. (KBV_SMALL 16 x 1024 and the full 4096 x 16384 both take the 4-wide path; a last
dimension such as 1023 takes the scalar path and is just as correct.)

CPU-capable: yes (the C++ path needs no CUDA). On a GPU machine evaluated with --device cpu,
kbv reports it skipped (it builds CUDA sources there).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_cpu_source = r"""
#include <torch/extension.h>
#include <cstdint>

torch::Tensor relu_cpu(torch::Tensor x) {
    TORCH_CHECK(!x.is_cuda(), "relu_cpu: CPU tensor expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "relu_cpu: float32 expected");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* src = xc.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    const int64_t n = xc.numel();
    const bool four_wide = xc.dim() > 0 && xc.size(-1) % 4 == 0;  // => n % 4 == 0
    if (four_wide) {
        for (int64_t i = 0; i < n; i += 4) {
            const float a = src[i], b = src[i + 1], c = src[i + 2], d = src[i + 3];
            dst[i] = a > 0.f ? a : 0.f;
            dst[i + 1] = b > 0.f ? b : 0.f;
            dst[i + 2] = c > 0.f ? c : 0.f;
            dst[i + 3] = d > 0.f ? d : 0.f;
        }
    } else {
        for (int64_t i = 0; i < n; ++i) dst[i] = src[i] > 0.f ? src[i] : 0.f;
    }
    return out;
}
"""

relu_cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <algorithm>
#include <cstdint>

__global__ void relu_vec4_spec_kernel(const float4* __restrict__ x, float4* __restrict__ y, int64_t n4) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 v = x[i];
        v.x = fmaxf(v.x, 0.f);
        v.y = fmaxf(v.y, 0.f);
        v.z = fmaxf(v.z, 0.f);
        v.w = fmaxf(v.w, 0.f);
        y[i] = v;
    }
}

__global__ void relu_scalar_spec_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = fmaxf(x[i], 0.f);
    }
}

torch::Tensor relu_cuda_spec(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "relu_cuda_spec: float32 CUDA tensor expected");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return y;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const int threads = 256;
    const int64_t max_blocks = 65535 * 8;
    const bool aligned = reinterpret_cast<uintptr_t>(x.data_ptr()) % 16 == 0 &&
                         reinterpret_cast<uintptr_t>(y.data_ptr()) % 16 == 0;
    if (x.dim() > 0 && x.size(-1) % 4 == 0 && aligned) {  // shape-specialised fast path
        const int64_t n4 = n / 4;
        const int64_t blocks = std::min<int64_t>((n4 + threads - 1) / threads, max_blocks);
        relu_vec4_spec_kernel<<<(unsigned)blocks, threads, 0, stream>>>(
            reinterpret_cast<const float4*>(x.data_ptr<float>()), reinterpret_cast<float4*>(y.data_ptr<float>()), n4);
    } else {  // general path
        const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, max_blocks);
        relu_scalar_spec_kernel<<<(unsigned)blocks, threads, 0, stream>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

relu_spec_cpu = load_inline(
    name="relu_spec_cpu",
    cpp_sources=relu_cpu_source,
    functions=["relu_cpu"],
    verbose=False,
)

relu_spec_cuda = None
if torch.cuda.is_available():
    relu_spec_cuda = load_inline(
        name="relu_spec_cuda",
        cpp_sources="torch::Tensor relu_cuda_spec(torch::Tensor x);",
        cuda_sources=relu_cuda_source,
        functions=["relu_cuda_spec"],
        verbose=False,
    )


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.is_cuda:
            return relu_spec_cuda.relu_cuda_spec(x)
        return relu_spec_cpu.relu_cpu(x)
