"""Honest CUDA kernel for examples/numerics/16_Matmul_transposed_A.py: a plain shared-memory tiled
fp32 GEMM (32x32 tiles, fp32 accumulation in k order) that reads A through its strides, so A.T
needs no copy. It sums in a different order from cuBLAS, nothing else.

kbv must conclude: correct under every protocol. Under verified and strict, heavy-tailed inputs
put some elements outside atol = rtol = 1e-3 of the float32 reference (order of summation only);
the numerics model (a float64 run of Model) must show its error is of eager's own size.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

constexpr int T = 32;

__global__ void tiled_gemm(const float* A, const float* B, float* C, int M, int N, int K,
                           long long a_m, long long a_k, long long b_k, long long b_n) {
    __shared__ float As[T][T + 1];
    __shared__ float Bs[T][T + 1];
    int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    float acc = 0.f;
    for (int k0 = 0; k0 < K; k0 += T) {
        int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? A[row * a_m + ka * a_k] : 0.f;
        Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? B[kb * b_k + col * b_n] : 0.f;
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < T; ++k) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
        __syncthreads();
    }
    if (row < M && col < N) C[(long long)row * N + col] = acc;
}

torch::Tensor gemm(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda() && A.dim() == 2 && B.dim() == 2 && A.size(1) == B.size(0));
    TORCH_CHECK(A.scalar_type() == torch::kFloat32 && B.scalar_type() == torch::kFloat32);
    int M = A.size(0), K = A.size(1), N = B.size(1);
    auto C = torch::empty({M, N}, A.options());
    dim3 block(T, T), grid((N + T - 1) / T, (M + T - 1) / T);
    tiled_gemm<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(
        A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), M, N, K,
        A.stride(0), A.stride(1), B.stride(0), B.stride(1));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return C;
}
"""

ext = load_inline(name="kbv_numerics_tiled_gemm", cpp_sources="torch::Tensor gemm(torch::Tensor A, torch::Tensor B);",
                  cuda_sources=source, functions=["gemm"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return ext.gemm(A.T, B)
