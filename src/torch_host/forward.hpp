#pragma once
// Forward arguments and outputs crossing between C++ and the models' Python. Tensors stay
// at::Tensor on the C++ side (where the evaluation logic works on them); anything else a
// problem's get_inputs() returns (ints, floats, None) is passed through as the Python object.
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <pybind11/pybind11.h>

namespace kbv::torch_host {

struct Arg {
  bool is_tensor = false;
  at::Tensor tensor;
  pybind11::object value;  // when !is_tensor
};
using ArgList = std::vector<Arg>;

// get_inputs()'s list (or tuple) as arguments; raises std::runtime_error for nested containers.
ArgList args_from_python(const pybind11::handle& inputs);

// A deep copy: every tensor cloned (same strides), other values shared.
ArgList clone_args(const ArgList& args);

// One tensor per argument, in order: undefined for non-tensor arguments.
std::vector<at::Tensor> argument_tensors(const ArgList& args);

// Bytes held by the tensors of `args`.
std::int64_t args_bytes(const ArgList& args);

// Calls model(*args) without autograd and returns its outputs flattened: a tensor, a tuple or
// list of tensors (nested allowed) or a Python number (made a 0-d tensor). Raises
// std::runtime_error for anything else (None, dicts...).
std::vector<at::Tensor> call_forward(const pybind11::object& model, const ArgList& args);

// Bytes a correct implementation must write to produce these outputs (those on `device`): per
// storage, the smaller of its size and of the bytes its outputs view (an expanded view shows more
// than is written; a slice of a big buffer writes only the slice). For implausible_speed.
std::int64_t output_bytes_to_write(const std::vector<at::Tensor>& outputs, const at::Device& device);

// The arguments as the Python tuple forward() receives; timing packs each input set once so
// that the timed region holds only the call itself.
pybind11::tuple pack_args(const ArgList& args);

// model(*packed) without autograd, outputs dropped at once (as in eager use).
void call_forward_discard(const pybind11::object& model, const pybind11::tuple& packed);

}  // namespace kbv::torch_host
