#include "torch_host/backend_state.hpp"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <c10/core/DefaultDtype.h>
#include <c10/core/ScalarTypeToTypeMeta.h>

namespace kbv::torch_host {

BackendState capture_backend_state() {
  auto& ctx = at::globalContext();
  BackendState s;
  s.cudnn = ctx.userEnabledCuDNN();
  s.cudnn_benchmark = ctx.benchmarkCuDNN();
  s.mkldnn = ctx.userEnabledMkldnn();
  s.sdp_flash = ctx.userEnabledFlashSDP();
  s.sdp_mem_efficient = ctx.userEnabledMemEfficientSDP();
  s.sdp_math = ctx.userEnabledMathSDP();
  s.sdp_cudnn = ctx.userEnabledCuDNNSDP();
  s.default_dtype = c10::typeMetaToScalarType(c10::get_default_dtype());
  s.threads = at::get_num_threads();
  return s;
}

void restore_backend_state(const BackendState& s) {
  auto& ctx = at::globalContext();
  ctx.setUserEnabledCuDNN(s.cudnn);
  ctx.setBenchmarkCuDNN(s.cudnn_benchmark);
  ctx.setUserEnabledMkldnn(s.mkldnn);
  ctx.setSDPUseFlash(s.sdp_flash);
  ctx.setSDPUseMemEfficient(s.sdp_mem_efficient);
  ctx.setSDPUseMath(s.sdp_math);
  ctx.setSDPUseCuDNN(s.sdp_cudnn);
  if (c10::typeMetaToScalarType(c10::get_default_dtype()) != s.default_dtype)
    c10::set_default_dtype(c10::scalarTypeToTypeMeta(s.default_dtype));
  if (at::get_num_threads() != s.threads) at::set_num_threads(s.threads);
}

}  // namespace kbv::torch_host
