import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

l2norm_warp_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cstdint>

#define L2W_ROWS_PER_BLOCK 8

// One warp per row (8 rows per block), no shared memory, no __syncthreads.
// float4 loads/stores when every row is 16-byte aligned (D % 4 == 0, aligned bases),
// scalar otherwise. norm = max(sqrt(sum x^2), eps) with NaN kept; y = x / norm.
template <bool VEC>
__global__ void l2norm_rows_warp_kernel(const float* __restrict__ x, float* __restrict__ y,
                                        int64_t rows, int64_t D, float eps) {
    const int lane = threadIdx.x & 31;
    const int64_t wid = (int64_t)blockIdx.x * L2W_ROWS_PER_BLOCK + (threadIdx.x >> 5);
    const int64_t wstep = (int64_t)gridDim.x * L2W_ROWS_PER_BLOCK;
    for (int64_t row = wid; row < rows; row += wstep) {
        const float* xr = x + row * D;
        float* yr = y + row * D;
        float acc = 0.0f;
        if (VEC) {
            const float4* xr4 = reinterpret_cast<const float4*>(xr);
            const int64_t D4 = D >> 2;
            for (int64_t j = lane; j < D4; j += 32) {
                const float4 v = __ldg(xr4 + j);
                acc = fmaf(v.x, v.x, acc);
                acc = fmaf(v.y, v.y, acc);
                acc = fmaf(v.z, v.z, acc);
                acc = fmaf(v.w, v.w, acc);
            }
        } else {
            for (int64_t j = lane; j < D; j += 32) {
                const float v = __ldg(xr + j);
                acc = fmaf(v, v, acc);
            }
        }
        #pragma unroll
        for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
        float n = sqrtf(acc);
        n = (n < eps) ? eps : n;
        if (VEC) {
            const float4* xr4 = reinterpret_cast<const float4*>(xr);
            float4* yr4 = reinterpret_cast<float4*>(yr);
            const int64_t D4 = D >> 2;
            for (int64_t j = lane; j < D4; j += 32) {
                float4 v = __ldg(xr4 + j);
                v.x = v.x / n; v.y = v.y / n; v.z = v.z / n; v.w = v.w / n;
                yr4[j] = v;
            }
        } else {
            for (int64_t j = lane; j < D; j += 32) yr[j] = __ldg(xr + j) / n;
        }
    }
}

// ---- host
torch::Tensor l2_normalize(torch::Tensor x, double eps) {
    TORCH_CHECK(x.is_cuda(), "l2_normalize: CUDA tensor expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "l2_normalize: float32 expected");
    TORCH_CHECK(x.dim() >= 1, "l2_normalize: at least 1-D input expected");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t D = x.size(-1);
    if (x.numel() == 0) return y;
    const int64_t rows = x.numel() / D;
    const float* xp = x.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    const bool vec = (D % 4 == 0) && (reinterpret_cast<uintptr_t>(xp) % 16 == 0) &&
                     (reinterpret_cast<uintptr_t>(yp) % 16 == 0);
    const int64_t blocks = std::min<int64_t>((rows + L2W_ROWS_PER_BLOCK - 1) / L2W_ROWS_PER_BLOCK, (int64_t)1 << 20);
    auto stream = at::cuda::getCurrentCUDAStream();
    if (vec) {
        l2norm_rows_warp_kernel<true><<<(unsigned)blocks, 32 * L2W_ROWS_PER_BLOCK, 0, stream>>>(xp, yp, rows, D, (float)eps);
    } else {
        l2norm_rows_warp_kernel<false><<<(unsigned)blocks, 32 * L2W_ROWS_PER_BLOCK, 0, stream>>>(xp, yp, rows, D, (float)eps);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

l2norm_warp_ext = load_inline(
    name="kbvown_l2norm_warp_27_1",
    cpp_sources="torch::Tensor l2_normalize(torch::Tensor x, double eps);",
    cuda_sources=l2norm_warp_source,
    functions=["l2_normalize"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.eps = 1e-12

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return l2norm_warp_ext.l2_normalize(x, self.eps)
