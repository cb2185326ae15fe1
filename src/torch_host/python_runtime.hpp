#pragma once
// The embedded CPython interpreter that runs the problem's and the candidate's Python, with the
// torch it imports being the same libtorch this worker links.
#include <memory>
#include <string>

#include <pybind11/pybind11.h>

namespace kbv::torch_host {

class PythonRuntime {
 public:
  PythonRuntime();  // starts the interpreter, puts torch's site-packages on sys.path, imports torch
  ~PythonRuntime();
  PythonRuntime(const PythonRuntime&) = delete;
  PythonRuntime& operator=(const PythonRuntime&) = delete;

  std::string python_version() const;
  std::string torch_version() const;
  std::string cuda_version() const;  // the CUDA torch was built with ("13.0"); empty for CPU builds

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Imports a Python file under `module_name` (registered in sys.modules, as a normal import would).
pybind11::module_ import_file(const std::string& path, const std::string& module_name);

// Applies the problem's KBV_SMALL overrides (module-level constants) when present.
// Returns false when the module defines none.
bool apply_small_size(pybind11::module_& problem);

// A Python exception as one line, "TypeError: forward() takes 2 positional arguments...",
// plus the last traceback frames in `detail`.
struct PythonErrorText {
  std::string type;
  std::string message;
  std::string detail;
  std::string one_line() const { return type + ": " + message; }
};
PythonErrorText describe_python_error(const pybind11::error_already_set& e);

}  // namespace kbv::torch_host
