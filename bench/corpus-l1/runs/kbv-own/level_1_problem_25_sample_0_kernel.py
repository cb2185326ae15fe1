import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

mean_lastdim_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cstdint>

#define MEAN_THREADS 256

// One block per row: strided partial sums, warp-shuffle + shared-memory block
// reduction, float accumulation, then sum / D (0 / 0 = NaN for an empty row, as torch).
__global__ void mean_lastdim_block_kernel(const float* __restrict__ x, float* __restrict__ y,
                                          int64_t rows, int64_t D) {
    __shared__ float warp_sums[MEAN_THREADS / 32];
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const float* xr = x + row * D;
        float acc = 0.0f;
        for (int64_t j = threadIdx.x; j < D; j += MEAN_THREADS) acc += __ldg(xr + j);
        #pragma unroll
        for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
        const int lane = threadIdx.x & 31;
        const int warp = threadIdx.x >> 5;
        if (lane == 0) warp_sums[warp] = acc;
        __syncthreads();
        if (warp == 0) {
            float v = (lane < MEAN_THREADS / 32) ? warp_sums[lane] : 0.0f;
            #pragma unroll
            for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
            if (lane == 0) y[row] = v / (float)D;
        }
        __syncthreads();
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
    const int64_t blocks = std::min<int64_t>(rows, (int64_t)1 << 20);
    mean_lastdim_block_kernel<<<(unsigned)blocks, MEAN_THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), rows, D);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

mean_ext = load_inline(
    name="kbvown_mean_block_25_0",
    cpp_sources="torch::Tensor mean_lastdim(torch::Tensor x);",
    cuda_sources=mean_lastdim_source,
    functions=["mean_lastdim"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return mean_ext.mean_lastdim(x)
