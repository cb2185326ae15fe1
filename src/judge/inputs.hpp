#pragma once
// Forward arguments for each correctness distribution and for timing. The problem's own
// get_inputs() is the template (shapes, dtypes, integer values such as class indices); it runs
// with the evaluation device as torch's default device, so inputs are made on the GPU instead of
// by the CPU (SPEC: 225 of 332 s of the anchor's evaluation was torch.rand on the CPU). Value
// transformations and fresh draws happen in C++ (distributions.hpp) from private generators.
#include <cstdint>
#include <optional>

#include <ATen/ATen.h>
#include <pybind11/pybind11.h>

#include "core/protocol.hpp"
#include "torch_host/forward.hpp"

namespace kbv::judge {

using torch_host::Arg;
using torch_host::ArgList;

struct InputSource {
  pybind11::object get_inputs;             // the problem's function
  at::Device device = at::kCPU;
  std::optional<at::ScalarType> float_dtype;  // half precisions: floating inputs cast to this
};

// What floating tensors are cast to under a precision (fp32: kept as they are).
std::optional<at::ScalarType> float_dtype_of(Precision p);

// fn() under at::manual_seed(seed), with `device` as torch's default device (tensors it makes
// without naming a device are made there).
pybind11::object call_on_device(const pybind11::object& fn, const at::Device& device, std::uint64_t seed);

// The arguments in what a get_inputs()-like function returned: moved to source.device, floating
// tensors cast to source.float_dtype.
ArgList args_on_device(const pybind11::handle& drawn, const InputSource& source);

// get_inputs() under at::manual_seed(seed), moved to the device, floating tensors cast.
ArgList draw_inputs(const InputSource& source, std::uint64_t seed);

// The arguments of one correctness distribution (see DistributionKind).
ArgList distribution_inputs(const InputSource& source, const DistributionSpec& spec);

}  // namespace kbv::judge
