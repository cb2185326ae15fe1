#include "sandbox/candidate_host.hpp"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/util/Exception.h>
#include <pybind11/pybind11.h>

#include "torch_host/device.hpp"
#include "torch_host/models.hpp"
#include "torch_host/py_json.hpp"
#include "torch_host/python_runtime.hpp"
#include "torch_host/shared_tensor.hpp"

namespace py = pybind11;

namespace kbv::sandbox {
namespace {

std::optional<at::ScalarType> model_dtype(const std::string& precision) {
  if (precision == "bf16") return at::kBFloat16;
  if (precision == "fp16") return at::kHalf;
  return std::nullopt;
}

nlohmann::json extensions_json(const BuildHooks& hooks) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : hooks.extensions())
    out.push_back({{"requested_name", e.requested_name}, {"unique_name", e.unique_name}, {"build_dir", e.build_dir},
                   {"seconds", e.seconds}, {"cuda", e.cuda},
                   {"extension_h_left_out", e.extension_h_left_out}, {"lean_prelude", e.lean_prelude},
                   {"lean_binding", e.lean_binding}});
  return out;
}

}  // namespace

nlohmann::json CandidateHost::failed(const std::string& stage, const std::string& kind, const std::string& message,
                                     const std::string& detail) const {
  nlohmann::json f{{"type", "failed"}, {"stage", stage}, {"kind", kind}, {"message", message.substr(0, 4000)},
                   {"detail", detail.substr(0, 8000)}};
  if (hooks_) f["extensions"] = extensions_json(*hooks_);
  return f;
}

nlohmann::json CandidateHost::set_up(const ipc::Fields& hello) {
  tf32_ = hello.boolean("tf32");
  ipc::Fields candidate = hello.object("candidate");
  ipc::Fields build = hello.object("build");
  // Extensions build for this device's architecture only, the same whoever started the build
  // (a build phase, an evaluation) and whatever TORCH_CUDA_ARCH_LIST the environment holds: the
  // same flags every time, so a cached build is reused, never rebuilt.
  std::string arch = build.str("cuda_arch", 16);
  if (arch.empty() && device_.is_cuda()) {
    const cudaDeviceProp* prop = at::cuda::getDeviceProperties(device_.index());
    arch = std::to_string(prop->major) + "." + std::to_string(prop->minor);
  }
  BuildHookConfig config{build.str("dir"), build.str("source_hash", 128), build.str("log"), device_.is_cuda(),
                         hello.has("device_free") && hello.boolean("device_free"), arch, build.str("torch_pch"),
                         !build.has("lean_prelude") || build.boolean("lean_prelude"),
                         !build.has("lean_binding") || build.boolean("lean_binding")};
  try {
    auto start = std::chrono::steady_clock::now();
    hooks_.emplace(config);
    auto hooked = std::chrono::steady_clock::now();
    set_up_seconds_["sandbox.hooks"] = std::chrono::duration<double>(hooked - start).count();
    module_ = torch_host::import_file(candidate.str("path"), candidate.str("module", 64));
    set_up_seconds_["sandbox.import"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - hooked).count();
  } catch (py::error_already_set& e) {
    auto text = torch_host::describe_python_error(e);
    if (BuildHooks::is_needs_cuda(e)) return failed("build", "needs_cuda", text.message);
    if (hooks_ && hooks_->failed_in_build()) {
      nlohmann::json answer = failed("build", "compile_error", "extension build failed: " + text.message, text.detail);
      answer["compiler"] = hooks_->compile_failed(e);
      return answer;
    }
    return failed("import", "compile_error", "importing the candidate raised " + text.one_line(), text.detail);
  } catch (const std::exception& e) {
    return failed("import", "compile_error", std::string("importing the candidate failed: ") + e.what());
  }
  nlohmann::json extensions = extensions_json(*hooks_);
  if (hello.boolean("build_only")) return {{"type", "built"}, {"extensions", extensions}};
  if (!py::hasattr(module_, "ModelNew")) return failed("import", "compile_error", "the candidate defines no ModelNew class");
  precision_ = hello.str("precision", 8);
  return {{"type", "imported"}, {"extensions", extensions}};
}

