"""BatchNorm2d, training mode (level1/13_BatchNorm2d.py), sample 0: single-pass Welford.
Kernel 1: each block takes a chunk of one (n, c) plane and writes (count, mean, M2).
Kernel 2: one block per channel merges the partials in double (Chan), writes mean/invstd and
updates running_mean / running_var (unbiased) / num_batches_tracked like nn.BatchNorm2d.
Kernel 3: (x - mean) * invstd * weight + bias. In eval mode the running statistics are used."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>

// ==== device ====
// Chan merge of (n, mean, m2) with (nb, mb, qb); nb == 0 leaves the left side unchanged.
template <typename T>
__device__ __forceinline__ void bn_welford_merge(T& n, T& mean, T& m2, T nb, T mb, T qb) {
    if (nb > T(0)) {
        const T nt = n + nb;
        const T d = mb - mean;
        const T f = nb / nt;
        mean += d * f;
        m2 += qb + d * d * n * f;
        n = nt;
    }
}

// Merge the block's per-thread Welford states; the result is valid in thread 0.
template <typename T>
__device__ __forceinline__ void bn_block_welford(T& n, T& mean, T& m2, T* sh_n, T* sh_mean, T* sh_m2) {
    const unsigned FULL = 0xffffffffu;
    const int lane = threadIdx.x & 31;
    const int wid = threadIdx.x >> 5;
    const int nwarps = blockDim.x >> 5;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const T nb = __shfl_down_sync(FULL, n, o);
        const T mb = __shfl_down_sync(FULL, mean, o);
        const T qb = __shfl_down_sync(FULL, m2, o);
        bn_welford_merge(n, mean, m2, nb, mb, qb);
    }
    if (lane == 0) { sh_n[wid] = n; sh_mean[wid] = mean; sh_m2[wid] = m2; }
    __syncthreads();
    if (wid == 0) {
        // lanes beyond the number of warps hold the identity (count 0)
        n = (lane < nwarps) ? sh_n[lane] : T(0);
        mean = (lane < nwarps) ? sh_mean[lane] : T(0);
        m2 = (lane < nwarps) ? sh_m2[lane] : T(0);
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            const T nb = __shfl_down_sync(FULL, n, o);
            const T mb = __shfl_down_sync(FULL, mean, o);
            const T qb = __shfl_down_sync(FULL, m2, o);
            bn_welford_merge(n, mean, m2, nb, mb, qb);
        }
    }
}

// grid: x = plane p = n * C + c, y = chunk k of the plane (chunk elements each)
__global__ void bn_partial_welford_kernel(const float* __restrict__ x, float* __restrict__ part,
                                          int64_t C, int64_t N, int64_t HW, int64_t chunk) {
    __shared__ float sh_n[32], sh_mean[32], sh_m2[32];
    const int64_t p = blockIdx.x;
    const int64_t k = blockIdx.y;
    const int64_t K = gridDim.y;
    const int64_t c = p % C;
    const int64_t n = p / C;
    const int64_t start = k * chunk;
    const int64_t end = (start + chunk < HW) ? (start + chunk) : HW;
    const float* xp = x + p * HW;
    float cnt = 0.0f, mean = 0.0f, m2 = 0.0f;
    for (int64_t i = start + threadIdx.x; i < end; i += blockDim.x) {
        const float v = xp[i];
        cnt += 1.0f;
        const float d = v - mean;
        mean += d / cnt;
        m2 += d * (v - mean);
    }
    bn_block_welford<float>(cnt, mean, m2, sh_n, sh_mean, sh_m2);
    if (threadIdx.x == 0) {
        float* o = part + ((c * N + n) * K + k) * 3;
        o[0] = cnt; o[1] = mean; o[2] = m2;
    }
}

// one block per channel
__global__ void bn_finalize_kernel(const float* __restrict__ part, int64_t per_channel,
                                   float* __restrict__ mean_out, float* __restrict__ invstd_out,
                                   float* __restrict__ running_mean, float* __restrict__ running_var,
                                   int64_t* __restrict__ num_batches_tracked,
                                   int use_batch_stats, int update_running, int increment_nbt,
                                   float factor, float eps) {
    __shared__ double sh_n[32], sh_mean[32], sh_m2[32];
    const int64_t c = blockIdx.x;
    if (!use_batch_stats) {
        if (threadIdx.x == 0) {
            const double rv = (double)running_var[c];
            mean_out[c] = running_mean[c];
            invstd_out[c] = (float)(1.0 / sqrt(rv + (double)eps));
        }
        return;
    }
    double n = 0.0, mean = 0.0, m2 = 0.0;
    const float* pc = part + c * per_channel * 3;
    for (int64_t i = threadIdx.x; i < per_channel; i += blockDim.x)
        bn_welford_merge<double>(n, mean, m2, (double)pc[i * 3], (double)pc[i * 3 + 1], (double)pc[i * 3 + 2]);
    bn_block_welford<double>(n, mean, m2, sh_n, sh_mean, sh_m2);
    if (threadIdx.x == 0) {
        const double var = (m2 > 0.0 ? m2 : 0.0) / n;  // biased, used for normalisation
        mean_out[c] = (float)mean;
        invstd_out[c] = (float)(1.0 / sqrt(var + (double)eps));
        if (update_running) {
            const double unbiased = (m2 > 0.0 ? m2 : 0.0) / (n - 1.0);
            const double f = (double)factor;
            running_mean[c] = (float)((1.0 - f) * (double)running_mean[c] + f * mean);
            running_var[c] = (float)((1.0 - f) * (double)running_var[c] + f * unbiased);
        }
        if (increment_nbt && c == 0) num_batches_tracked[0] += 1;
    }
}

// grid: x = plane p = n * C + c, y = chunk of the plane
__global__ void bn_apply_kernel(const float* __restrict__ x, const float* __restrict__ mean,
                                const float* __restrict__ invstd, const float* __restrict__ w,
                                const float* __restrict__ b, float* __restrict__ y,
                                int64_t C, int64_t HW, int64_t chunk) {
    const int64_t p = blockIdx.x;
    const int64_t c = p % C;
    const int64_t start = (int64_t)blockIdx.y * chunk;
    const int64_t end = (start + chunk < HW) ? (start + chunk) : HW;
    const float m = mean[c];
    const float s = invstd[c] * w[c];
    const float sh = b[c];
    const float* xp = x + p * HW;
    float* yp = y + p * HW;
    for (int64_t i = start + threadIdx.x; i < end; i += blockDim.x) yp[i] = (xp[i] - m) * s + sh;
}
// ==== host ====

torch::Tensor bn_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias,
                         torch::Tensor running_mean, torch::Tensor running_var,
                         torch::Tensor num_batches_tracked, bool use_batch_stats,
                         bool update_running, bool increment_nbt, double factor, double eps) {
    TORCH_CHECK(x.is_cuda(), "bn_forward: x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "bn_forward: x must be float32");
    TORCH_CHECK(x.dim() >= 2, "bn_forward: x must be [N, C, ...]");
    c10::cuda::CUDAGuard guard(x.device());
    x = x.contiguous();
    weight = weight.contiguous();
    bias = bias.contiguous();
    const int64_t N = x.size(0);
    const int64_t C = x.size(1);
    TORCH_CHECK(weight.numel() == C && bias.numel() == C, "bn_forward: weight/bias size mismatch");
    auto y = torch::empty(x.sizes(), x.options());
    if (x.numel() == 0 || C == 0) return y;
    const int64_t HW = x.numel() / (N * C);
    const bool have_running = running_mean.defined() && running_mean.numel() == C;
    if (!use_batch_stats) TORCH_CHECK(have_running, "bn_forward: eval mode needs running statistics");
    if (use_batch_stats) TORCH_CHECK(N * HW > 1, "Expected more than 1 value per channel when training");
    if (update_running || !use_batch_stats) {
        TORCH_CHECK(have_running && running_var.numel() == C, "bn_forward: running statistics size mismatch");
        TORCH_CHECK(running_mean.is_contiguous() && running_var.is_contiguous() &&
                    running_mean.scalar_type() == torch::kFloat32 && running_var.scalar_type() == torch::kFloat32,
                    "bn_forward: running statistics must be contiguous float32");
    }
    if (increment_nbt)
        TORCH_CHECK(num_batches_tracked.defined() && num_batches_tracked.numel() == 1 &&
                    num_batches_tracked.scalar_type() == torch::kInt64, "bn_forward: num_batches_tracked must be int64[1]");

    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const int threads = 256;
    int64_t chunk = 4096;
    if ((HW + chunk - 1) / chunk > 65535) chunk = (HW + 65534) / 65535;
    const int64_t K = (HW + chunk - 1) / chunk;
    const int64_t planes = N * C;
    TORCH_CHECK(planes <= 2147483647LL, "bn_forward: too many planes");

    auto fopts = x.options().dtype(torch::kFloat32);
    auto stats = torch::empty({2 * C}, fopts);
    float* mean_p = stats.data_ptr<float>();
    float* invstd_p = mean_p + C;
    float* rm = (update_running || !use_batch_stats) ? running_mean.data_ptr<float>() : nullptr;
    float* rv = (update_running || !use_batch_stats) ? running_var.data_ptr<float>() : nullptr;
    int64_t* nbt = increment_nbt ? num_batches_tracked.data_ptr<int64_t>() : nullptr;

    torch::Tensor part;
    if (use_batch_stats) {
        part = torch::empty({planes * K * 3}, fopts);
        bn_partial_welford_kernel<<<dim3((unsigned)planes, (unsigned)K), threads, 0, stream>>>(
            x.data_ptr<float>(), part.data_ptr<float>(), C, N, HW, chunk);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    bn_finalize_kernel<<<dim3((unsigned)C), threads, 0, stream>>>(
        use_batch_stats ? part.data_ptr<float>() : nullptr, N * K, mean_p, invstd_p, rm, rv, nbt,
        use_batch_stats ? 1 : 0, update_running ? 1 : 0, increment_nbt ? 1 : 0, (float)factor, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    bn_apply_kernel<<<dim3((unsigned)planes, (unsigned)K), threads, 0, stream>>>(
        x.data_ptr<float>(), mean_p, invstd_p, weight.data_ptr<float>(), bias.data_ptr<float>(),
        y.data_ptr<float>(), C, HW, chunk);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = (
    "torch::Tensor bn_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, "
    "torch::Tensor running_mean, torch::Tensor running_var, torch::Tensor num_batches_tracked, "
    "bool use_batch_stats, bool update_running, bool increment_nbt, double factor, double eps);"
)

_ext = load_inline(
    name="kbv_own_l1_p13_s0",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["bn_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)  # same parameter/buffer names as Model
        with torch.no_grad():
            self.bn.running_mean.copy_(torch.linspace(-0.5, 0.5, channels))
            self.bn.running_var.copy_(torch.linspace(0.25, 2.0, channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bn = self.bn
        x = x.contiguous()
        use_batch_stats = bn.training or bn.running_mean is None
        update_running = bn.training and bn.track_running_stats and bn.running_mean is not None
        increment_nbt = False
        factor = 0.0 if bn.momentum is None else float(bn.momentum)
        if update_running:
            if bn.momentum is None:
                # cumulative moving average, exactly as nn.BatchNorm2d does it
                bn.num_batches_tracked.add_(1)
                factor = 1.0 / float(bn.num_batches_tracked)
            else:
                increment_nbt = True  # the finalize kernel adds 1 to num_batches_tracked
        empty = x.new_empty(0)
        rm = bn.running_mean if bn.running_mean is not None else empty
        rv = bn.running_var if bn.running_var is not None else empty
        nbt = bn.num_batches_tracked if bn.num_batches_tracked is not None else empty
        return _ext.bn_forward(x, bn.weight, bn.bias, rm, rv, nbt, use_batch_stats,
                               update_running, increment_nbt, factor, float(bn.eps))
