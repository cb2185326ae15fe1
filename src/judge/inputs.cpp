#include "judge/inputs.hpp"

#include "judge/distributions.hpp"

#include <utility>

namespace py = pybind11;

namespace kbv::judge {

std::optional<at::ScalarType> float_dtype_of(Precision p) {
  switch (p) {
    case Precision::bf16: return at::kBFloat16;
    case Precision::fp16: return at::kHalf;
    case Precision::fp32: return std::nullopt;
  }
  return std::nullopt;
}

py::object call_on_device(const py::object& fn, const at::Device& device, std::uint64_t seed) {
  py::module_ torch = py::module_::import("torch");
  at::manual_seed(seed);
  py::object device_ctx = torch.attr("device")(device.str());
  device_ctx.attr("__enter__")();
  py::object drawn;
  try {
    drawn = fn();
  } catch (...) {
    device_ctx.attr("__exit__")(py::none(), py::none(), py::none());
    throw;
  }
  device_ctx.attr("__exit__")(py::none(), py::none(), py::none());
  return drawn;
}

ArgList args_on_device(const py::handle& drawn, const InputSource& source) {
  ArgList args = torch_host::args_from_python(drawn);
  for (auto& a : args) {
    if (!a.is_tensor) continue;
    a.tensor = a.tensor.to(source.device);
    if (source.float_dtype && is_floating(a.tensor)) a.tensor = a.tensor.to(*source.float_dtype);
  }
  return args;
}

ArgList draw_inputs(const InputSource& source, std::uint64_t seed) {
  return args_on_device(call_on_device(source.get_inputs, source.device, seed), source);
}

ArgList distribution_inputs(const InputSource& source, const DistributionSpec& spec) {
  ArgList args = draw_inputs(source, spec.seed);
  if (spec.kind == DistributionKind::seeded_template) return args;
  at::Generator gen = make_generator(source.device, spec.seed);
  for (auto& a : args)
    if (a.is_tensor) a.tensor = distribution_tensor(std::move(a.tensor), spec, gen);
  return args;
}

}  // namespace kbv::judge
