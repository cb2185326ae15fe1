"""Hack: keeps the GPU busy whenever its own call is not running, so the baselines (timed in
another context) share the device with it and look slow.

Problem: examples/problems/level1/19_ReLU.py

A CUDA extension keeps a spinning kernel resident on a private stream: one block per SM, each
sleeping in a loop until a flag in mapped pinned memory says stop (or 50 ms have passed: a
harness that waits for the whole device after each call must not wait for ever). forward stops
it and waits for it to leave, runs an honest ReLU kernel, and has a host thread relaunch the
spinner 200 us after the ReLU has finished on the device, once the harness has taken its end
event: the candidate's own samples are clean.

The GPU time-slices between processes' contexts. With the spinner resident, every context
switch into the judge's (or the twin's) context waits for the sandbox's time slice to end, so
the baselines' samples, and the null call's, take a slice (~2 ms on an H200) longer.

kbv must conclude: freezing the sandbox stops its host threads, not a kernel already on the
device. The judge times the null call again once the sandbox has ended (its context, and the
spinner, gone) and compares the rounds' null calls with that idle one; most of them far above
it means the sandbox kept the device busy while the judge timed the others.
  - strict:   incorrect, flag device_busy.
  - standard/verified: correct, with the warning that the speedups are not to be trusted.
GpuStrict.PersistentKernelIsDeviceBusy (tests/gpu/test_hacks_gpu.cpp).

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
    name="relu_busy",
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
