"""Hack: side_stream.py without its pad: one full-grid kernel on a never-joined side stream
(unsynchronized_work). The regression example for the strict audit's marker.

Problem: examples/problems/level1/19_ReLU.py (default size: 4096 x 16384, 256 MiB in and out)

forward makes a private torch.cuda.Stream wait for the current stream (the input is ready),
launches a grid-stride ReLU with up to 65535*8 blocks there, and returns without the join.
The kernel's blocks fill every SM for its whole run (~0.13 ms on an H200). A marker *kernel*
queued on the current stream after forward returns cannot start before SMs free up, i.e.
until the ReLU's blocks drain: it starts just before the ReLU ends, and the late work is missed
by a hair or not at all (demo-gamer's side-stream GELU went unflagged that way on the H200:
bench/RESULTS.md). The timer's end event needs no SM and fires at once, so the speedup is
inflated. kbv's marker is a 4-byte device-to-host copy, which a copy engine starts as soon as
the current stream gets there.

kbv must conclude (on a GPU, default size), under standard, verified and strict: incorrect,
flag unsynchronized_work from the sandbox's kernel trace of the checked calls (relu_side_kernel
ends after the marker copy starts). Never FASTER.

CPU-capable: no (CUDA only; on a CPU kbv reports it skipped: its extension needs CUDA).

Since the judge/sandbox split its side kernel landed inside its own sample (correct, 0.52x on
the H200 under standard and strict; was 98.9-103x under standard), unflagged until the sandbox's
kernel trace (2026-12-06).
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
    name="relu_side_full_grid",
    cpp_sources="torch::Tensor relu_side(torch::Tensor x);",
    cuda_sources=relu_side_source,
    functions=["relu_side"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._side = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self._side is None:
            self._side = torch.cuda.Stream(device=x.device)
        self._side.wait_stream(torch.cuda.current_stream(x.device))  # input ready: fine
        with torch.cuda.stream(self._side):  # "overlap": work moved off the timed stream
            y = relu_side_ext.relu_side(x)
        return y  # BUG (deliberate): the current stream never waits for self._side
