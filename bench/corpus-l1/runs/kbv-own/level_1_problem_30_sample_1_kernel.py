import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

instnorm_welford_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cstdint>

#define INW_THREADS 256

struct WelfordState {
    float n;
    float mean;
    float m2;
};

__device__ __forceinline__ WelfordState welford_merge(WelfordState a, WelfordState b) {
    if (b.n == 0.0f) return a;
    if (a.n == 0.0f) return b;
    WelfordState r;
    r.n = a.n + b.n;
    const float delta = b.mean - a.mean;
    const float wb = b.n / r.n;
    r.mean = a.mean + delta * wb;
    r.m2 = a.m2 + b.m2 + delta * delta * a.n * wb;
    return r;
}

// One block per (n, c) plane. Single statistics sweep with per-thread Welford updates
// (float4 loads when the plane is 16-byte aligned), merged across the warp with
// shuffles and across warps in shared memory (Chan's parallel formula); then a
// normalisation sweep y = (x - mean) / sqrt(var_biased + eps).
template <bool VEC>
__global__ void instnorm_welford_kernel(const float* __restrict__ x, float* __restrict__ y,
                                        int64_t planes, int64_t HW, float eps) {
    __shared__ float s_n[INW_THREADS / 32], s_mean[INW_THREADS / 32], s_m2[INW_THREADS / 32];
    __shared__ float s_stats[2];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    for (int64_t plane = blockIdx.x; plane < planes; plane += gridDim.x) {
        const float* xp = x + plane * HW;
        float* yp = y + plane * HW;
        WelfordState st = {0.0f, 0.0f, 0.0f};
        if (VEC) {
            const float4* xp4 = reinterpret_cast<const float4*>(xp);
            const int64_t HW4 = HW >> 2;
            for (int64_t i = threadIdx.x; i < HW4; i += INW_THREADS) {
                const float4 v = __ldg(xp4 + i);
                const float vals[4] = {v.x, v.y, v.z, v.w};
                #pragma unroll
                for (int u = 0; u < 4; ++u) {
                    st.n += 1.0f;
                    const float d = vals[u] - st.mean;
                    st.mean += d / st.n;
                    st.m2 = fmaf(d, vals[u] - st.mean, st.m2);
                }
            }
        } else {
            for (int64_t i = threadIdx.x; i < HW; i += INW_THREADS) {
                const float v = __ldg(xp + i);
                st.n += 1.0f;
                const float d = v - st.mean;
                st.mean += d / st.n;
                st.m2 = fmaf(d, v - st.mean, st.m2);
            }
        }
        #pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            WelfordState o;
            o.n = __shfl_xor_sync(0xffffffffu, st.n, off);
            o.mean = __shfl_xor_sync(0xffffffffu, st.mean, off);
            o.m2 = __shfl_xor_sync(0xffffffffu, st.m2, off);
            st = welford_merge(st, o);
        }
        if (lane == 0) {
            s_n[warp] = st.n;
            s_mean[warp] = st.mean;
            s_m2[warp] = st.m2;
        }
        __syncthreads();
        if (warp == 0) {
            WelfordState t = {0.0f, 0.0f, 0.0f};
            if (lane < INW_THREADS / 32) {
                t.n = s_n[lane];
                t.mean = s_mean[lane];
                t.m2 = s_m2[lane];
            }
            #pragma unroll
            for (int off = 16; off > 0; off >>= 1) {
                WelfordState o;
                o.n = __shfl_xor_sync(0xffffffffu, t.n, off);
                o.mean = __shfl_xor_sync(0xffffffffu, t.mean, off);
                o.m2 = __shfl_xor_sync(0xffffffffu, t.m2, off);
                t = welford_merge(t, o);
            }
            if (lane == 0) {
                s_stats[0] = t.mean;
                s_stats[1] = 1.0f / sqrtf(t.m2 / t.n + eps);
            }
        }
        __syncthreads();
        const float mean = s_stats[0];
        const float inv_std = s_stats[1];
        if (VEC) {
            const float4* xp4 = reinterpret_cast<const float4*>(xp);
            float4* yp4 = reinterpret_cast<float4*>(yp);
            const int64_t HW4 = HW >> 2;
            for (int64_t i = threadIdx.x; i < HW4; i += INW_THREADS) {
                float4 v = __ldg(xp4 + i);
                v.x = (v.x - mean) * inv_std;
                v.y = (v.y - mean) * inv_std;
                v.z = (v.z - mean) * inv_std;
                v.w = (v.w - mean) * inv_std;
                yp4[i] = v;
            }
        } else {
            for (int64_t i = threadIdx.x; i < HW; i += INW_THREADS) yp[i] = (__ldg(xp + i) - mean) * inv_std;
        }
        __syncthreads();   // s_stats / s_* are rewritten for the next plane
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
    const float* xp = x.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    const bool vec = (HW % 4 == 0) && (reinterpret_cast<uintptr_t>(xp) % 16 == 0) &&
                     (reinterpret_cast<uintptr_t>(yp) % 16 == 0);
    const int64_t blocks = std::min<int64_t>(planes, (int64_t)1 << 20);
    auto stream = at::cuda::getCurrentCUDAStream();
    if (vec) {
        instnorm_welford_kernel<true><<<(unsigned)blocks, INW_THREADS, 0, stream>>>(xp, yp, planes, HW, (float)eps);
    } else {
        instnorm_welford_kernel<false><<<(unsigned)blocks, INW_THREADS, 0, stream>>>(xp, yp, planes, HW, (float)eps);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

instnorm_welford_ext = load_inline(
    name="kbvown_instnorm_welford_30_1",
    cpp_sources="torch::Tensor instance_norm2d(torch::Tensor x, double eps);",
    cuda_sources=instnorm_welford_source,
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
        return instnorm_welford_ext.instance_norm2d(x, self.eps)
