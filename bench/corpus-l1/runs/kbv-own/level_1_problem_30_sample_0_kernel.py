import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

instnorm_twopass_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cstdint>

#define IN_THREADS 512

__device__ __forceinline__ float block_sum(float v, float* s_red) {
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    #pragma unroll
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    if (lane == 0) s_red[warp] = v;
    __syncthreads();
    float r = (lane < IN_THREADS / 32) ? s_red[lane] : 0.0f;
    #pragma unroll
    for (int off = 16; off > 0; off >>= 1) r += __shfl_xor_sync(0xffffffffu, r, off);
    __syncthreads();   // s_red may be reused by the next call
    return r;          // every thread holds the block total
}

// One block per (n, c) plane, three sweeps: mean, then the centred sum of squares
// (two-pass, numerically stable biased variance), then y = (x - mean) * (1 / sqrt(var + eps)).
// Float accumulation throughout.
__global__ void instnorm_twopass_kernel(const float* __restrict__ x, float* __restrict__ y,
                                        int64_t planes, int64_t HW, float eps) {
    __shared__ float s_red[IN_THREADS / 32];
    for (int64_t plane = blockIdx.x; plane < planes; plane += gridDim.x) {
        const float* xp = x + plane * HW;
        float* yp = y + plane * HW;
        float s = 0.0f;
        for (int64_t i = threadIdx.x; i < HW; i += IN_THREADS) s += __ldg(xp + i);
        const float mean = block_sum(s, s_red) / (float)HW;
        float q = 0.0f;
        for (int64_t i = threadIdx.x; i < HW; i += IN_THREADS) {
            const float d = __ldg(xp + i) - mean;
            q = fmaf(d, d, q);
        }
        const float var = block_sum(q, s_red) / (float)HW;
        const float inv_std = 1.0f / sqrtf(var + eps);
        for (int64_t i = threadIdx.x; i < HW; i += IN_THREADS) yp[i] = (__ldg(xp + i) - mean) * inv_std;
    }
}

// ---- host
torch::Tensor instance_norm2d(torch::Tensor x, double eps) {
    TORCH_CHECK(x.is_cuda(), "instance_norm2d: CUDA tensor expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "instance_norm2d: float32 expected");
    TORCH_CHECK(x.dim() == 3 || x.dim() == 4, "instance_norm2d: 3-D or 4-D input expected");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t HW = x.size(-1) * x.size(-2);
    if (x.numel() == 0) return y;
    const int64_t planes = x.numel() / HW;
    const int64_t blocks = std::min<int64_t>(planes, (int64_t)1 << 20);
    instnorm_twopass_kernel<<<(unsigned)blocks, IN_THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), planes, HW, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

instnorm_ext = load_inline(
    name="kbvown_instnorm_twopass_30_0",
    cpp_sources="torch::Tensor instance_norm2d(torch::Tensor x, double eps);",
    cuda_sources=instnorm_twopass_source,
    functions=["instance_norm2d"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    # nn.InstanceNorm2d(channels): affine=False, track_running_stats=False -> no
    # parameters or buffers; statistics always come from the input itself.
    def __init__(self, channels: int):
        super().__init__()
        self.channels = channels
        self.eps = 1e-5

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return instnorm_ext.instance_norm2d(x, self.eps)
