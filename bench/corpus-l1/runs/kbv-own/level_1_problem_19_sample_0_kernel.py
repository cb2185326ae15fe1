"""MSE loss mean((p - t)^2) (level1/19_MSELoss.py), sample 0: persistent grid-stride kernel
(a few blocks per SM) with float4 loads when both inputs are 16-byte aligned, per-thread
double accumulation, warp-shuffle block reduction into one double partial per block; a second
single-block kernel sums the partials in a fixed order (deterministic) and divides by numel."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>
#include <vector>

// ==== device ====
__device__ __forceinline__ double mse0_warp_sum(double v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Block sum in double; every thread gets the result.
__device__ __forceinline__ double mse0_block_sum(double v, double* sh) {
    const int lane = threadIdx.x & 31;
    const int wid = threadIdx.x >> 5;
    const int nwarps = blockDim.x >> 5;
    v = mse0_warp_sum(v);
    __syncthreads();
    if (lane == 0) sh[wid] = v;
    __syncthreads();
    const double t = (lane < nwarps) ? sh[lane] : 0.0;  // unwritten slots are never read
    return mse0_warp_sum(t);
}

template <bool VEC>
__global__ void mse_partial_gridstride_kernel(const float* __restrict__ p, const float* __restrict__ t,
                                              double* __restrict__ part, int64_t n) {
    __shared__ double sh[32];
    const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    double acc = 0.0;
    int64_t tail_start = 0;
    if (VEC) {
        const float4* p4 = reinterpret_cast<const float4*>(p);
        const float4* t4 = reinterpret_cast<const float4*>(t);
        const int64_t n4 = n >> 2;
        for (int64_t i = tid; i < n4; i += stride) {
            const float4 a = p4[i];
            const float4 b = t4[i];
            const float d0 = a.x - b.x, d1 = a.y - b.y, d2 = a.z - b.z, d3 = a.w - b.w;
            acc += (double)((d0 * d0 + d1 * d1) + (d2 * d2 + d3 * d3));
        }
        tail_start = n4 << 2;
    }
    for (int64_t i = tail_start + tid; i < n; i += stride) {
        const float d = p[i] - t[i];
        acc += (double)(d * d);
    }
    const double total = mse0_block_sum(acc, sh);
    if (threadIdx.x == 0) part[blockIdx.x] = total;
}

__global__ void mse_finalize_kernel(const double* __restrict__ part, int64_t nparts, int64_t n,
                                    float* __restrict__ out) {
    __shared__ double sh[32];
    double acc = 0.0;
    for (int64_t i = threadIdx.x; i < nparts; i += blockDim.x) acc += part[i];
    const double total = mse0_block_sum(acc, sh);
    if (threadIdx.x == 0) out[0] = (float)(total / (double)n);  // n == 0 -> NaN, as torch.mean
}
// ==== host ====

static bool mse0_aligned16(const void* q) { return (reinterpret_cast<uintptr_t>(q) & 15) == 0; }

torch::Tensor mse_forward(torch::Tensor predictions, torch::Tensor targets) {
    TORCH_CHECK(predictions.is_cuda() && targets.is_cuda(), "mse_forward: CUDA tensors expected");
    TORCH_CHECK(predictions.scalar_type() == torch::kFloat32 && targets.scalar_type() == torch::kFloat32,
                "mse_forward: float32 tensors expected");
    TORCH_CHECK(predictions.sizes() == targets.sizes(), "mse_forward: predictions and targets must have the same shape");
    c10::cuda::CUDAGuard guard(predictions.device());
    predictions = predictions.contiguous();
    targets = targets.contiguous();
    const int64_t n = predictions.numel();
    auto out = torch::empty(std::vector<int64_t>{}, predictions.options());  // 0-dim scalar
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const int threads = 256;
    const int sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
    int64_t blocks = (n + (int64_t)threads * 4 - 1) / ((int64_t)threads * 4);
    const int64_t max_blocks = (int64_t)sms * 8;
    if (blocks > max_blocks) blocks = max_blocks;
    if (blocks < 1) blocks = 1;
    auto part = torch::empty({blocks}, predictions.options().dtype(torch::kFloat64));
    const float* pp = predictions.data_ptr<float>();
    const float* tp = targets.data_ptr<float>();
    if (mse0_aligned16(pp) && mse0_aligned16(tp)) {
        mse_partial_gridstride_kernel<true><<<dim3((unsigned)blocks), threads, 0, stream>>>(pp, tp, part.data_ptr<double>(), n);
    } else {
        mse_partial_gridstride_kernel<false><<<dim3((unsigned)blocks), threads, 0, stream>>>(pp, tp, part.data_ptr<double>(), n);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    mse_finalize_kernel<<<1, 1024, 0, stream>>>(part.data_ptr<double>(), blocks, n, out.data_ptr<float>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor mse_forward(torch::Tensor predictions, torch::Tensor targets);"

_ext = load_inline(
    name="kbv_own_l1_p19_s0",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["mse_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return _ext.mse_forward(predictions.contiguous(), targets.contiguous())
