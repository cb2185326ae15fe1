#include "judge/rehearsal.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string_view>

#include <pybind11/pybind11.h>

#include "judge/compare.hpp"
#include "judge/distributions.hpp"
#include "judge/inputs.hpp"
#include "judge/integrity.hpp"
#include "judge/problem_audit.hpp"
#include "judge/profile.hpp"
#include "torch_host/backend_state.hpp"
#include "torch_host/device.hpp"
#include "torch_host/forward.hpp"
#include "torch_host/models.hpp"
#include "torch_host/python_runtime.hpp"

namespace py = pybind11;

namespace kbv::judge {
namespace {

// The problem file's module for the rehearsal: not the judge's "kbv_problem".
constexpr const char* kRehearsalModule = "kbv_problem_rehearsal";

// The rehearsal's own seed: none of its draws is one a protocol makes.
constexpr std::uint64_t kRehearsalSeed = 0x7265686561727365ULL;

bool draws_fresh(DistributionKind kind) {
  return kind != DistributionKind::seeded_template && kind != DistributionKind::reinit_params &&
         kind != DistributionKind::hidden_file;
}

// Kernels are loaded per function, not per size: beyond Model's own forward (whose cuBLAS and
// cuDNN choices depend on the shapes), the rehearsal works on prefixes of this many elements.
constexpr std::int64_t kRehearsalElements = 1 << 16;

at::Tensor prefix(const at::Tensor& t) {
  if (!t.defined()) return t;
  at::Tensor flat = t.reshape(-1);
  return flat.narrow(0, 0, std::min<std::int64_t>(flat.numel(), kRehearsalElements));
}

std::vector<at::Tensor> prefixes(const std::vector<at::Tensor>& ts) {
  std::vector<at::Tensor> out;
  for (const auto& t : ts) out.push_back(prefix(t));
  return out;
}

ArgList prefixes(const ArgList& args) {
  ArgList out = args;
  for (auto& a : out)
    if (a.is_tensor) a.tensor = prefix(a.tensor);
  return out;
}

// Runs each step of the rehearsal: counted for the profile, followed by the plan's after_step;
// once the budget is spent, the next step throws instead (what stopped it).
class Steps {
 public:
  explicit Steps(const RehearsalPlan& plan) : plan_(plan), start_(std::chrono::steady_clock::now()) {}
  template <typename F>
  void run(const char* name, F&& body) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() > plan_.budget_seconds)
      throw std::runtime_error(std::string("its time budget ran out before ") + name);
    {
      profile::Step step(name);
      body();
    }
    if (plan_.after_step) plan_.after_step();
  }

 private:
  const RehearsalPlan& plan_;
  std::chrono::steady_clock::time_point start_;
};

void rehearse(const RehearsalPlan& plan) {
  const auto dtype = float_dtype_of(plan.precision);
  Steps steps(plan);
  py::module_ problem;
  ArgList inputs, few;
  steps.run("rehearsal.inputs", [&] {
    problem = torch_host::import_file(plan.problem_path, kRehearsalModule);
    if (plan.small_size) torch_host::apply_small_size(problem);
    inputs = draw_inputs(InputSource{problem.attr("get_inputs"), plan.device, dtype}, kRehearsalSeed);
    few = prefixes(inputs);
  });

  bool tf32 = false;
  for (const Protocol* p : plan.protocols) tf32 = tf32 || p->baseline == BaselineKind::eager_tf32_on;
  steps.run("rehearsal.draws", [&] {
    // One draw of each kind the protocols make fresh.
    at::Generator gen = make_generator(plan.device, kRehearsalSeed);
    std::set<DistributionKind> drawn;
    for (const Protocol* p : plan.protocols)
      for (const auto& spec : p->distributions(kRehearsalSeed)) {
        if (!draws_fresh(spec.kind) || !drawn.insert(spec.kind).second) continue;
        for (const auto& a : few)
          if (a.is_tensor) distribution_tensor(a.tensor, spec, gen);
      }
  });

  std::vector<at::Tensor> out;
  steps.run("rehearsal.model", [&] {
    py::object model = torch_host::construct_model(problem.attr("Model"), problem.attr("get_init_inputs")(), plan.model_seed,
                                                   plan.device, dtype);
    torch_host::set_tf32(false);
    out = prefixes(torch_host::call_forward(model, torch_host::clone_args(inputs)));
    if (tf32 && plan.device.is_cuda()) {
      torch_host::set_tf32(true);
      torch_host::call_forward(model, torch_host::clone_args(inputs));
    }
  });

  // The comparisons, passing and failing (the failure's details are their own kernels), the
  // trivial outputs and strict's checks.
  steps.run("rehearsal.checks", [&] {
    std::vector<at::Tensor> off;
    for (const auto& o : out) off.push_back(o.defined() && o.is_floating_point() ? at::add(o, 1) : o);
    for (const Protocol* p : plan.protocols) {
      const Tolerance tol = p->tolerance(plan.precision);
      compare_outputs(out, out, tol, p->nan_pattern_must_match);
      compare_outputs(out, off, tol, p->nan_pattern_must_match);
      all_finite(out);
      trivial_pass(out, few, tol, p->nan_pattern_must_match);
      if (p->integrity_checks) {
        find_late_writes(snapshot_outputs(out), snapshot_outputs(out));
        find_input_mutation(few, torch_host::argument_tensors(few));
      }
    }
    torch_host::synchronize(plan.device);
  });
}

}  // namespace

bool rehearsal_wanted(const at::Device& device) {
  const char* env = std::getenv("KBV_JUDGE_REHEARSAL");
  const std::string_view v = env ? env : "";
  if (v == "off") return false;
  return v == "on" || device.is_cuda();
}

std::optional<std::string> rehearse_device_work(const RehearsalPlan& plan) {
  const auto backend = torch_host::capture_backend_state();
  const auto tf32 = torch_host::read_tf32();
  std::optional<std::string> stopped;
  try {
    rehearse(plan);
  } catch (py::error_already_set& e) {
    stopped = torch_host::describe_python_error(e).one_line();
  } catch (const std::exception& e) {
    stopped = e.what();
  }
  torch_host::restore_backend_state(backend);
  torch_host::restore_tf32(tf32);
  // Its module goes, with whatever its globals hold (its classes and functions are in cycles).
  py::module_::import("sys").attr("modules").attr("pop")(kRehearsalModule, py::none());
  py::module_::import("gc").attr("collect")();
  return stopped;
}

}  // namespace kbv::judge
