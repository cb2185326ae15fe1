"""demo-hasty, level1/12_LayerNorm, sample 0: does not compile.

A block-per-row LayerNorm written against the pre-CUDA-9 warp intrinsics: it calls
__shfl_down(v, offset), which no longer exists (only __shfl_down_sync(mask, v, offset) does),
so nvcc stops with "identifier "__shfl_down" is undefined" and load_inline raises at import.
The algorithm would otherwise be fine.

An honest evaluation should conclude: compile error under standard, verified and strict (not
compiled, hence not correct); the compiler log must show the undefined identifier. No timing,
no memory, no integrity checks (nothing ran).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__device__ float warp_reduce(float v) {
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_down(v, offset);
    return v;
}

__global__ void layernorm_kernel(const float* x, const float* w, const float* b, float* y, int dim, float eps) {
    __shared__ float partial[32];
    __shared__ float stats[2];
    const float* xr = x + (int64_t)blockIdx.x * dim;
    float* yr = y + (int64_t)blockIdx.x * dim;
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

    float s = 0.f;
    for (int j = threadIdx.x; j < dim; j += blockDim.x) s += xr[j];
    s = warp_reduce(s);
    if (lane == 0) partial[warp] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.f;
        for (int k = 0; k < blockDim.x / 32; k++) t += partial[k];
        stats[0] = t / dim;
    }
    __syncthreads();
    float mean = stats[0];

    float q = 0.f;
    for (int j = threadIdx.x; j < dim; j += blockDim.x) { float d = xr[j] - mean; q += d * d; }
    q = warp_reduce(q);
    __syncthreads();
    if (lane == 0) partial[warp] = q;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.f;
        for (int k = 0; k < blockDim.x / 32; k++) t += partial[k];
        stats[1] = rsqrtf(t / dim + eps);
    }
    __syncthreads();
    float rstd = stats[1];
    for (int j = threadIdx.x; j < dim; j += blockDim.x) yr[j] = (xr[j] - mean) * rstd * w[j] + b[j];
}

torch::Tensor layernorm_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps) {
    auto y = torch::empty_like(x);
    int dim = x.size(-1);
    int rows = x.numel() / dim;
    layernorm_kernel<<<rows, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), dim, (float)eps);
    return y;
}
"""

cpp_src = "torch::Tensor layernorm_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps);"

layernorm_mod = load_inline(
    name="layernorm_mod",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["layernorm_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return layernorm_mod.layernorm_forward(x.contiguous(), self.norm.weight, self.norm.bias, self.norm.eps)
