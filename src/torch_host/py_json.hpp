#pragma once
// Plain Python values (None, bool, int, float, str, and lists / tuples / dicts of them) as JSON
// and back: how the problem's init arguments and non-tensor forward arguments reach the sandbox.
// Anything else (a tensor inside get_init_inputs(), an object) is refused with a message.
#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>

namespace kbv::torch_host {

// Throws std::runtime_error naming the first value that is not plain.
nlohmann::json python_to_json(const pybind11::handle& value);
// Tuples come back as lists (forward and __init__ accept either); floats keep their type.
pybind11::object json_to_python(const nlohmann::json& value);

}  // namespace kbv::torch_host
