"""Inclusive cumsum along one dim (level1/20_Cumsum.py), sample 0. The input is viewed as
[outer, L, inner]. inner == 1: one 256-thread block per row, the row is processed in tiles of
4096 staged through (bank-conflict-padded) shared memory with coalesced loads/stores; each
thread scans 16 consecutive elements in double, thread totals are scanned with warp shuffles
and per-warp totals, and a double carry runs across tiles. inner > 1: one thread per column
with a double running sum (coalesced across the inner index)."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>

#define CS0_THREADS 256
#define CS0_ITEMS 16
#define CS0_TILE (CS0_THREADS * CS0_ITEMS)
#define CS0_PAD(i) ((i) + ((i) >> 5))

// ==== device ====
__global__ void __launch_bounds__(CS0_THREADS) cumsum_rows_block_kernel(const float* __restrict__ x,
                                                                        float* __restrict__ y, int64_t L) {
    __shared__ float tile[CS0_PAD(CS0_TILE)];
    __shared__ double warp_tot[CS0_THREADS / 32];
    const unsigned FULL = 0xffffffffu;
    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int wid = tid >> 5;
    const float* xr = x + (int64_t)blockIdx.x * L;
    float* yr = y + (int64_t)blockIdx.x * L;
    double carry = 0.0;  // identical in every thread
    for (int64_t base = 0; base < L; base += CS0_TILE) {
        const int64_t rem = L - base;
        const int cnt = rem < CS0_TILE ? (int)rem : CS0_TILE;
        for (int i = tid; i < CS0_TILE; i += CS0_THREADS) tile[CS0_PAD(i)] = (i < cnt) ? xr[base + i] : 0.0f;
        __syncthreads();
        // sequential scan of this thread's 16 consecutive elements
        double run[CS0_ITEMS];
        double acc = 0.0;
#pragma unroll
        for (int j = 0; j < CS0_ITEMS; ++j) {
            acc += (double)tile[CS0_PAD(tid * CS0_ITEMS + j)];
            run[j] = acc;
        }
        // inclusive warp scan of the thread totals
        double incl = acc;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const double v = __shfl_up_sync(FULL, incl, o);
            if (lane >= o) incl += v;
        }
        double excl = __shfl_up_sync(FULL, incl, 1);
        if (lane == 0) excl = 0.0;
        if (lane == 31) warp_tot[wid] = incl;
        __syncthreads();
        double warp_off = 0.0, tile_tot = 0.0;
#pragma unroll
        for (int w = 0; w < CS0_THREADS / 32; ++w) {
            const double wt = warp_tot[w];
            if (w < wid) warp_off += wt;
            tile_tot += wt;
        }
        const double off = carry + warp_off + excl;
#pragma unroll
        for (int j = 0; j < CS0_ITEMS; ++j) tile[CS0_PAD(tid * CS0_ITEMS + j)] = (float)(off + run[j]);
        __syncthreads();
        for (int i = tid; i < cnt; i += CS0_THREADS) yr[base + i] = tile[CS0_PAD(i)];
        carry += tile_tot;
        __syncthreads();  // tile and warp_tot are reused by the next tile
    }
}

// one thread per (o, i) column; x[(o * L + l) * inner + i]
__global__ void cumsum_columns_kernel(const float* __restrict__ x, float* __restrict__ y,
                                      int64_t outer, int64_t L, int64_t inner) {
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= outer * inner) return;
    const int64_t o = t / inner;
    const int64_t i = t - o * inner;
    const float* p = x + o * L * inner + i;
    float* q = y + o * L * inner + i;
    double acc = 0.0;
    for (int64_t l = 0; l < L; ++l) {
        acc += (double)p[l * inner];
        q[l * inner] = (float)acc;
    }
}
// ==== host ====

torch::Tensor cumsum_forward(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda(), "cumsum_forward: x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "cumsum_forward: x must be float32");
    c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    auto y = torch::empty(x.sizes(), x.options());
    const int64_t nd = x.dim() > 0 ? x.dim() : 1;
    const int64_t d = dim < 0 ? dim + nd : dim;
    TORCH_CHECK(d >= 0 && d < nd, "cumsum_forward: dim out of range");
    if (x.numel() == 0) return y;
    int64_t outer = 1, inner = 1, L = 1;
    if (x.dim() > 0) {
        for (int64_t k = 0; k < d; ++k) outer *= x.size(k);
        for (int64_t k = d + 1; k < nd; ++k) inner *= x.size(k);
        L = x.size(d);
    }
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    if (inner == 1) {
        TORCH_CHECK(outer <= 2147483647LL, "cumsum_forward: too many rows");
        cumsum_rows_block_kernel<<<dim3((unsigned)outer), CS0_THREADS, 0, stream>>>(x.data_ptr<float>(), y.data_ptr<float>(), L);
    } else {
        const int threads = 256;
        const int64_t blocks = (outer * inner + threads - 1) / threads;
        cumsum_columns_kernel<<<dim3((unsigned)blocks), threads, 0, stream>>>(x.data_ptr<float>(), y.data_ptr<float>(), outer, L, inner);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor cumsum_forward(torch::Tensor x, int64_t dim);"

_ext = load_inline(
    name="kbv_own_l1_p20_s0",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["cumsum_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.cumsum_forward(x.contiguous(), int(self.dim))
