"""demo-careful, level1/1_Square_matmul, sample 1: cuBLAS with TF32 tensor cores, called from C++.

cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32 on torch's cuBLAS handle and current stream.
cuBLAS is column-major: a row-major [M, K] matrix is its column-major transpose, so the
row-major product C = A B is computed as the column-major C^T = B^T A^T (B passed first, no
transposes, leading dimensions N, K, N). Any M, N, K that fit in int; fp32 in and out.

An honest evaluation should conclude: correct under standard (errors ~1e-5 relative on
torch.rand inputs), verified and strict (same TF32 rounding as the TF32-on reference); no
integrity flags (TF32 is chosen per call, no global state is changed). Speed: a 5-7x "win"
under standard, which is only the TF32-off baseline; about 1.0x under verified and strict
(it is the same cuBLAS TF32 GEMM the baseline runs). Memory equal to the baseline (cuBLAS
workspace aside).
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cublas_tf32_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cublas_v2.h>
#include <climits>

torch::Tensor matmul_tf32(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda(), "matmul_tf32: CUDA tensors expected");
    TORCH_CHECK(A.scalar_type() == torch::kFloat32 && B.scalar_type() == torch::kFloat32, "matmul_tf32: float32 expected");
    TORCH_CHECK(A.dim() == 2 && B.dim() == 2 && A.size(1) == B.size(0), "matmul_tf32: shape mismatch");
    A = A.contiguous();
    B = B.contiguous();
    const int64_t M = A.size(0), K = A.size(1), N = B.size(1);
    TORCH_CHECK(M <= INT_MAX && N <= INT_MAX && K <= INT_MAX, "matmul_tf32: dimensions too large for cuBLAS int API");
    auto C = torch::empty({M, N}, A.options());
    if (M == 0 || N == 0) return C;
    if (K == 0) return C.zero_();

    cublasHandle_t handle = at::cuda::getCurrentCUDABlasHandle();   // bound to the current stream
    const float alpha = 1.0f, beta = 0.0f;
    // Column-major view: C^T (N x M) = B^T (N x K) * A^T (K x M).
    cublasStatus_t st = cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N,
                                     (int)N, (int)M, (int)K, &alpha,
                                     B.data_ptr<float>(), CUDA_R_32F, (int)N,
                                     A.data_ptr<float>(), CUDA_R_32F, (int)K,
                                     &beta,
                                     C.data_ptr<float>(), CUDA_R_32F, (int)N,
                                     CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
    TORCH_CHECK(st == CUBLAS_STATUS_SUCCESS, "matmul_tf32: cublasGemmEx failed with status ", (int)st);
    return C;
}
"""

cublas_tf32_ext = load_inline(
    name="matmul_cublas_tf32",
    cpp_sources="torch::Tensor matmul_tf32(torch::Tensor A, torch::Tensor B);",
    cuda_sources=cublas_tf32_source,
    functions=["matmul_tf32"],
    extra_ldflags=["-lcublas"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return cublas_tf32_ext.matmul_tf32(A, B)
