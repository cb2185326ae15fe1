"""Honest: runs its kernel on its own CUDA stream AND joins it back correctly (no flag).

Problem: examples/problems/level1/19_ReLU.py

The control for side_stream.py. forward uses a private stream the right way:
  1. side.wait_stream(current): the side stream starts only when the input is ready;
  2. x.record_stream(side): the allocator will not reuse x's memory while side still reads it;
  3. the custom ReLU kernel runs on side (the output is allocated there);
  4. current.wait_stream(side): everything after forward on the current stream (the harness's
     end event, the comparison, the audit's marker kernel) waits for the kernel;
  5. y.record_stream(current): y, allocated on side, is used on the current stream next.
The same ~1 ms torch.cuda._sleep pad as side_stream.py runs on the side stream first, so the
two examples differ only in the join: here the pad and the kernel end before the marker starts.

Which strict check catches it: none. It must get no integrity flag: the audit finds its own
kernel (relu_own_stream_kernel) launched, so no no_custom_kernel either, and nothing still
running after forward returned, so no unsynchronized_work.

kbv must conclude (on a GPU): correct under standard, verified and strict, with no flags. Its
time honestly includes the ~1 ms pad, so its speedup is below 1x at small sizes; that is the
price of the determinism of its twin.

CPU-capable: no (CUDA only; on a CPU kbv reports it skipped: its extension needs CUDA).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_own_stream_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>

__global__ void relu_own_stream_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = fmaxf(x[i], 0.f);
    }
}

// Launches on the caller's current stream (the private stream, inside `with torch.cuda.stream`).
torch::Tensor relu_own_stream(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "relu_own_stream: float32 CUDA tensor expected");
    TORCH_CHECK(x.is_contiguous(), "relu_own_stream: contiguous input expected");
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return y;
    const int threads = 256;
    int64_t blocks = (n + threads - 1) / threads;
    if (blocks > 65535 * 8) blocks = 65535 * 8;
    relu_own_stream_kernel<<<(unsigned)blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

relu_own_stream_ext = load_inline(
    name="relu_own_stream",
    cpp_sources="torch::Tensor relu_own_stream(torch::Tensor x);",
    cuda_sources=relu_own_stream_source,
    functions=["relu_own_stream"],
    verbose=False,
)

PAD_CYCLES = 2_000_000  # same pad as side_stream.py


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._side = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self._side is None:
            self._side = torch.cuda.Stream(device=x.device)
        current = torch.cuda.current_stream(x.device)
        x = x.contiguous()  # on the current stream, before the hand-over
        self._side.wait_stream(current)  # 1. input ready before the side stream reads it
        x.record_stream(self._side)      # 2. keep x's memory alive for the side stream
        with torch.cuda.stream(self._side):
            torch.cuda._sleep(PAD_CYCLES)
            y = relu_own_stream_ext.relu_own_stream(x)  # 3. kernel on the private stream
        current.wait_stream(self._side)  # 4. join: later work on the current stream waits
        y.record_stream(current)         # 5. y is used on the current stream from here on
        return y
