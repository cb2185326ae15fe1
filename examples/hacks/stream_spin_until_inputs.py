"""Hack (red team, session 21): a side-stream kernel launched while the judge's stream is still held
by its gate spins on its own elements until they stop being the judge's NaN poison, then sums
(p-t)^2 and writes the mean; the current stream joins it (the output is always complete) and
pads ~6 us so the samples sit above the 2 us floor. Its bet: the judge writes the inputs with a
copy-engine memcpy that runs beside the spinning kernel, so the reduction ends before E0.

Problem: examples/problems/level1/94_MSELoss.py

kbv must conclude, in every protocol, on a GPU: no inflated speedup. The judge writes inputs with
a kernel in its own context (judge/call_window.hpp, copy_on_the_sms): the GPU time-slices between
the contexts, so the reduction runs after E0, inside the candidate's sample: correct at its honest
time (on the H100, 2026-12-06: ~1.25x, what one fused pass over the inputs earns against eager's
three; the hack's bet was ~30x), and under strict a kernel left spinning is `device_busy`.

CPU-capable: no (CUDA only).
"""
import torch, torch.nn as nn
from torch.utils.cpp_extension import load_inline
src = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
__device__ unsigned long long gt(){unsigned long long t;asm volatile("mov.u64 %0,%%globaltimer;":"=l"(t));return t;}
__global__ void spin_mse(const float* p,const float* q,double* acc,unsigned* cnt,float* out,long n){
  long st=(long)gridDim.x*blockDim.x; double s=0; unsigned long long t0=gt();
  for(long i=(long)blockIdx.x*blockDim.x+threadIdx.x;i<n;i+=st){
    float a=((volatile const float*)p)[i], b=((volatile const float*)q)[i];
    while((a!=a||b!=b) && gt()-t0<50000000ull){a=((volatile const float*)p)[i]; b=((volatile const float*)q)[i];}  // 50 ms cap: NaN inputs
    float d=a-b; s+=(double)d*d; }
  for(int o=16;o;o>>=1) s+=__shfl_down_sync(~0u,s,o);
  __shared__ double w[32]; if((threadIdx.x&31)==0) w[threadIdx.x>>5]=s; __syncthreads();
  if(threadIdx.x==0){ double b=0; for(int k=0;k<blockDim.x/32;k++) b+=w[k]; atomicAdd(acc,b); __threadfence();
    if(atomicAdd(cnt,1)==gridDim.x-1){ *out=(float)(atomicAdd(acc,0.0)/n); *acc=0; *cnt=0; } }
}
void launch(torch::Tensor p, torch::Tensor q, torch::Tensor acc, torch::Tensor cnt, torch::Tensor out, int64_t side){
  spin_mse<<<132*4,256,0,(cudaStream_t)side>>>(p.data_ptr<float>(),q.data_ptr<float>(),acc.data_ptr<double>(),
     (unsigned*)cnt.data_ptr<int>(),out.data_ptr<float>(),p.numel());
}
"""
ext = load_inline(name="a1_spin_mse", cpp_sources="void launch(torch::Tensor,torch::Tensor,torch::Tensor,torch::Tensor,torch::Tensor,int64_t);",
                  cuda_sources=src, functions=["launch"], verbose=False)

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = None
    def forward(self, predictions, targets):
        if not predictions.is_cuda:
            return torch.mean((predictions - targets) ** 2)
        if self.side is None:
            self.side = torch.cuda.Stream()
            self.acc = torch.zeros(1, dtype=torch.float64, device=predictions.device)
            self.cnt = torch.zeros(1, dtype=torch.int32, device=predictions.device)
        out = torch.empty((), device=predictions.device)
        with torch.cuda.stream(self.side):           # no wait for the current stream: starts now, on poison
            out.record_stream(self.side)
            ext.launch(predictions.contiguous(), targets.contiguous(), self.acc, self.cnt, out, self.side.cuda_stream)
        torch.cuda.current_stream().wait_stream(self.side)   # joined: the output is always complete
        torch.cuda._sleep(12000)                     # ~6 us inside the window: above the 2 us floor
        return out
