// The degenerate-output audit (problem_audit.cpp) on the device does no tensor arithmetic on the
// host. Its sample's figures were once reduced with CPU operators: each ran on torch's CPU thread
// pool, and on a GPU machine busy with other judges, sandboxes and builds those tiny parallel
// operators waited for threads, 0.19 s an audit on an H100 (session 32) against 0.014 before.
#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "judge/problem_audit.hpp"

namespace kbv::judge {
namespace {

std::mutex g_mutex;
std::vector<std::string> g_host_ops;

// Operators that move or view memory, not compute: the copies of figures to the host.
bool moves_memory(const std::string& name) {
  for (const char* part : {"copy", "aten::to", "contiguous", "empty", "_local_scalar_dense", "item", "view", "detach",
                           "as_strided", "resolve", "lift"})
    if (name.find(part) != std::string::npos) return true;
  return false;
}

// Any computing operator with a CPU tensor of more than a few elements among its inputs.
std::unique_ptr<at::ObserverContext> note_host_operator(const at::RecordFunction& fn) {
  if (moves_memory(fn.name())) return nullptr;
  for (const c10::IValue& value : fn.inputs()) {
    if (!value.isTensor()) continue;
    const at::Tensor& t = value.toTensor();
    if (t.defined() && t.device().is_cpu() && t.numel() > 16) {
      std::lock_guard<std::mutex> lock(g_mutex);
      g_host_ops.push_back(fn.name());
      break;
    }
  }
  return nullptr;
}

TEST(ProblemAuditGpu, TheAuditOfALargeOutputDoesNoArithmeticOnTheHost) {
  const auto options = at::TensorOptions().device(at::Device(at::kCUDA, 0)).dtype(at::kFloat);
  const at::Tensor x = at::randn({std::int64_t{1} << 24}, options);
  const at::Tensor ref = at::relu(x);
  torch_host::ArgList inputs(1);
  inputs[0].is_tensor = true;
  inputs[0].tensor = x;
  (void)trivial_pass({ref}, inputs, {1e-4, 1e-4}, true);  // once before: lazy set-up is not the audit's
  g_host_ops.clear();
  const auto handle = at::addThreadLocalCallback(at::RecordFunctionCallback(note_host_operator).needsInputs(true));
  const std::string answer = trivial_pass({ref}, inputs, {1e-4, 1e-4}, true);
  at::removeCallback(handle);
  EXPECT_EQ(answer, "");
  std::string names;
  for (const auto& n : g_host_ops) names += n + " ";
  EXPECT_TRUE(g_host_ops.empty()) << "operators on host tensors: " << names;
  // The same audit still finds what is trivial.
  EXPECT_EQ(trivial_pass({at::zeros_like(ref)}, {}, {1e-4, 1e-4}, true), "zeros");
  EXPECT_EQ(trivial_pass({at::full_like(ref, 2.5f)}, {}, {1e-4, 1e-4}, true), "constant");
  EXPECT_EQ(trivial_pass({ref}, {inputs[0]}, {1e-4, 1e-4}, true).empty(), true);
}

}  // namespace
}  // namespace kbv::judge
