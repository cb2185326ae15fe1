import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

conv3d_cudnn_bias_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cstdint>

// Bias add over an NCDHW tensor, in place on the freshly allocated convolution output.
// Grid: x over the spatial volume (float4 when the volume is a multiple of 4),
// y over (n, c) planes, so each thread reads its channel's bias once.
__global__ void bias_add_ncdhw_vec4_kernel(float4* __restrict__ y4, const float* __restrict__ b,
                                           int64_t planes, int C, int64_t S4) {
    for (int64_t plane = blockIdx.y; plane < planes; plane += gridDim.y) {
        const float bv = __ldg(b + (plane % C));
        float4* yp = y4 + plane * S4;
        for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < S4; i += (int64_t)gridDim.x * blockDim.x) {
            float4 v = yp[i];
            v.x += bv; v.y += bv; v.z += bv; v.w += bv;
            yp[i] = v;
        }
    }
}

__global__ void bias_add_ncdhw_kernel(float* __restrict__ y, const float* __restrict__ b,
                                      int64_t planes, int C, int64_t S) {
    for (int64_t plane = blockIdx.y; plane < planes; plane += gridDim.y) {
        const float bv = __ldg(b + (plane % C));
        float* yp = y + plane * S;
        for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < S; i += (int64_t)gridDim.x * blockDim.x) {
            yp[i] += bv;
        }
    }
}

// ---- host
// The convolution itself goes through ATen (cuDNN when available) with TF32 explicitly
// disabled, so the result keeps fp32 semantics regardless of global flags; the bias is
// added by the custom kernel above.
torch::Tensor conv3d_bias_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, int64_t padding) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda(), "conv3d_bias_forward: CUDA tensors expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32,
                "conv3d_bias_forward: float32 expected");
    TORCH_CHECK(x.dim() == 5 && weight.dim() == 5, "conv3d_bias_forward: 5-D input and weight expected");
    x = x.contiguous();
    weight = weight.contiguous();
    auto& ctx = at::globalContext();
    auto y = at::_convolution(x, weight, std::nullopt,
                              /*stride=*/{1, 1, 1}, /*padding=*/{padding, padding, padding}, /*dilation=*/{1, 1, 1},
                              /*transposed=*/false, /*output_padding=*/{0, 0, 0}, /*groups=*/1,
                              ctx.benchmarkCuDNN(), ctx.deterministicCuDNN(), ctx.userEnabledCuDNN(),
                              /*allow_tf32=*/false);
    y = y.contiguous();
    const bool has_bias = bias.defined() && bias.numel() > 0;
    if (!has_bias || y.numel() == 0) return y;
    TORCH_CHECK(bias.is_cuda() && bias.scalar_type() == torch::kFloat32 && bias.numel() == y.size(1),
                "conv3d_bias_forward: bias must be float32 [C_out] on CUDA");
    bias = bias.contiguous();
    const int64_t C = y.size(1);
    const int64_t planes = y.size(0) * C;
    const int64_t S = y.size(2) * y.size(3) * y.size(4);
    auto stream = at::cuda::getCurrentCUDAStream();
    const int threads = 256;
    float* yp = y.data_ptr<float>();
    const unsigned gy = (unsigned)std::min<int64_t>(planes, 65535);
    if (S % 4 == 0 && reinterpret_cast<uintptr_t>(yp) % 16 == 0) {
        const int64_t S4 = S / 4;
        const unsigned gx = (unsigned)std::min<int64_t>((S4 + threads - 1) / threads, 4096);
        bias_add_ncdhw_vec4_kernel<<<dim3(gx, gy), threads, 0, stream>>>(
            reinterpret_cast<float4*>(yp), bias.data_ptr<float>(), planes, (int)C, S4);
    } else {
        const unsigned gx = (unsigned)std::min<int64_t>((S + threads - 1) / threads, 4096);
        bias_add_ncdhw_kernel<<<dim3(gx, gy), threads, 0, stream>>>(yp, bias.data_ptr<float>(), planes, (int)C, S);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

conv3d_ext = load_inline(
    name="kbvown_conv3d_cudnn_bias_29_0",
    cpp_sources="torch::Tensor conv3d_bias_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, int64_t padding);",
    cuda_sources=conv3d_cudnn_bias_source,
    functions=["conv3d_bias_forward"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bias = self.conv.bias if self.conv.bias is not None else torch.empty(0, device=x.device, dtype=x.dtype)
        return conv3d_ext.conv3d_bias_forward(x, self.conv.weight, bias, self.conv.padding[0])
