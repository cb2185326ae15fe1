"""Tall-skinny matmul C = A @ B (level1/2_Tall_skinny_matmul.py), sample 1: output-streaming SGEMM for
small K (64x128 block tile, BK = 16, each thread 8 rows x 4 consecutive columns so stores are
float4 and warp-contiguous when N % 4 == 0; scalar guarded stores otherwise), fp32 FMA."""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cstdint>

// Output-bandwidth-oriented SGEMM for small K: C = A (MxK) @ B (KxN), row-major, fp32 FMA.
// Block tile 64 rows x 128 cols, K-step 16, 256 threads. Thread (ty = tid/32, tx = tid%32) owns
// rows ty*8..ty*8+7 and the 4 consecutive columns tx*4..tx*4+3, so every warp writes 512
// contiguous bytes of one output row per store (float4 stores when N % 4 == 0, scalar guarded
// stores otherwise). Fully guarded: any M, N, K.
#define T_BM 64
#define T_BN 128
#define T_BK 16
#define T_THREADS 256

__global__ void __launch_bounds__(T_THREADS)
sgemm_rowstream_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                       int M, int N, int K, int vec_store) {
    __shared__ __align__(16) float As[T_BK][T_BM + 4];  // k-major (transposed) A tile, padded (row = 272 B)
    __shared__ __align__(16) float Bs[T_BK][T_BN];

    const int tid = threadIdx.x;
    const int tx = tid & 31;
    const int ty = tid >> 5;
    const int blockRow = blockIdx.y * T_BM;
    const int blockCol = blockIdx.x * T_BN;

    // load mapping: A tile 64x16 (4 per thread), B tile 16x128 (8 per thread)
    const int aRow = tid >> 2;          // 0..63
    const int aK = (tid & 3) * 4;       // 0,4,8,12
    const int bK = tid >> 4;            // 0..15
    const int bCol = (tid & 15) * 8;    // 0..120

    float acc[8][4];
    #pragma unroll
    for (int i = 0; i < 8; ++i)
        #pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += T_BK) {
        const int gr = blockRow + aRow;
        #pragma unroll
        for (int q = 0; q < 4; ++q) {
            const int gk = k0 + aK + q;
            As[aK + q][aRow] = (gr < M && gk < K) ? A[(int64_t)gr * K + gk] : 0.0f;
        }
        const int gkb = k0 + bK;
        const bool krow = gkb < K;
        float rb[8];
        #pragma unroll
        for (int q = 0; q < 8; ++q) {
            const int gc = blockCol + bCol + q;
            rb[q] = (krow && gc < N) ? B[(int64_t)gkb * N + gc] : 0.0f;
        }
        *reinterpret_cast<float4*>(&Bs[bK][bCol]) = make_float4(rb[0], rb[1], rb[2], rb[3]);
        *reinterpret_cast<float4*>(&Bs[bK][bCol + 4]) = make_float4(rb[4], rb[5], rb[6], rb[7]);
        __syncthreads();

        #pragma unroll
        for (int kk = 0; kk < T_BK; ++kk) {
            const float4 a0 = *reinterpret_cast<const float4*>(&As[kk][ty * 8]);
            const float4 a1 = *reinterpret_cast<const float4*>(&As[kk][ty * 8 + 4]);
            const float4 b = *reinterpret_cast<const float4*>(&Bs[kk][tx * 4]);
            const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            #pragma unroll
            for (int i = 0; i < 8; ++i) {
                acc[i][0] = fmaf(a[i], b.x, acc[i][0]);
                acc[i][1] = fmaf(a[i], b.y, acc[i][1]);
                acc[i][2] = fmaf(a[i], b.z, acc[i][2]);
                acc[i][3] = fmaf(a[i], b.w, acc[i][3]);
            }
        }
        __syncthreads();
    }

    const int c0 = blockCol + tx * 4;
    #pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int r = blockRow + ty * 8 + i;
        if (r >= M) break;
        float* crow = C + (int64_t)r * N;
        if (vec_store && c0 + 3 < N) {
            *reinterpret_cast<float4*>(crow + c0) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
        } else {
            #pragma unroll
            for (int j = 0; j < 4; ++j)
                if (c0 + j < N) crow[c0 + j] = acc[i][j];
        }
    }
}

// ---- host ----
torch::Tensor matmul_forward(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda(), "matmul_forward: CUDA tensors expected");
    TORCH_CHECK(A.scalar_type() == torch::kFloat32 && B.scalar_type() == torch::kFloat32,
                "matmul_forward: float32 expected");
    TORCH_CHECK(A.dim() == 2 && B.dim() == 2, "matmul_forward: A [M, K] and B [K, N] expected");
    TORCH_CHECK(A.size(1) == B.size(0), "matmul_forward: inner dimensions differ");
    A = A.contiguous();
    B = B.contiguous();
    const int64_t M = A.size(0);
    const int64_t K = A.size(1);
    const int64_t N = B.size(1);
    TORCH_CHECK(M < 2147483647LL && N < 2147483647LL && K < 2147483647LL, "matmul_forward: dimension too large");
    auto C = torch::empty({M, N}, A.options());
    if (M == 0 || N == 0) return C;
    const float* ap = A.data_ptr<float>();
    const float* bp = B.data_ptr<float>();
    float* cp = C.data_ptr<float>();
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    const int vec_store = (N % 4 == 0) && (reinterpret_cast<uintptr_t>(cp) % 16 == 0);
    dim3 grid((unsigned)((N + T_BN - 1) / T_BN), (unsigned)((M + T_BM - 1) / T_BM), 1);
    TORCH_CHECK(grid.y <= 65535u, "matmul_forward: M too large for gridDim.y");
    sgemm_rowstream_kernel<<<grid, T_THREADS, 0, stream>>>(ap, bp, cp, (int)M, (int)N, (int)K, vec_store);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return C;
}
"""

cpp_source = "torch::Tensor matmul_forward(torch::Tensor A, torch::Tensor B);"

mm_ext = load_inline(
    name="kbv_own_l1_p2_s1",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["matmul_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return mm_ext.matmul_forward(A.contiguous(), B.contiguous())
