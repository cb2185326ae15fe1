import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

mean_warp_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cstdint>

#define ROWS_PER_BLOCK 8

// One warp per row, 8 rows per 256-thread block. When every row start is 16-byte
// aligned (D % 4 == 0 and aligned base) the row is read with float4 loads; otherwise
// scalar loads. Float accumulation, warp-shuffle reduction, sum / D.
template <bool VEC>
__global__ void mean_lastdim_warp_kernel(const float* __restrict__ x, float* __restrict__ y,
                                         int64_t rows, int64_t D) {
    const int lane = threadIdx.x & 31;
    const int64_t warp_global = (int64_t)blockIdx.x * ROWS_PER_BLOCK + (threadIdx.x >> 5);
    const int64_t warp_step = (int64_t)gridDim.x * ROWS_PER_BLOCK;
    for (int64_t row = warp_global; row < rows; row += warp_step) {
        const float* xr = x + row * D;
        float acc = 0.0f;
        if (VEC) {
            const float4* xr4 = reinterpret_cast<const float4*>(xr);
            const int64_t D4 = D >> 2;
            float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
            for (int64_t j = lane; j < D4; j += 32) {
                const float4 v = __ldg(xr4 + j);
                a0 += v.x; a1 += v.y; a2 += v.z; a3 += v.w;
            }
            acc = (a0 + a1) + (a2 + a3);
        } else {
            for (int64_t j = lane; j < D; j += 32) acc += __ldg(xr + j);
        }
        #pragma unroll
        for (int off = 16; off > 0; off >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, off);
        if (lane == 0) y[row] = acc / (float)D;
    }
}

// ---- host
torch::Tensor mean_lastdim(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "mean_lastdim: CUDA tensor expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "mean_lastdim: float32 expected");
    TORCH_CHECK(x.dim() >= 1, "mean_lastdim: at least 1-D input expected");
    x = x.contiguous();
    const int64_t D = x.size(-1);
    std::vector<int64_t> out_sizes(x.sizes().begin(), x.sizes().end() - 1);
    auto y = torch::empty(out_sizes, x.options());
    const int64_t rows = y.numel();
    if (rows == 0) return y;
    const float* xp = x.data_ptr<float>();
    const bool vec = (D % 4 == 0) && (reinterpret_cast<uintptr_t>(xp) % 16 == 0);
    const int64_t blocks = std::min<int64_t>((rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK, (int64_t)1 << 20);
    auto stream = at::cuda::getCurrentCUDAStream();
    if (vec) {
        mean_lastdim_warp_kernel<true><<<(unsigned)blocks, 32 * ROWS_PER_BLOCK, 0, stream>>>(xp, y.data_ptr<float>(), rows, D);
    } else {
        mean_lastdim_warp_kernel<false><<<(unsigned)blocks, 32 * ROWS_PER_BLOCK, 0, stream>>>(xp, y.data_ptr<float>(), rows, D);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

mean_warp_ext = load_inline(
    name="kbvown_mean_warp_25_1",
    cpp_sources="torch::Tensor mean_lastdim(torch::Tensor x);",
    cuda_sources=mean_warp_source,
    functions=["mean_lastdim"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return mean_warp_ext.mean_lastdim(x)
