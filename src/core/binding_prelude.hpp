#pragma once
// What load_inline's main.cpp is compiled with in place of torch/extension.h (the lean binding:
// docs/scale.md, "Build cost"). torch/extension.h is torch/all.h, all of torch's C++ frontend (nn,
// optim, data, jit, serialisation: ~4 s of a PCH'd main.cpp's ~8 s of CPU), then torch/python.h.
// A binding uses python.h's includes, and only those: the frontend's headers declare no pybind11
// type caster (checked against torch 2.11's headers), so what a bound function accepts is the
// same. The judge writes this list as <torch-pch>/kbv/binding.h (and precompiles it); the
// sandbox's build hooks use the same list, and only where torch's python.h includes exactly
// these plus kFrontendOfPythonH.
#include <array>
#include <string>

namespace kbv {

inline constexpr std::array<const char*, 13> kBindingHeaders = {
    "torch/types.h",
    "torch/csrc/Device.h",
    "torch/csrc/Dtype.h",
    "torch/csrc/DynamicTypes.h",
    "torch/csrc/Exceptions.h",
    "torch/csrc/autograd/python_variable.h",
    "torch/csrc/python_headers.h",
    "torch/csrc/utils/pybind.h",
    "torch/csrc/utils/python_numbers.h",
    "torch/csrc/utils/python_tuples.h",
    "iterator",
    "string",
    "utility",
};

// python.h's includes that are the frontend's (left out with torch/all.h).
inline constexpr std::array<const char*, 3> kFrontendOfPythonH = {"torch/detail/static.h", "torch/nn/module.h",
                                                                  "torch/ordered_dict.h"};

// The file <torch-pch>/kbv/binding.h.
inline std::string binding_header_text() {
  std::string text = "// kbv: torch/extension.h less torch's C++ frontend (torch/all.h): what a load_inline binding uses\n"
                     "#pragma once\n";
  for (const char* h : kBindingHeaders) text += std::string("#include <") + h + ">\n";
  return text;
}

}  // namespace kbv
