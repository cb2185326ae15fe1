#include "torch_host/python_runtime.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

#include <pybind11/embed.h>

namespace py = pybind11;

namespace kbv::torch_host {

namespace {

// The interpreter kbv was built against, whatever the environment says: isolated (no PYTHON*
// variables, no user site-packages, no current directory on sys.path) and with its home fixed at
// build time, so another python3 first on PATH (conda, pyenv, a Slurm job's module) cannot hand
// the embedded interpreter a foreign standard library.
PyConfig fixed_config() {
  PyConfig config;
  PyConfig_InitIsolatedConfig(&config);
  config.install_signal_handlers = 0;  // Ctrl-C belongs to the CLI
  config.buffered_stdio = 0;           // what a crashing candidate printed reaches its output tail
  config.write_bytecode = 0;
  PyStatus status = PyConfig_SetBytesString(&config, &config.home, KBV_PYTHON_HOME);
  if (PyStatus_Exception(status)) {
    PyConfig_Clear(&config);
    throw std::runtime_error(std::string("cannot configure Python: ") + (status.err_msg ? status.err_msg : "?"));
  }
  return config;
}

py::scoped_interpreter start_interpreter() {
  PyConfig config = fixed_config();
  return py::scoped_interpreter(&config, 0, nullptr, /*add_program_dir_to_path=*/false);
}

}  // namespace

struct PythonRuntime::Impl {
  py::scoped_interpreter interpreter = start_interpreter();
  std::string python_version;
  std::string torch_version;
  std::string cuda_version;
};

PythonRuntime::PythonRuntime() : impl_(std::make_unique<Impl>()) {
  py::module_ sys = py::module_::import("sys");
  // KBV_PYTHON_SITE: the site-packages of the interpreter whose torch we were built against.
  const char* extra = std::getenv("KBV_PYTHONPATH");
  py::list path = sys.attr("path");
  path.insert(0, py::str(KBV_PYTHON_SITE));
  py::module_::import("site").attr("addsitedir")(KBV_PYTHON_SITE);  // its .pth files as well
  if (extra && *extra) path.insert(0, py::str(extra));
  sys.attr("argv") = py::make_tuple("kbv-worker");
  sys.attr("dont_write_bytecode") = true;
  // Where Python was when things went wrong, in the verdict's output_tail: every thread's stack
  // on a fatal signal (SIGSEGV...) and on SIGUSR1, which kbv sends when a deadline passes.
  py::module_ faulthandler = py::module_::import("faulthandler");
  faulthandler.attr("enable")(py::arg("all_threads") = true);
  faulthandler.attr("register")(py::module_::import("signal").attr("SIGUSR1"), py::arg("all_threads") = true);
  impl_->python_version = py::str(sys.attr("version")).cast<std::string>();
  impl_->python_version = impl_->python_version.substr(0, impl_->python_version.find(' '));
  py::module_ torch = py::module_::import("torch");
  // torch's ~180k objects live as long as the process: out of the collector's way, a full
  // collection (the sandbox's between protocols, Python's own) takes ~5 ms instead of ~80.
  py::module_::import("gc").attr("freeze")();
  impl_->torch_version = py::str(torch.attr("__version__")).cast<std::string>();
  py::object cuda = torch.attr("version").attr("cuda");
  impl_->cuda_version = cuda.is_none() ? "" : py::str(cuda).cast<std::string>();
}

PythonRuntime::~PythonRuntime() = default;

std::string PythonRuntime::python_version() const { return impl_->python_version; }
std::string PythonRuntime::torch_version() const { return impl_->torch_version; }
std::string PythonRuntime::cuda_version() const { return impl_->cuda_version; }

py::module_ import_file(const std::string& path, const std::string& module_name) {
  py::module_ util = py::module_::import("importlib.util");
  // `python file.py` (and KernelBench, which reads the file as text) refuses a file that is not
  // in its declared encoding, UTF-8 by default; importlib compiles the raw bytes and lets invalid
  // bytes in comments through. Decoded as the interpreter reads a script, such a file fails here
  // too, with Python's own reason (a UnicodeDecodeError or SyntaxError).
  util.attr("decode_source")(py::module_::import("pathlib").attr("Path")(path).attr("read_bytes")());
  py::object spec = util.attr("spec_from_file_location")(module_name, path);
  if (spec.is_none()) throw std::runtime_error("cannot import '" + path + "' as a Python module");
  py::object module = util.attr("module_from_spec")(spec);
  py::module_::import("sys").attr("modules")[py::str(module_name)] = module;
  spec.attr("loader").attr("exec_module")(module);
  return module.cast<py::module_>();
}

bool apply_small_size(py::module_& problem) {
  if (!py::hasattr(problem, "KBV_SMALL")) return false;
  py::dict overrides = problem.attr("KBV_SMALL");
  for (auto item : overrides) problem.attr(item.first) = item.second;
  return true;
}

PythonErrorText describe_python_error(const py::error_already_set& e) {
  PythonErrorText text;
  text.type = py::str(e.type().attr("__name__")).cast<std::string>();
  text.message = py::str(e.value()).cast<std::string>();
  try {
    py::module_ tb = py::module_::import("traceback");
    py::list lines = tb.attr("format_exception")(e.type(), e.value(), e.trace());
    std::string all;
    for (auto line : lines) all += line.cast<std::string>();
    constexpr std::size_t kKeep = 4000;
    text.detail = all.size() > kKeep ? all.substr(all.size() - kKeep) : all;
  } catch (...) {
    // A traceback we cannot format is not worth losing the error for.
  }
  return text;
}

}  // namespace kbv::torch_host
