#pragma once
// Building Model and ModelNew the same way: same constructor arguments, same seed, same device
// and dtype; and ModelNew given Model's weights wherever names and shapes agree, so a candidate
// is never judged against differently initialised parameters.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <pybind11/pybind11.h>

namespace kbv::torch_host {

// cls(*init_inputs) under at::manual_seed(seed), created under `device` as the default device,
// then moved to device (and dtype, for half precisions).
pybind11::object construct_model(const pybind11::object& cls, const pybind11::object& init_inputs,
                                 std::uint64_t seed, const at::Device& device,
                                 std::optional<at::ScalarType> dtype);

struct WeightCopy {
  int copied = 0;           // state entries of the candidate overwritten with Model's
  int candidate_entries = 0;
  std::string note;         // for the verdict's warnings when not everything matched
  std::vector<std::string> unmatched;  // candidate entries that kept their own values
};

// For every entry of to.state_dict() whose name and shape are among `from`, copy the values in
// place (the sandbox gives ModelNew the judge's Model weights this way).
WeightCopy copy_named_weights(const std::vector<std::pair<std::string, at::Tensor>>& from, const pybind11::object& to);

// model.state_dict() as (name, tensor) pairs, in its order; empty for a non-Module.
std::vector<std::pair<std::string, at::Tensor>> state_entries(const pybind11::object& model);

std::vector<std::pair<std::string, at::Tensor>> named_parameters(const pybind11::object& model);

}  // namespace kbv::torch_host
