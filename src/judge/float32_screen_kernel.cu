// The float32 screen in one pass (float32_screen_kernel.hpp). The operator chain it replaces on
// the device made about a dozen passes over a chunk's temporaries; at KernelBench's sizes (GB
// outputs) each comparison took ~0.13 s of an H100 (bench/RESULTS.md, session 29).
#include "judge/float32_screen_kernel.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>

namespace kbv::judge {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 4096;
// Elements a thread reads at least before another block is worth launching.
constexpr std::int64_t kPerThread = 16;

__device__ __forceinline__ float as_float(float v) { return v; }
__device__ __forceinline__ float as_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float as_float(__nv_bfloat16 v) { return __bfloat162float(v); }

// max() as torch's reductions compute it: a NaN on either side is the result.
__device__ __forceinline__ float nan_max(float a, float b) { return (isnan(a) || isnan(b)) ? __int_as_float(0x7fc00000) : fmaxf(a, b); }

template <typename T>
__global__ void __launch_bounds__(kThreads) screen_kernel(const T* __restrict__ ref, const T* __restrict__ cand, std::int64_t n,
                                                          float atol, float rtol, float pass_scale, float fail_scale,
                                                          float* __restrict__ partials) {
  float worst = -INFINITY, max_diff = -INFINITY, max_rel = -INFINITY;
  bool failed = false;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float r = as_float(ref[i]), c = as_float(cand[i]);
    // Each operation rounded on its own (no fused multiply-add), as the operators round them.
    const float diff = fabsf(__fsub_rn(c, r));
    const float r_abs = fabsf(r);
    const float bound = __fadd_rn(__fmul_rn(r_abs, rtol), atol);
    worst = nan_max(worst, __fsub_rn(diff, __fmul_rn(bound, pass_scale)));
    failed = failed || diff > __fmul_rn(bound, fail_scale);
    max_diff = nan_max(max_diff, diff);
    max_rel = nan_max(max_rel, __fdiv_rn(diff, isnan(r_abs) ? r_abs : fmaxf(r_abs, atol)));
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    worst = nan_max(worst, __shfl_down_sync(0xffffffffu, worst, offset));
    max_diff = nan_max(max_diff, __shfl_down_sync(0xffffffffu, max_diff, offset));
    max_rel = nan_max(max_rel, __shfl_down_sync(0xffffffffu, max_rel, offset));
  }
  failed = __any_sync(0xffffffffu, failed);
  __shared__ float warp_figures[kThreads / 32][kScreenFigures];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) {
    warp_figures[warp][0] = worst;
    warp_figures[warp][1] = failed ? 1.0f : 0.0f;
    warp_figures[warp][2] = max_diff;
    warp_figures[warp][3] = max_rel;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    float out[kScreenFigures] = {warp_figures[0][0], warp_figures[0][1], warp_figures[0][2], warp_figures[0][3]};
    for (int w = 1; w < kThreads / 32; ++w) {
      out[0] = nan_max(out[0], warp_figures[w][0]);
      out[1] = fmaxf(out[1], warp_figures[w][1]);
      out[2] = nan_max(out[2], warp_figures[w][2]);
      out[3] = nan_max(out[3], warp_figures[w][3]);
    }
    for (int k = 0; k < kScreenFigures; ++k) partials[static_cast<std::int64_t>(blockIdx.x) * kScreenFigures + k] = out[k];
  }
}

template <typename T>
cudaError_t launch(const void* ref, const void* cand, std::int64_t n, float atol, float rtol, float pass_scale,
                   float fail_scale, float* partials, cudaStream_t stream) {
  screen_kernel<T><<<screen_blocks(n), kThreads, 0, stream>>>(static_cast<const T*>(ref), static_cast<const T*>(cand), n, atol,
                                                              rtol, pass_scale, fail_scale, partials);
  return cudaGetLastError();  // and clears a launch error
}

}  // namespace

int screen_blocks(std::int64_t n) {
  const std::int64_t wanted = (n + kThreads * kPerThread - 1) / (kThreads * kPerThread);
  return static_cast<int>(std::clamp<std::int64_t>(wanted, 1, kMaxBlocks));
}

bool launch_screen(const void* ref, const void* cand, std::int64_t n, ScreenDtype dtype, float atol, float rtol,
                   float pass_scale, float fail_scale, float* partials, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  cudaError_t e = cudaSuccess;
  switch (dtype) {
    case ScreenDtype::float32: e = launch<float>(ref, cand, n, atol, rtol, pass_scale, fail_scale, partials, s); break;
    case ScreenDtype::float16: e = launch<__half>(ref, cand, n, atol, rtol, pass_scale, fail_scale, partials, s); break;
    case ScreenDtype::bfloat16: e = launch<__nv_bfloat16>(ref, cand, n, atol, rtol, pass_scale, fail_scale, partials, s); break;
  }
  return e == cudaSuccess;
}

}  // namespace kbv::judge