nlohmann::json CandidateHost::construct(const ipc::Fields& message) {
  // One sandbox serves every protocol of its candidate: each constructs its own ModelNew, under
  // its own TF32 setting.
  if (message.json().contains("tf32")) tf32_ = message.boolean("tf32");
  if (model_) {
    // The previous protocol's ModelNew goes first, cycles and cached blocks included: the next
    // protocol's memory figures (its resident bytes, the driver's per-process view) are its own.
    model_ = py::object();
    py::module_::import("gc").attr("collect")();
    if (device_.is_cuda()) c10::cuda::CUDACachingAllocator::emptyCache();
  }
  if (construct_state_) torch_host::restore_backend_state(*construct_state_);
  else construct_state_ = torch_host::capture_backend_state();
  try {
    py::object init = torch_host::json_to_python(message.json().at("init_inputs"));
    model_ = torch_host::construct_model(module_.attr("ModelNew"), init, static_cast<std::uint64_t>(message.integer("model_seed", 0, INT64_MAX)),
                                         device_, model_dtype(precision_));
  } catch (py::error_already_set& e) {
    auto text = torch_host::describe_python_error(e);
    return failed("construct", "runtime_error", "constructing ModelNew raised " + text.one_line(), text.detail);
  } catch (const std::exception& e) {
    return failed("construct", "runtime_error", std::string("constructing ModelNew failed: ") + e.what());
  }
  nlohmann::json state = nlohmann::json::array();
  for (const auto& [name, t] : torch_host::state_entries(model_)) state.push_back({{"name", name}, {"shape", t.sizes().vec()}});
  return {{"type", "constructed"}, {"state", state}};
}

nlohmann::json CandidateHost::load_weights(const ipc::Fields& message, ipc::UniqueFd fd) {
  std::vector<at::Tensor> tensors = torch_host::import_block(message.json().at("block"), std::move(fd), device_);
  const auto& names = message.array("names", tensors.size());
  if (names.size() != tensors.size()) throw ipc::ProtocolError("weights: names and views differ in number");
  std::vector<std::pair<std::string, at::Tensor>> named;
  for (std::size_t i = 0; i < tensors.size(); ++i) named.emplace_back(names[i].get<std::string>(), tensors[i]);
  torch_host::WeightCopy copy = torch_host::copy_named_weights(named, model_);
  torch_host::synchronize(device_);
  nlohmann::json unmatched = nlohmann::json::array();
  for (std::size_t i = 0; i < copy.unmatched.size() && i < 20; ++i) unmatched.push_back(copy.unmatched[i]);
  return {{"type", "weights_loaded"}, {"copied", copy.copied}, {"entries", copy.candidate_entries}, {"unmatched", unmatched}};
}

nlohmann::json CandidateHost::bind(const ipc::Fields& message, ipc::UniqueFd fd) {
  auto slot = static_cast<std::uint32_t>(message.integer("slot", 0, ipc::kMaxSlots - 1));
  std::vector<at::Tensor> tensors = torch_host::import_block(message.json().at("block"), std::move(fd), device_);
  torch_host::ArgList args;
  for (const auto& a : message.array("args", 256)) {
    torch_host::Arg arg;
    if (a.contains("tensor")) {
      std::size_t i = a["tensor"].get<std::size_t>();
      if (i >= tensors.size()) throw ipc::ProtocolError("bind: tensor index out of range");
      arg.is_tensor = true;
      arg.tensor = tensors[i];
    } else {
      arg.value = torch_host::json_to_python(a.at("value"));
    }
    args.push_back(std::move(arg));
  }
  if (slots_.size() <= slot) {
    slots_.resize(slot + 1);
    packed_.resize(slot + 1);
  }
  packed_[slot] = torch_host::pack_args(args);
  slots_[slot] = std::move(args);
  return {{"type", "bound"}, {"slot", slot}};
}

std::vector<at::Tensor> CandidateHost::forward(std::uint32_t slot) {
  torch_host::set_tf32(tf32_);
  return torch_host::call_forward(model_, *slots_[slot]);
}

std::vector<at::Tensor> CandidateHost::slot_tensors(std::uint32_t slot) const {
  return has_slot(slot) ? torch_host::argument_tensors(*slots_[slot]) : std::vector<at::Tensor>{};
}

}  // namespace kbv::sandbox
