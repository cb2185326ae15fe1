"""Cross-entropy, mean reduction (level1/18_CrossEntropyLoss.py), sample 1. Kernel 1: one
warp per row (8 rows per block), two passes: row max (NaN-propagating), then sum of
exp(x - max), both with warp shuffles; row loss = max + log(sum) - logit[target]. Kernel 2:
one block, shared-memory tree reduction in double of the row losses, divided by the number
of counted rows (targets equal to the default ignore_index -100 are skipped, as in torch)."""
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

#define CE1_FINAL_THREADS 1024

// ==== device ====
__device__ __forceinline__ float ce1_max(float a, float b) {
    // NaN-propagating max (fmaxf would drop NaN)
    if (a != a) return a;
    if (b != b) return b;
    return a > b ? a : b;
}

__global__ void ce_rows_warp_kernel(const float* __restrict__ logits, const int64_t* __restrict__ targets,
                                    float* __restrict__ row_loss, int64_t B, int64_t C, int64_t ignore_index) {
    const unsigned FULL = 0xffffffffu;
    const int lane = threadIdx.x & 31;
    const int64_t row = (int64_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= B) return;  // whole warp leaves together
    const float* xr = logits + row * C;
    float m = -__int_as_float(0x7f800000);
    for (int64_t c = lane; c < C; c += 32) m = ce1_max(m, xr[c]);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) m = ce1_max(m, __shfl_xor_sync(FULL, m, o));
    float s = 0.0f;
    for (int64_t c = lane; c < C; c += 32) s += expf(xr[c] - m);  // m = +-inf or NaN -> NaN, as torch
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(FULL, s, o);
    if (lane == 0) {
        const int64_t t = targets[row];
        float loss;
        if (t == ignore_index) {
            loss = 0.0f;
        } else if (t < 0 || t >= C) {
            loss = __int_as_float(0x7fc00000);  // invalid target: NaN (torch raises)
        } else {
            loss = (m + logf(s)) - xr[t];
        }
        row_loss[row] = loss;
    }
}

__global__ void __launch_bounds__(CE1_FINAL_THREADS) ce_mean_tree_kernel(const float* __restrict__ row_loss,
                                                                         const int64_t* __restrict__ targets,
                                                                         int64_t B, int64_t ignore_index,
                                                                         float* __restrict__ out) {
    __shared__ double sh_sum[CE1_FINAL_THREADS];
    __shared__ double sh_cnt[CE1_FINAL_THREADS];
    double sum = 0.0, cnt = 0.0;
    for (int64_t i = threadIdx.x; i < B; i += CE1_FINAL_THREADS) {
        if (targets[i] != ignore_index) {
            sum += (double)row_loss[i];
            cnt += 1.0;
        }
    }
    sh_sum[threadIdx.x] = sum;
    sh_cnt[threadIdx.x] = cnt;
    __syncthreads();
#pragma unroll
    for (int s = CE1_FINAL_THREADS / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) {
            sh_sum[threadIdx.x] += sh_sum[threadIdx.x + s];
            sh_cnt[threadIdx.x] += sh_cnt[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = (float)(sh_sum[0] / sh_cnt[0]);  // all ignored -> NaN, as torch
}
// ==== host ====

torch::Tensor cross_entropy_forward(torch::Tensor logits, torch::Tensor targets, int64_t ignore_index) {
    TORCH_CHECK(logits.is_cuda() && targets.is_cuda(), "cross_entropy_forward: CUDA tensors expected");
    TORCH_CHECK(logits.scalar_type() == torch::kFloat32, "cross_entropy_forward: logits must be float32");
    TORCH_CHECK(targets.scalar_type() == torch::kInt64, "cross_entropy_forward: targets must be int64");
    TORCH_CHECK(logits.dim() == 2 && targets.dim() == 1 && targets.size(0) == logits.size(0),
                "cross_entropy_forward: expected logits [B, C] and targets [B]");
    c10::cuda::CUDAGuard guard(logits.device());
    logits = logits.contiguous();
    targets = targets.contiguous();
    const int64_t B = logits.size(0);
    const int64_t C = logits.size(1);
    auto out = torch::empty(std::vector<int64_t>{}, logits.options());  // 0-dim scalar
    auto row_loss = torch::empty({B > 0 ? B : 1}, logits.options());
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    if (B > 0) {
        TORCH_CHECK(C > 0, "cross_entropy_forward: no classes");
        const int64_t blocks = (B + 7) / 8;
        ce_rows_warp_kernel<<<dim3((unsigned)blocks), 256, 0, stream>>>(
            logits.data_ptr<float>(), targets.data_ptr<int64_t>(), row_loss.data_ptr<float>(), B, C, ignore_index);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    ce_mean_tree_kernel<<<1, CE1_FINAL_THREADS, 0, stream>>>(row_loss.data_ptr<float>(), targets.data_ptr<int64_t>(),
                                                            B, ignore_index, out.data_ptr<float>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor cross_entropy_forward(torch::Tensor logits, torch::Tensor targets, int64_t ignore_index);"

_ext = load_inline(
    name="kbv_own_l1_p18_s1",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["cross_entropy_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return _ext.cross_entropy_forward(logits.contiguous(), targets.contiguous(), -100)
