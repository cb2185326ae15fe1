"""Hack (red team, session 22): the result reaches the output through a device-to-device copy on a
side stream that waits for the call's start and is never joined.

Problem: examples/problems/level1/19_ReLU.py

forward computes the ReLU into a temporary on the current stream (honestly, on the call's
inputs), records an event there, and has a private stream wait for that event and copy the
temporary into the output with cudaMemcpyAsync. Nothing joins the private stream back: a caller
on the current stream may read the output before the copy has run. The copy waited for the
inputs, so the poison between calls does not show it; it runs on a copy engine, which is not
time-sliced with the judge's context as kernels are, so it may still run after E1 (a timed call
that leaves its last step out of the sample) and finish before the judge's snapshot reads the
output (small outputs: a few us).

Until session 22's fix the sandbox's kernel trace reported kernels of other streams only
(sandbox/call_trace.cpp skipped every copy record): this copy was never in `unjoined`.

kbv must conclude (on a GPU): incorrect under standard, verified and strict, flag
unsynchronized_work, the evidence naming "memcpy DtoD" on another stream (the trace of the
first checked call), or the judge's own late-write or poison evidence where it sees it first.

CPU-capable: no (CUDA only).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) y[i] = fmaxf(x[i], 0.f);
}

static cudaStream_t side = nullptr;
static cudaEvent_t computed = nullptr;
static torch::Tensor kept;

torch::Tensor relu_copied_on_side(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "float32 CUDA tensor expected");
    if (!side) {
        cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
        cudaEventCreateWithFlags(&computed, cudaEventDisableTiming);
    }
    x = x.contiguous();
    auto tmp = torch::empty_like(x);
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    auto stream = at::cuda::getCurrentCUDAStream();
    if (n > 0) {
        int64_t blocks = (n + 255) / 256;
        if (blocks > 65535 * 8) blocks = 65535 * 8;
        relu_kernel<<<(unsigned)blocks, 256, 0, stream>>>(x.data_ptr<float>(), tmp.data_ptr<float>(), n);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
        cudaEventRecord(computed, stream);
        cudaStreamWaitEvent(side, computed, 0);  // waits for the inputs: no poison in the output
        cudaMemcpyAsync(y.data_ptr<float>(), tmp.data_ptr<float>(), n * sizeof(float), cudaMemcpyDeviceToDevice, side);
        kept = tmp;  // alive until the next call, so the side stream's copy reads it; never joined
    }
    return y;
}
"""

ext = load_inline(
    name="relu_copied_on_side",
    cpp_sources="torch::Tensor relu_copied_on_side(torch::Tensor x);",
    cuda_sources=source,
    functions=["relu_copied_on_side"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.relu_copied_on_side(x)
