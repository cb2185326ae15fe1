// Scan fixture: a .cu source a candidate builds with cpp_extension.load(). It pins its input in
// persisting L2, keeps the last output in a static tensor, and computes in half precision.
// Expected warnings: access_policy_window, result_caching, precision_downcast.
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_fp16.h>

__global__ void relu_half(const __half* x, __half* y, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = __hgt(x[i], __float2half(0.f)) ? x[i] : __float2half(0.f);
}

torch::Tensor relu_pinned(torch::Tensor x) {
    static torch::Tensor last;
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 32 << 20);
    cudaStreamAttrValue attr = {};
    attr.accessPolicyWindow.base_ptr = x.data_ptr();
    attr.accessPolicyWindow.num_bytes = x.nbytes();
    attr.accessPolicyWindow.hitRatio = 1.0f;
    attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attr);
    auto xh = x.to(torch::kHalf);
    last = torch::empty_like(xh);
    long n = x.numel();
    relu_half<<<(n + 255) / 256, 256, 0, stream>>>(
        reinterpret_cast<const __half*>(xh.data_ptr()), reinterpret_cast<__half*>(last.data_ptr()), n);
    return last.to(torch::kFloat32);
}
