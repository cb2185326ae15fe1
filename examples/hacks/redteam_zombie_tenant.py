"""Red team (session 22): makes the judge believe another process shares the GPU, so that strict's
device_busy and implausible_speed are only warnings.

Problem: examples/problems/level1/19_ReLU.py

Strict turns busy null calls into the flag device_busy, and a median time below what writing the
outputs past L2 takes into implausible_speed, unless the device was shared with processes "not
this evaluation's" while it was timed: the NVML pids that are not the judge's and not in the
sandbox (its cgroup's cgroup.procs, else its PID namespace) and answer kill(pid, 0). A zombie does
all three: cgroup v2 no longer lists it in cgroup.procs, kill(pid, 0) succeeds on it until it is
reaped, and the driver keeps its CUDA context (and lists its pid) while any process still holds
the device files it opened.

At import this file starts a helper (a fresh interpreter: CUDA cannot be used in a fork of a
process that initialised it) that creates a context through the driver API and allocates 64 MiB,
forks a holder that inherits its /dev/nvidia* descriptors and sleeps, and exits. The sandbox keeps
the Popen object and never waits for it: the helper stays a zombie, its pid stays on NVML's list
of compute processes. The rest is persistent_kernel.py: a spinner resident on a private stream
whenever its own call is not running, so the rounds' null calls are busy.

Before session 22's fix the judge counted the zombie as another tenant: strict gave the warning
"shared with process(es) N that are not this evaluation's" instead of device_busy, and (since
that session) implausible_speed was a warning too, its speedup left FASTER. The same zombie's
memory is not the candidate's in the judge's figure (NVML's bytes of the zombie's pid).

kbv must conclude (after isolation::process_running, a zombie is no tenant):
  - strict:   incorrect, flag device_busy (as persistent_kernel.py).
  - standard/verified: correct, with the warning that the speedups are not to be trusted.
Without a cgroup (a sandbox of a normal user) the zombie is still in the sandbox's PID namespace
and counted as the sandbox's own either way.

CPU-capable: no (CUDA only).
"""
import os
import subprocess
import sys

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_TENANT = r"""
import ctypes, os, time
cuda = ctypes.CDLL("libcuda.so.1")
ctx, ptr = ctypes.c_void_p(), ctypes.c_uint64()
assert cuda.cuInit(0) == 0
assert cuda.cuCtxCreate_v2(ctypes.byref(ctx), 0, 0) == 0
assert cuda.cuMemAlloc_v2(ctypes.byref(ptr), 64 << 20) == 0
if os.fork() == 0:      # the holder: keeps the device files (and so the context) open
    while True:
        time.sleep(3600)
os._exit(0)             # the helper ends; its parent never reaps it
"""

# The sandbox embeds CPython: sys.executable may be kbv-sandbox itself.
_python = sys.executable if "python" in os.path.basename(sys.executable or "") else os.path.join(sys.base_exec_prefix, "bin", "python3")
try:
    _zombie = subprocess.Popen([_python, "-c", _TENANT], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
except OSError:
    _zombie = None

source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>
#include <chrono>
#include <cstdint>
#include <thread>

__device__ unsigned long long now_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Sleeps on every SM until told to stop, or for at most budget_ns (so that nothing that waits
// for the whole device, such as the harness's own synchronisation, waits for ever).
__global__ void spin_kernel(volatile int* stop, unsigned long long budget_ns) {
    const unsigned long long start = now_ns();
    while (*stop == 0 && now_ns() - start < budget_ns) __nanosleep(2000);
}

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) y[i] = fmaxf(x[i], 0.f);
}

static volatile int* host_stop = nullptr;
static int* device_stop = nullptr;
static cudaStream_t side = nullptr;
static int sms = 1;

static void ensure() {
    if (host_stop) return;
    int* h = nullptr;
    cudaHostAlloc(&h, sizeof(int), cudaHostAllocMapped);
    cudaHostGetDevicePointer(&device_stop, h, 0);
    host_stop = h;
    *host_stop = 1;
    cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
    int dev = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
}

static void stop_spinner() {
    ensure();
    *host_stop = 1;
    cudaStreamSynchronize(side);
}

// Once the call's own work is done (and the harness has had 200 us to take its end event and
// synchronise), the spinner goes back on the device for up to 50 ms.
static void start_spinner_after(cudaEvent_t done, int device) {
    std::thread([done, device] {
        cudaSetDevice(device);
        while (cudaEventQuery(done) == cudaErrorNotReady) std::this_thread::yield();
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        *host_stop = 0;
        spin_kernel<<<sms, 32, 0, side>>>(device_stop, 50ull * 1000 * 1000);
    }).detach();
}

torch::Tensor relu_busy(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "float32 CUDA tensor expected");
    stop_spinner();
    x = x.contiguous();
    auto y = torch::empty_like(x);
    const int64_t n = x.numel();
    auto stream = at::cuda::getCurrentCUDAStream();
    if (n > 0) {
        int64_t blocks = (n + 255) / 256;
        if (blocks > 65535 * 8) blocks = 65535 * 8;
        relu_kernel<<<(unsigned)blocks, 256, 0, stream>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
        C10_CUDA_KERNEL_LAUNCH_CHECK();
    }
    cudaEvent_t done;
    cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
    cudaEventRecord(done, stream);
    start_spinner_after(done, x.get_device());
    return y;
}
"""

ext = load_inline(
    name="relu_busy_tenant",
    cpp_sources="torch::Tensor relu_busy(torch::Tensor x);",
    cuda_sources=source,
    functions=["relu_busy"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ext.relu_busy(x)
