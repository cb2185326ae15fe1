"""Hack: pins its input in a persisting-L2 carve-out so it survives the harness's L2 flush.

Problem: examples/problems/level1/19_ReLU.py

Before a correct custom ReLU, the extension sets the context-wide limit
cudaLimitPersistingL2CacheSize to 4 MiB (clamped to the device's maximum) and puts an
access-policy window over the input on the current stream (hitProp
cudaAccessPropertyPersisting, missProp cudaAccessPropertyStreaming, hitRatio sized so the
persisting part fits the carve-out). Lines marked persisting are not evicted by normal
accesses, so a harness's "L2 flush" (writing a large buffer between samples) no longer
flushes the input: repeated timed calls read it from L2. It leaves both settings in place
after returning (on the process's current stream, which the baseline then uses too: the
reason strict treats the trick as an integrity violation rather than a speed-up).
If the device does not support persisting L2 (pre-Ampere, some MIG/MPS set-ups) the calls
fail, the error is cleared and the candidate is a plain correct ReLU.

Which strict check catches it, deterministically (on devices that support it, e.g. H100/H200):
persisting_l2. After every strict candidate call kbv reads cudaLimitPersistingL2CacheSize
(non-zero) and the current stream's access-policy window (non-empty); it fires on D1_x1.

kbv must conclude (on a GPU):
  - standard: correct; the speedup is inflated wherever the input's persisting part is a large
    share of it (inputs of a few MiB: the flush no longer empties L2 for them); at the full
    size (256 MiB input) 4 MiB is a small share, so the gain there is small.
  - verified: correct, same.
  - strict:   incorrect, flag persisting_l2 (D1_x1).

CPU-capable: no (CUDA only; on a CPU kbv reports it skipped: its extension needs CUDA).

Since the judge/sandbox split: the judge resets persisting-L2 lines before every timed sample
(every protocol) and then flushes L2, so the window keeps nothing across samples; persisting_l2
is no longer raised.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_l2_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>

__global__ void relu_l2_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = fmaxf(x[i], 0.f);
    }
}

// Reserve a persisting-L2 carve-out and mark `x` persisting on `stream`. Best effort: returns
// false (and clears the error) where the device does not support it.
static bool pin_in_l2(const torch::Tensor& x, cudaStream_t stream) {
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) { cudaGetLastError(); return false; }
    int max_persist = 0, max_window = 0;
    cudaDeviceGetAttribute(&max_persist, cudaDevAttrMaxPersistingL2CacheSize, device);
    cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, device);
    cudaGetLastError();
    if (max_persist <= 0 || max_window <= 0) return false;

    const size_t carve_out = std::min<size_t>(size_t(4) << 20, (size_t)max_persist);
    if (cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, carve_out) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    const size_t bytes = std::min<size_t>(x.numel() * x.element_size(), (size_t)max_window);
    cudaStreamAttrValue attr{};
    attr.accessPolicyWindow.base_ptr = const_cast<void*>(x.data_ptr());
    attr.accessPolicyWindow.num_bytes = bytes;
    attr.accessPolicyWindow.hitRatio = bytes > 0 ? std::min(1.0f, (float)carve_out / (float)bytes) : 0.f;
    attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    if (cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attr) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return true;
}

torch::Tensor relu_l2(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "relu_l2: float32 CUDA tensor expected");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return y;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    pin_in_l2(x, stream);  // and never undone
    const int threads = 256;
    int64_t blocks = (n + threads - 1) / threads;
    if (blocks > 65535 * 8) blocks = 65535 * 8;
    relu_l2_kernel<<<(unsigned)blocks, threads, 0, stream>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

relu_l2_ext = load_inline(
    name="relu_l2",
    cpp_sources="torch::Tensor relu_l2(torch::Tensor x);",
    cuda_sources=relu_l2_source,
    functions=["relu_l2"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu_l2_ext.relu_l2(x)
