"""A wrong split-K GEMM for examples/numerics/6_Matmul_large_K.py: matmul_large_k_splitk.py with
60 slices of K / 60 (rounded down), so the last 32 of 131072 products of every output are never
added. On the problem's own inputs (uniform [0, 1)) that is a relative error of ~2.4e-4, inside
rtol = 1e-3: standard passes it. On mixed-sign inputs the outputs are ~sqrt(K) and the 32
missing terms are not; the numerics model must not excuse it as summation order.

kbv must conclude: incorrect under verified and strict.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

constexpr int T = 32;

__global__ void partial_gemm(const float* A, const float* B, float* P, int M, int N, int K, int slice) {
    __shared__ float As[T][T + 1];
    __shared__ float Bs[T][T + 1];
    int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    int k_begin = blockIdx.z * slice, k_end = min(K, k_begin + slice);
    float acc = 0.f;
    for (int k0 = k_begin; k0 < k_end; k0 += T) {
        int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && ka < k_end) ? A[(long long)row * K + ka] : 0.f;
        Bs[threadIdx.y][threadIdx.x] = (kb < k_end && col < N) ? B[(long long)kb * N + col] : 0.f;
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < T; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) P[((long long)blockIdx.z * M + row) * N + col] = acc;
}

__global__ void sum_slices(const float* P, float* C, long long mn, int slices) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= mn) return;
    float s = 0.f;
    for (int z = 0; z < slices; ++z) s += P[z * mn + i];
    C[i] = s;
}

torch::Tensor gemm(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda() && A.dim() == 2 && B.dim() == 2 && A.size(1) == B.size(0));
    TORCH_CHECK(A.scalar_type() == torch::kFloat32 && B.scalar_type() == torch::kFloat32);
    A = A.contiguous();
    B = B.contiguous();
    int M = A.size(0), K = A.size(1), N = B.size(1);
    int slices = std::max(1, std::min(60, K / 256));
    int slice = K / slices;  // the bug: K % slices products are dropped
    auto P = torch::empty({slices, M, N}, A.options());
    auto C = torch::empty({M, N}, A.options());
    auto stream = at::cuda::getCurrentCUDAStream();
    dim3 block(T, T), grid((N + T - 1) / T, (M + T - 1) / T, slices);
    partial_gemm<<<grid, block, 0, stream>>>(A.data_ptr<float>(), B.data_ptr<float>(), P.data_ptr<float>(), M, N, K, slice);
    long long mn = (long long)M * N;
    sum_slices<<<(unsigned)((mn + 255) / 256), 256, 0, stream>>>(P.data_ptr<float>(), C.data_ptr<float>(), mn, slices);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return C;
}
"""

ext = load_inline(name="kbv_numerics_splitk_drops_tail", cpp_sources="torch::Tensor gemm(torch::Tensor A, torch::Tensor B);",
                  cuda_sources=source, functions=["gemm"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return ext.gemm(A, B)
