// The torch_compile baseline (`--torch-compile`): torch.compile(Model) in its default mode, timed
// as one more series beside the eager ones, under the protocol's TF32 setting (that of its
// headline baseline). KernelBench users compare against it; it is never the headline.
//
// Compiling is the judge's own work, not the candidate's: its seconds are reported on their own
// (timing.torch_compile_seconds) and added to the candidate's run deadline, the sandbox is frozen
// meanwhile (its processes cannot starve the compile of CPU), and a compile that fails (no
// Triton, no C++ compiler, an op inductor cannot lower) is a warning without the series, never
// the candidate's outcome. Inductor keeps what it compiled in the build root's torch_compile
// folder (owner-only, where no sandbox may write), so the next evaluation of the same problem
// loads it.
#include <sys/stat.h>

#include <filesystem>

#include "core/defaults.hpp"
#include "isolation/freeze.hpp"
#include "judge/judgement.hpp"
#include "torch_host/device.hpp"

namespace py = pybind11;

namespace kbv::judge {

std::optional<double> Judgement::compile_reference(const ArgList& inputs) {
  const auto start = Clock::now();
  // The watchdog must not end the (frozen, honest) sandbox for the judge's own compile.
  if (watchdog_)
    watchdog_->arm(run_deadline_ + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(defaults::kTorchCompileAllowanceSeconds)));
  std::optional<isolation::SandboxFreeze> frozen;
  if (sandbox_) {
    frozen.emplace(sandbox_->launched());
    if (!frozen->frozen()) warn("torch_compile baseline: the sandbox was not frozen while compiling: " + frozen->error());
  }
  try {
    py::module_ os = py::module_::import("os");
    if (!job_.build_root.empty()) {
      const auto dir = std::filesystem::path(job_.build_root) / "torch_compile";
      std::filesystem::create_directories(dir);
      ::chmod(dir.c_str(), 0700);
      os.attr("environ").attr("__setitem__")("TORCHINDUCTOR_CACHE_DIR", dir.string());
      os.attr("environ").attr("__setitem__")("TRITON_CACHE_DIR", (dir / "triton").string());
    }
    // Inductor compiles in a pool of worker processes started from sys.executable, which in the
    // judge is not a Python: compile in this process instead.
    os.attr("environ").attr("__setitem__")("TORCHINDUCTOR_COMPILE_THREADS", "1");
    py::module_::import("torch._inductor.config").attr("compile_threads") = 1;
    py::object compiled = py::module_::import("torch").attr("compile")(reference_);
    // The first call compiles (or loads from inductor's cache); its time is the compile cost.
    torch_host::set_tf32(protocol_tf32());
    torch_host::call_forward(compiled, torch_host::clone_args(inputs));
    torch_host::synchronize(device_);
    compiled_ = compiled;
  } catch (py::error_already_set& e) {
    warn("torch_compile baseline: torch.compile(Model) failed, no torch_compile series: " +
         first_line(torch_host::describe_python_error(e).one_line()));
  } catch (const std::exception& e) {
    warn("torch_compile baseline: torch.compile(Model) failed, no torch_compile series: " + first_line(e.what()));
  }
  if (!compiled_) {
    // A failure that left the judge's device unusable is kbv's, not the candidate's.
    guarded(Outcome::internal_error, "the device after a failed torch.compile", [&] {
      torch_host::synchronize(device_);
      return 0;
    });
  }
  frozen.reset();
  const auto spent = Clock::now() - start;
  run_deadline_ += spent;  // the judge's time, not the candidate's
  if (watchdog_) watchdog_->arm(run_deadline_);
  return std::chrono::duration<double>(spent).count();
}

}  // namespace kbv::judge
