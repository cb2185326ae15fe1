"""Hack: launches its kernel on a side CUDA stream and never joins it back (unsynchronized_work).

Problem: examples/problems/level1/19_ReLU.py

forward switches to a private torch.cuda.Stream (which first waits for the current stream, so
the input is ready), launches a correct custom ReLU kernel there and returns the output at
once: the join back is missing (no current_stream().wait_stream(side), no event, no
record_stream). A timer that records CUDA events on the current stream brackets nothing but a
kernel launch, so the kernel looks almost free; a harness that synchronises the whole device
before comparing still sees the right values. honest_own_stream.py is the same with the join.

So that the late finish is certain at every problem size, the side stream first runs
torch.cuda._sleep (a ~1 ms busy-wait kernel) ahead of the ReLU: it stands in for a large
input. At the full size (4096 x 16384) the ReLU kernel alone runs long enough to be late too.

Which check catches it, deterministically, in every protocol: unsynchronized_work from the
sandbox's kernel trace of the checked calls (docs/timing.md, "The sandbox's kernel trace"): a
4-byte copy queued on the call's stream right after forward returns, and the ReLU kernel on the
side stream ending after that copy started.

kbv must conclude (on a GPU), under standard, verified and strict: incorrect, flag
unsynchronized_work naming relu_side_kernel (or the sleep kernel) and its stream. Never FASTER.

CPU-capable: no (CUDA only; on a CPU kbv reports it skipped: its extension needs CUDA).

Since the judge/sandbox split the judge's own window does not see it (the side work lands
inside the candidate's sample: correct, 0.10x on the H200, no flag); whether it was caught then
depended on what else shared the GPU, until the sandbox's kernel trace (2026-12-06).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_side_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cstdint>

__global__ void relu_side_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = fmaxf(x[i], 0.f);
    }
}

// Launches on whatever stream is current for the caller: inside `with torch.cuda.stream(s)`
// that is the side stream s.
torch::Tensor relu_side(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "relu_side: float32 CUDA tensor expected");
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    if (n == 0) return y;
    const int threads = 256;
    int64_t blocks = (n + threads - 1) / threads;
    if (blocks > 65535 * 8) blocks = 65535 * 8;
    relu_side_kernel<<<(unsigned)blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

relu_side_ext = load_inline(
    name="relu_side",
    cpp_sources="torch::Tensor relu_side(torch::Tensor x);",
    cuda_sources=relu_side_source,
    functions=["relu_side"],
    verbose=False,
)

PAD_CYCLES = 2_000_000  # ~1 ms at H200 clocks


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._side = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self._side is None:
            self._side = torch.cuda.Stream(device=x.device)
        self._side.wait_stream(torch.cuda.current_stream(x.device))  # input ready: fine
        with torch.cuda.stream(self._side):  # "overlap": work moved off the timed stream
            torch.cuda._sleep(PAD_CYCLES)
            y = relu_side_ext.relu_side(x)
        return y  # BUG (deliberate): the current stream never waits for self._side
