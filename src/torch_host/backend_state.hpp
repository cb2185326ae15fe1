#pragma once
// The backend switches that change how fast (not what) eager PyTorch computes: cuDNN enabled and
// benchmarking, oneDNN, the SDPA backends, the default dtype, the intra-op thread count. The
// judge captures them once the problem is loaded (the state its reference is defined in: PyTorch's
// defaults unless the problem file sets otherwise) and restores them before every baseline
// sample, so nothing run since (the judge's own phases, torch.compile, Model.forward itself)
// leaves a baseline slower than it was. The candidate cannot reach them at all: it runs in
// another process. TF32 is set apart (device.hpp).
#include <c10/core/ScalarType.h>

namespace kbv::torch_host {

struct BackendState {
  bool cudnn = true;
  bool cudnn_benchmark = false;
  bool mkldnn = true;
  bool sdp_flash = true;
  bool sdp_mem_efficient = true;
  bool sdp_math = true;
  bool sdp_cudnn = true;
  c10::ScalarType default_dtype = c10::ScalarType::Float;
  int threads = 1;
};

BackendState capture_backend_state();
void restore_backend_state(const BackendState& state);

}  // namespace kbv::torch_host
