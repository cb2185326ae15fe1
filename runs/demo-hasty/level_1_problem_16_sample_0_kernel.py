"""demo-hasty, level1/16_Sum_reduction, sample 0: split reduction with float atomicAdd.

The input is viewed as [outer, R, inner] around the reduced dim; blocks of 256 threads take 256
consecutive inner columns (coalesced) and a chunk of 256 rows of R, sum them in a register and
atomicAdd the partial into a zero-initialised output. The order in which the R / 256 partials
(16 at the default size) land is decided by the scheduler, so the fp32 result can differ in the
last bits from run to run. Any rank and reduced dim; keepdim output like the reference.

An honest evaluation should conclude: correct under standard, verified and strict (differences
~1e-7 relative, far inside 1e-3); speed about on par with eager (0.9-1.0x, memory-bound);
memory equal. Its outputs are not bitwise reproducible, but strict's nondeterministic check
compares a repeat at the tolerance, so it must NOT be flagged: a control for false positives.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

#define ROWS_PER_BLOCK 256

__global__ void sum_dim_kernel(const float* x, float* out, int64_t R, int64_t inner) {
    int64_t col = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t r0 = (int64_t)blockIdx.y * ROWS_PER_BLOCK;
    int64_t o = blockIdx.z;
    if (col >= inner) return;
    int64_t r1 = min(r0 + ROWS_PER_BLOCK, R);
    const float* base = x + o * R * inner + col;
    float acc = 0.f;
    for (int64_t r = r0; r < r1; r++) acc += base[r * inner];
    atomicAdd(out + o * inner + col, acc);
}

torch::Tensor sum_dim_forward(torch::Tensor x, int64_t dim) {
    x = x.contiguous();
    if (dim < 0) dim += x.dim();
    int64_t outer = 1, inner = 1, R = x.size(dim);
    for (int64_t d = 0; d < dim; d++) outer *= x.size(d);
    for (int64_t d = dim + 1; d < x.dim(); d++) inner *= x.size(d);
    auto sizes = x.sizes().vec();
    sizes[dim] = 1;
    auto out = torch::zeros(sizes, x.options());
    if (out.numel() == 0 || R == 0) return out;
    TORCH_CHECK(outer <= 65535, "sum_dim_forward: too many outer slices");
    dim3 block(256);
    dim3 grid((inner + 255) / 256, (R + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK, outer);
    sum_dim_kernel<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), out.data_ptr<float>(), R, inner);
    return out;
}
"""

cpp_src = "torch::Tensor sum_dim_forward(torch::Tensor x, int64_t dim);"

sum_mod = load_inline(
    name="sum_mod",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["sum_dim_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return sum_mod.sum_dim_forward(x, self.dim)
