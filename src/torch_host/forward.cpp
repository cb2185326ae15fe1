#include "torch_host/forward.hpp"

#include <algorithm>
#include <map>

#include <stdexcept>

#include <torch/csrc/autograd/grad_mode.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/pybind.h>

namespace py = pybind11;

namespace kbv::torch_host {
namespace {

bool is_tensor(const py::handle& h) { return THPVariable_Check(h.ptr()); }

void flatten_into(const py::handle& out, std::vector<at::Tensor>& tensors, int depth) {
  if (depth > 8) throw std::runtime_error("forward returned outputs nested more than 8 deep");
  if (is_tensor(out)) {
    tensors.push_back(THPVariable_Unpack(out.ptr()));
  } else if (py::isinstance<py::tuple>(out) || py::isinstance<py::list>(out)) {
    for (auto item : out) flatten_into(item, tensors, depth + 1);
  } else if (py::isinstance<py::bool_>(out) || py::isinstance<py::int_>(out)) {
    tensors.push_back(at::scalar_tensor(out.cast<std::int64_t>(), at::kLong));
  } else if (py::isinstance<py::float_>(out)) {
    tensors.push_back(at::scalar_tensor(out.cast<double>(), at::kDouble));
  } else {
    throw std::runtime_error("forward returned a " +
                             py::str(py::type::handle_of(out).attr("__name__")).cast<std::string>() +
                             "; expected a tensor or a tuple of tensors");
  }
}

}  // namespace

py::tuple pack_args(const ArgList& args) {
  py::tuple packed(args.size());
  for (std::size_t i = 0; i < args.size(); ++i)
    packed[i] = args[i].is_tensor ? py::cast(args[i].tensor) : args[i].value;
  return packed;
}

ArgList args_from_python(const py::handle& inputs) {
  ArgList args;
  for (auto item : inputs) {
    Arg a;
    if (is_tensor(item)) {
      a.is_tensor = true;
      a.tensor = THPVariable_Unpack(item.ptr());
    } else if (py::isinstance<py::list>(item) || py::isinstance<py::tuple>(item)) {
      throw std::runtime_error("get_inputs() returned a nested list; kbv expects a flat list of arguments");
    } else {
      a.value = py::reinterpret_borrow<py::object>(item);
    }
    args.push_back(std::move(a));
  }
  return args;
}

ArgList clone_args(const ArgList& args) {
  ArgList out = args;
  for (auto& a : out)
    if (a.is_tensor) a.tensor = a.tensor.clone(at::MemoryFormat::Preserve);
  return out;
}

std::vector<at::Tensor> argument_tensors(const ArgList& args) {
  std::vector<at::Tensor> out;
  for (const auto& a : args) out.push_back(a.is_tensor ? a.tensor : at::Tensor());
  return out;
}

std::int64_t args_bytes(const ArgList& args) {
  std::int64_t total = 0;
  for (const auto& a : args)
    if (a.is_tensor) total += a.tensor.numel() * static_cast<std::int64_t>(a.tensor.element_size());
  return total;
}

std::vector<at::Tensor> call_forward(const py::object& model, const ArgList& args) {
  torch::autograd::AutoGradMode no_grad(false);
  py::object out = model(*pack_args(args));
  std::vector<at::Tensor> tensors;
  flatten_into(out, tensors, 0);
  return tensors;
}

void call_forward_discard(const py::object& model, const py::tuple& packed) {
  torch::autograd::AutoGradMode no_grad(false);
  model(*packed);
}

std::int64_t output_bytes_to_write(const std::vector<at::Tensor>& outputs, const at::Device& device) {
  std::map<const void*, std::pair<std::int64_t, std::int64_t>> per_storage;  // storage -> (size, viewed)
  for (const auto& t : outputs) {
    if (!t.defined() || t.device().type() != device.type() || !t.has_storage()) continue;
    auto& [size, viewed] = per_storage[t.storage().unsafeGetStorageImpl()];
    size = static_cast<std::int64_t>(t.storage().nbytes());
    viewed += static_cast<std::int64_t>(t.numel()) * static_cast<std::int64_t>(t.element_size());
  }
  std::int64_t total = 0;
  for (const auto& [impl, sizes] : per_storage) total += std::min(sizes.first, sizes.second);
  return total;
}

}  // namespace kbv::torch_host
