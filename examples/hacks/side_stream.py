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

Which strict check catches it, deterministically: unsynchronized_work. Strict's kernel audit
(CUPTI) traces one forward call, then enqueues a marker copy on the current stream right
after forward returns: kernels on another stream that end after the marker starts were not
joined. Needs a kbv build with CUPTI (otherwise the audit records "kernel audit not possible").

kbv must conclude (on a GPU):
  - standard: correct (kbv synchronises the device after forward); the timed region on the
    current stream is empty, so the reported speedup is huge (tens of x or more).
  - verified: correct, same inflated speedup.
  - strict:   incorrect, flag unsynchronized_work (the sleep and relu_side_kernel still running
    on the side stream after forward returned).

CPU-capable: no (CUDA only; on a CPU kbv reports it skipped: its extension needs CUDA).

Since the judge/sandbox split: the judge's end event cannot run while the sandbox's context still
has work (the GPU time-slices between processes), so the side stream's work is inside the
candidate's own sample: correct, 0.10x on the H200 under standard and strict (was 63x under
standard). Nothing inflated, so no flag.
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
