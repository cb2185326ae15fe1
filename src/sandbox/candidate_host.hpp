#pragma once
// The candidate inside its sandbox: builds and imports it (build hooks installed first), makes
// ModelNew with the problem's init arguments and seed, takes the judge's weights where names and
// shapes match, and runs forward() on the input slots the judge bound. Everything here runs in
// the untrusted process: it decides nothing, it only hands data back.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>

#include "ipc/message_fields.hpp"
#include "ipc/runner_protocol.hpp"
#include "ipc/unique_fd.hpp"
#include "sandbox/build_hooks.hpp"
#include "torch_host/backend_state.hpp"
#include "torch_host/forward.hpp"

namespace kbv::sandbox {

class CandidateHost {
 public:
  explicit CandidateHost(const at::Device& device) : device_(device) {}

  // The answer to hello: imported / built / failed (see ipc/runner_protocol.hpp).
  nlohmann::json set_up(const ipc::Fields& hello);
  // ModelNew(*init_inputs) under the judge's seed: constructed / failed.
  nlohmann::json construct(const ipc::Fields& message);
  nlohmann::json load_weights(const ipc::Fields& message, ipc::UniqueFd fd);
  nlohmann::json bind(const ipc::Fields& message, ipc::UniqueFd fd);
  // One forward() on a bound slot. Throws what the candidate throws.
  std::vector<at::Tensor> forward(std::uint32_t slot);
  // Tensors of a slot (the exporter needs them to recognise outputs that view an input).
  std::vector<at::Tensor> slot_tensors(std::uint32_t slot) const;
  bool has_slot(std::uint32_t slot) const { return slot < slots_.size() && slots_[slot].has_value(); }
  bool tf32() const { return tf32_; }
  // Seconds set_up spent installing the build hooks and importing the candidate (for profiling).
  const nlohmann::json& set_up_seconds() const { return set_up_seconds_; }

 private:
  nlohmann::json failed(const std::string& stage, const std::string& kind, const std::string& message,
                        const std::string& detail = "") const;

  at::Device device_;
  bool tf32_ = false;
  std::string precision_ = "fp32";
  pybind11::module_ module_;
  pybind11::object model_;
  // The backend switches as the first ModelNew found them: every later one (the next protocol's)
  // is built under the same, not under what the previous protocol's calls left.
  std::optional<torch_host::BackendState> construct_state_;
  std::optional<BuildHooks> hooks_;
  std::vector<std::optional<torch_host::ArgList>> slots_;
  std::vector<pybind11::tuple> packed_;
  nlohmann::json set_up_seconds_ = nlohmann::json::object();
};

}  // namespace kbv::sandbox
