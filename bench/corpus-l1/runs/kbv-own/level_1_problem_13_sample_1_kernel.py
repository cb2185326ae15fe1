"""BatchNorm2d, training mode (level1/13_BatchNorm2d.py), sample 1: two-pass statistics with
shared-memory tree reductions. Pass 1: per-chunk partial sums -> per-channel mean (double).
Pass 2: per-chunk partial sums of squared deviations from that mean -> biased variance,
invstd, running_mean / running_var (unbiased) / num_batches_tracked updates like
nn.BatchNorm2d. Then (x - mean) * invstd * weight + bias. Eval mode uses the running stats."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>

#define BN2_THREADS 256

// ==== device ====
// Shared-memory tree sum over BN2_THREADS slots; every slot is written before it is read.
// Result valid in thread 0.
template <typename T>
__device__ __forceinline__ T bn2_tree_sum(T v, T* sh) {
    sh[threadIdx.x] = v;
    __syncthreads();
#pragma unroll
    for (int s = BN2_THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    return sh[0];
}

// grid: x = plane p = n * C + c, y = chunk k. Writes sum of x (mode 0) or of (x - mean[c])^2 (mode 1).
__global__ void __launch_bounds__(BN2_THREADS) bn2_partial_kernel(const float* __restrict__ x,
                                                                  const float* __restrict__ mean,
                                                                  float* __restrict__ part, int64_t C,
                                                                  int64_t N, int64_t HW, int64_t chunk,
                                                                  int mode) {
    __shared__ float sh[BN2_THREADS];
    const int64_t p = blockIdx.x;
    const int64_t k = blockIdx.y;
    const int64_t K = gridDim.y;
    const int64_t c = p % C;
    const int64_t n = p / C;
    const int64_t start = k * chunk;
    const int64_t end = (start + chunk < HW) ? (start + chunk) : HW;
    const float* xp = x + p * HW;
    float acc = 0.0f;
    if (mode == 0) {
        for (int64_t i = start + threadIdx.x; i < end; i += BN2_THREADS) acc += xp[i];
    } else {
        const float m = mean[c];
        for (int64_t i = start + threadIdx.x; i < end; i += BN2_THREADS) {
            const float d = xp[i] - m;
            acc += d * d;
        }
    }
    const float total = bn2_tree_sum<float>(acc, sh);
    if (threadIdx.x == 0) part[(c * N + n) * K + k] = total;
}

// one block per channel: mean = sum(partials) / count
__global__ void __launch_bounds__(BN2_THREADS) bn2_mean_kernel(const float* __restrict__ part,
                                                               int64_t per_channel, double count,
                                                               float* __restrict__ mean_out) {
    __shared__ double sh[BN2_THREADS];
    const int64_t c = blockIdx.x;
    double acc = 0.0;
    for (int64_t i = threadIdx.x; i < per_channel; i += BN2_THREADS) acc += (double)part[c * per_channel + i];
    const double total = bn2_tree_sum<double>(acc, sh);
    if (threadIdx.x == 0) mean_out[c] = (float)(total / count);
}

// one block per channel: variance, invstd, running-stat update (or eval: running stats)
__global__ void __launch_bounds__(BN2_THREADS) bn2_var_kernel(const float* __restrict__ part,
                                                              int64_t per_channel, double count,
                                                              float* __restrict__ mean_out,
                                                              float* __restrict__ invstd_out,
                                                              float* __restrict__ running_mean,
                                                              float* __restrict__ running_var,
                                                              int64_t* __restrict__ num_batches_tracked,
                                                              int use_batch_stats, int update_running,
                                                              int increment_nbt, float factor, float eps) {
    __shared__ double sh[BN2_THREADS];
    const int64_t c = blockIdx.x;
    if (!use_batch_stats) {
        if (threadIdx.x == 0) {
            mean_out[c] = running_mean[c];
            invstd_out[c] = (float)(1.0 / sqrt((double)running_var[c] + (double)eps));
        }
        return;
    }
    double acc = 0.0;
    for (int64_t i = threadIdx.x; i < per_channel; i += BN2_THREADS) acc += (double)part[c * per_channel + i];
    const double sq = bn2_tree_sum<double>(acc, sh);
    if (threadIdx.x == 0) {
        const double var = sq / count;
        const double mean = (double)mean_out[c];
        invstd_out[c] = (float)(1.0 / sqrt(var + (double)eps));
        if (update_running) {
            const double f = (double)factor;
            running_mean[c] = (float)((1.0 - f) * (double)running_mean[c] + f * mean);
            running_var[c] = (float)((1.0 - f) * (double)running_var[c] + f * (sq / (count - 1.0)));
        }
        if (increment_nbt && c == 0) num_batches_tracked[0] += 1;
    }
}

// grid: x = plane, y = chunk
__global__ void __launch_bounds__(BN2_THREADS) bn2_apply_kernel(const float* __restrict__ x,
                                                                const float* __restrict__ mean,
                                                                const float* __restrict__ invstd,
                                                                const float* __restrict__ w,
                                                                const float* __restrict__ b,
                                                                float* __restrict__ y, int64_t C,
                                                                int64_t HW, int64_t chunk) {
    const int64_t p = blockIdx.x;
    const int64_t c = p % C;
    const int64_t start = (int64_t)blockIdx.y * chunk;
    const int64_t end = (start + chunk < HW) ? (start + chunk) : HW;
    const float m = mean[c];
    const float s = invstd[c] * w[c];
    const float sh = b[c];
    const float* xp = x + p * HW;
    float* yp = y + p * HW;
    for (int64_t i = start + threadIdx.x; i < end; i += BN2_THREADS) yp[i] = (xp[i] - m) * s + sh;
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
    int64_t chunk = 4096;
    if ((HW + chunk - 1) / chunk > 65535) chunk = (HW + 65534) / 65535;
    const int64_t K = (HW + chunk - 1) / chunk;
    const int64_t planes = N * C;
    TORCH_CHECK(planes <= 2147483647LL, "bn_forward: too many planes");
    const double count = (double)N * (double)HW;

    auto fopts = x.options().dtype(torch::kFloat32);
    auto stats = torch::empty({2 * C}, fopts);
    float* mean_p = stats.data_ptr<float>();
    float* invstd_p = mean_p + C;
    float* rm = (update_running || !use_batch_stats) ? running_mean.data_ptr<float>() : nullptr;
    float* rv = (update_running || !use_batch_stats) ? running_var.data_ptr<float>() : nullptr;
    int64_t* nbt = increment_nbt ? num_batches_tracked.data_ptr<int64_t>() : nullptr;
    const dim3 plane_grid((unsigned)planes, (unsigned)K);

    torch::Tensor part;
    float* part_p = nullptr;
    if (use_batch_stats) {
        part = torch::empty({planes * K}, fopts);
        part_p = part.data_ptr<float>();
        bn2_partial_kernel<<<plane_grid, BN2_THREADS, 0, stream>>>(x.data_ptr<float>(), mean_p, part_p, C, N, HW, chunk, 0);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
        bn2_mean_kernel<<<dim3((unsigned)C), BN2_THREADS, 0, stream>>>(part_p, N * K, count, mean_p);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
        bn2_partial_kernel<<<plane_grid, BN2_THREADS, 0, stream>>>(x.data_ptr<float>(), mean_p, part_p, C, N, HW, chunk, 1);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    bn2_var_kernel<<<dim3((unsigned)C), BN2_THREADS, 0, stream>>>(
        part_p, N * K, count, mean_p, invstd_p, rm, rv, nbt, use_batch_stats ? 1 : 0,
        update_running ? 1 : 0, increment_nbt ? 1 : 0, (float)factor, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    bn2_apply_kernel<<<plane_grid, BN2_THREADS, 0, stream>>>(
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
    name="kbv_own_l1_p13_s1",
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
                increment_nbt = True  # the variance kernel adds 1 to num_batches_tracked
        empty = x.new_empty(0)
        rm = bn.running_mean if bn.running_mean is not None else empty
        rv = bn.running_var if bn.running_var is not None else empty
        nbt = bn.num_batches_tracked if bn.num_batches_tracked is not None else empty
        return _ext.bn_forward(x, bn.weight, bn.bias, rm, rv, nbt, use_batch_stats,
                               update_running, increment_nbt, factor, float(bn.eps))
