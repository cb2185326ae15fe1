#include "judge/integrity.hpp"

#include <cuda_runtime_api.h>

#include "judge/blockwise.hpp"

namespace kbv::judge {

std::vector<at::Tensor> snapshot_outputs(const std::vector<at::Tensor>& views) {
  std::vector<at::Tensor> out;
  for (const auto& v : views) {
    if (v.is_cuda() && v.is_complex())  // complex x * 1 is not x (inf + 0j becomes inf + nanj): its floats, times 1
      out.push_back(at::view_as_complex(at::mul(at::view_as_real(v), 1).contiguous()));
    else if (v.is_cuda())
      out.push_back(v.scalar_type() == at::kBool ? at::logical_and(v, v) : at::mul(v, 1));
    else
      out.push_back(v.clone());
  }
  return out;
}

std::optional<std::string> find_input_mutation(const torch_host::ArgList& pristine, const std::vector<at::Tensor>& after_call) {
  for (std::size_t i = 0; i < pristine.size() && i < after_call.size(); ++i) {
    if (!pristine[i].is_tensor || !after_call[i].defined()) continue;
    const at::Tensor& a = pristine[i].tensor;
    at::Tensor b = after_call[i].to(a.device());
    if (a.sizes() != b.sizes() || a.scalar_type() != b.scalar_type()) return "input " + std::to_string(i) + " changed shape or dtype";
    const std::int64_t changed = count_different(a, b);
    if (changed > 0)
      return "input " + std::to_string(i) + ": " + std::to_string(changed) + " of " + std::to_string(a.numel()) +
             " elements changed by the candidate's call";
  }
  return std::nullopt;
}

std::optional<std::string> find_late_writes(const std::vector<at::Tensor>& at_end, const std::vector<at::Tensor>& now) {
  for (std::size_t i = 0; i < at_end.size() && i < now.size(); ++i) {
    if (!at_end[i].defined() || !now[i].defined() || at_end[i].sizes() != now[i].sizes()) continue;
    const std::int64_t changed = count_different(at_end[i], now[i]);
    if (changed > 0)
      return "output " + std::to_string(i) + ": " + std::to_string(changed) + " of " + std::to_string(at_end[i].numel()) +
             " elements were written after the call's stream had finished";
  }
  return std::nullopt;
}

void reset_persisting_l2(const at::Device& device) {
  if (!device.is_cuda()) return;
  cudaCtxResetPersistingL2Cache();
  cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
  cudaGetLastError();  // unsupported on some parts: never let it surface
}

}  // namespace kbv::judge
