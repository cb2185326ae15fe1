"""Cross-entropy, mean reduction (level1/18_CrossEntropyLoss.py), sample 0. Kernel 1: one
block per row, single-pass online log-sum-exp (running max + rescaled sum per thread, merged
across the block), row loss = logsumexp - logit[target]. Kernel 2: one block sums the row
losses in double and divides by the number of counted rows (targets equal to the default
ignore_index -100 are skipped, as F.cross_entropy does)."""
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
// Merge online-softmax states (m, s): s is the sum of exp(x - m). s == 0 means "empty".
__device__ __forceinline__ void ce0_merge(float& m, float& s, float om, float os) {
    if (os == 0.0f) return;
    if (s == 0.0f) { m = om; s = os; return; }
    const float nm = fmaxf(m, om);
    s = s * expf(m - nm) + os * expf(om - nm);
    m = nm;
}

__global__ void ce_rows_online_kernel(const float* __restrict__ logits, const int64_t* __restrict__ targets,
                                      float* __restrict__ row_loss, int64_t C, int64_t ignore_index) {
    __shared__ float sh_m[32], sh_s[32];
    const unsigned FULL = 0xffffffffu;
    const int64_t row = blockIdx.x;
    const float* xr = logits + row * C;
    const float NEG_INF = -__int_as_float(0x7f800000);
    float m = NEG_INF, s = 0.0f;
    for (int64_t c = threadIdx.x; c < C; c += blockDim.x) {
        const float v = xr[c];
        if (v > m) {
            s = s * expf(m - v) + 1.0f;  // s == 0 when m == -inf, and 0 * 0 = 0
            m = v;
        } else if (v != NEG_INF) {
            s += expf(v - m);  // NaN in v (or m == +inf) propagates into s
        }
    }
    const int lane = threadIdx.x & 31;
    const int wid = threadIdx.x >> 5;
    const int nwarps = blockDim.x >> 5;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float om = __shfl_down_sync(FULL, m, o);
        const float os = __shfl_down_sync(FULL, s, o);
        ce0_merge(m, s, om, os);
    }
    if (lane == 0) { sh_m[wid] = m; sh_s[wid] = s; }
    __syncthreads();
    if (wid == 0) {
        m = (lane < nwarps) ? sh_m[lane] : NEG_INF;  // identity beyond the written slots
        s = (lane < nwarps) ? sh_s[lane] : 0.0f;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            const float om = __shfl_down_sync(FULL, m, o);
            const float os = __shfl_down_sync(FULL, s, o);
            ce0_merge(m, s, om, os);
        }
        if (lane == 0) {
            const int64_t t = targets[row];
            float loss;
            if (t == ignore_index) {
                loss = 0.0f;
            } else if (t < 0 || t >= C) {
                loss = __int_as_float(0x7fc00000);  // invalid target: NaN (torch raises)
            } else {
                // all -inf row: m = -inf, s = 0 -> -inf - (-inf) = NaN, as torch.
                // a +inf logit makes torch's x - max NaN for the whole row: NaN here too.
                const float lse = m + logf(s);
                loss = (m == -NEG_INF) ? __int_as_float(0x7fc00000) : (lse - xr[t]);
            }
            row_loss[row] = loss;
        }
    }
}

// single block: mean over counted rows (double accumulation)
__global__ void ce_mean_kernel(const float* __restrict__ row_loss, const int64_t* __restrict__ targets,
                               int64_t B, int64_t ignore_index, float* __restrict__ out) {
    __shared__ double sh_sum[32], sh_cnt[32];
    const unsigned FULL = 0xffffffffu;
    double sum = 0.0, cnt = 0.0;
    for (int64_t i = threadIdx.x; i < B; i += blockDim.x) {
        if (targets[i] != ignore_index) {
            sum += (double)row_loss[i];
            cnt += 1.0;
        }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        sum += __shfl_xor_sync(FULL, sum, o);
        cnt += __shfl_xor_sync(FULL, cnt, o);
    }
    const int lane = threadIdx.x & 31;
    const int wid = threadIdx.x >> 5;
    const int nwarps = blockDim.x >> 5;
    if (lane == 0) { sh_sum[wid] = sum; sh_cnt[wid] = cnt; }
    __syncthreads();
    if (wid == 0) {
        sum = (lane < nwarps) ? sh_sum[lane] : 0.0;
        cnt = (lane < nwarps) ? sh_cnt[lane] : 0.0;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            sum += __shfl_xor_sync(FULL, sum, o);
            cnt += __shfl_xor_sync(FULL, cnt, o);
        }
        if (lane == 0) out[0] = (float)(sum / cnt);  // 0 / 0 -> NaN when every row is ignored
    }
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
        const int threads = C >= 2048 ? 512 : 128;
        ce_rows_online_kernel<<<dim3((unsigned)B), threads, 0, stream>>>(
            logits.data_ptr<float>(), targets.data_ptr<int64_t>(), row_loss.data_ptr<float>(), C, ignore_index);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    ce_mean_kernel<<<1, 1024, 0, stream>>>(row_loss.data_ptr<float>(), targets.data_ptr<int64_t>(), B,
                                          ignore_index, out.data_ptr<float>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor cross_entropy_forward(torch::Tensor logits, torch::Tensor targets, int64_t ignore_index);"

_ext = load_inline(
    name="kbv_own_l1_p18_s0",
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
