"""2-D convolution, stride 1, padding kernel_size // 2, with bias (level1/5_Conv2d.py), sample 0:
direct convolution, one thread per output element (grid-stride), fp32 accumulation, bias added last.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cstdint>

__global__ void conv2d_direct_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                     const float* __restrict__ bias, float* __restrict__ y,
                                     int Cin, int H, int W, int Cout, int KH, int KW,
                                     int pad_h, int pad_w, int Ho, int Wo, int64_t total) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += stride) {
        const int ow = (int)(idx % Wo);
        int64_t t = idx / Wo;
        const int oh = (int)(t % Ho);
        t /= Ho;
        const int oc = (int)(t % Cout);
        const int64_t n = t / Cout;

        float acc = 0.0f;
        const float* xn = x + n * (int64_t)Cin * H * W;
        const float* woc = w + (int64_t)oc * Cin * KH * KW;
        for (int ci = 0; ci < Cin; ++ci) {
            const float* xc = xn + (int64_t)ci * H * W;
            const float* wc = woc + (int64_t)ci * KH * KW;
            for (int kh = 0; kh < KH; ++kh) {
                const int ih = oh - pad_h + kh;
                if (ih < 0 || ih >= H) continue;
                for (int kw = 0; kw < KW; ++kw) {
                    const int iw = ow - pad_w + kw;
                    if (iw < 0 || iw >= W) continue;
                    acc = fmaf(__ldg(&xc[(int64_t)ih * W + iw]), __ldg(&wc[kh * KW + kw]), acc);
                }
            }
        }
        y[idx] = acc + __ldg(&bias[oc]);
    }
}

// ---- host ----
torch::Tensor conv2d_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, int64_t pad_h, int64_t pad_w) {
    TORCH_CHECK(x.is_cuda() && weight.is_cuda() && bias.is_cuda(), "conv2d_forward: CUDA tensors expected");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32 &&
                bias.scalar_type() == torch::kFloat32, "conv2d_forward: float32 expected");
    TORCH_CHECK(x.dim() == 4 && weight.dim() == 4 && bias.dim() == 1, "conv2d_forward: bad ranks");
    TORCH_CHECK(weight.size(1) == x.size(1), "conv2d_forward: channel mismatch (groups must be 1)");
    TORCH_CHECK(bias.size(0) == weight.size(0), "conv2d_forward: bias size mismatch");
    x = x.contiguous();
    weight = weight.contiguous();
    bias = bias.contiguous();
    const int64_t N = x.size(0), Cin = x.size(1), H = x.size(2), W = x.size(3);
    const int64_t Cout = weight.size(0), KH = weight.size(2), KW = weight.size(3);
    const int64_t Ho = H + 2 * pad_h - KH + 1;
    const int64_t Wo = W + 2 * pad_w - KW + 1;
    TORCH_CHECK(Ho >= 0 && Wo >= 0, "conv2d_forward: kernel larger than padded input");
    auto y = torch::empty({N, Cout, Ho, Wo}, x.options());
    const int64_t total = N * Cout * Ho * Wo;
    if (total == 0) return y;
    const int threads = 256;
    int64_t blocks = (total + threads - 1) / threads;
    if (blocks > 65535LL * 16) blocks = 65535LL * 16;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    conv2d_direct_kernel<<<(unsigned)blocks, threads, 0, stream>>>(
        x.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(), y.data_ptr<float>(),
        (int)Cin, (int)H, (int)W, (int)Cout, (int)KH, (int)KW, (int)pad_h, (int)pad_w, (int)Ho, (int)Wo, total);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = ("torch::Tensor conv2d_forward(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, "
              "int64_t pad_h, int64_t pad_w);")

conv_ext = load_inline(
    name="kbv_own_l1_p5_s0",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["conv2d_forward"],
    verbose=False,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        # same module/parameter names as Model (conv.weight, conv.bias)
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ph, pw = self.conv.padding
        return conv_ext.conv2d_forward(x.contiguous(), self.conv.weight, self.conv.bias, int(ph), int(pw))
