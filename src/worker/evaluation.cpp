#include "worker/evaluation.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <c10/util/Exception.h>
#include <pybind11/pybind11.h>

#include "core/protocol.hpp"
#include "core/sha256.hpp"
#include "core/speed_bound.hpp"
#include "worker/build_hooks.hpp"
#include "worker/compare.hpp"
#include "worker/device.hpp"
#include "worker/distributions.hpp"
#include "worker/forward.hpp"
#include "worker/inputs.hpp"
#include "worker/integrity.hpp"
#include "worker/kernel_audit.hpp"
#include "worker/memory.hpp"
#include "worker/held_memory.hpp"
#include "worker/models.hpp"
#include "worker/python_runtime.hpp"
#include "worker/tamper_watch.hpp"
#include "worker/timing.hpp"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace kbv::worker {
namespace {

// Seed for constructing both models (KernelBench seeds model construction the same way).
constexpr std::uint64_t kModelSeed = 42;
// Seeds of the timing input sets: fresh draws, disjoint from the correctness seeds.
constexpr std::uint64_t kTimingSeedBase = 9000;
constexpr int kAuditCalls = 3;  // traced candidate calls in the strict kernel audit
// Seed kbv sets on torch's default generators before each strict candidate call; a different
// seed afterwards means the candidate reseeded them.
constexpr std::uint64_t kSentinelSeed = 0x6b627673;
// Strict re-checks the candidate's output during timing every this many rounds.
constexpr int kReuseCheckEvery = 4;

// Thrown inside evaluate() to end it with an outcome; caught once at the top.
struct Ending {
  Outcome outcome;
  std::string reason;
};

ProblemInfo describe_problem(const std::string& path, const std::string& size) {
  ProblemInfo info;
  fs::path p(path);
  info.path = path;
  info.sha256 = sha256_file(path);
  info.size = size;
  std::smatch m;
  std::string folder = p.parent_path().filename().string();
  if (std::regex_match(folder, m, std::regex(R"(level_?(\d+))"))) info.level = std::stoi(m[1]);
  std::string stem = p.stem().string();
  if (std::regex_match(stem, m, std::regex(R"((\d+)_(.*))"))) {
    info.id = std::stoi(m[1]);
    info.name = m[2];
  } else {
    info.name = stem;
  }
  return info;
}

std::string tail_of_file(const std::string& path, std::size_t bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return {};
  auto size = static_cast<std::size_t>(in.tellg());
  std::size_t start = size > bytes ? size - bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string out(size - start, '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  return out;
}

std::string first_line(const std::string& text, std::size_t max = 400) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > max ? line.substr(0, max) + "..." : line;
}

std::optional<at::ScalarType> float_dtype_of(Precision p) {
  switch (p) {
    case Precision::bf16: return at::kBFloat16;
    case Precision::fp16: return at::kHalf;
    case Precision::fp32: return std::nullopt;
  }
  return std::nullopt;
}

// Runs `body`; turns Python and c10 exceptions into an Ending with `outcome`.
template <typename F>
auto guarded(Outcome outcome, const std::string& what, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (py::error_already_set& e) {
    auto text = describe_python_error(e);
    throw Ending{outcome, what + ": " + first_line(text.one_line())};
  } catch (const c10::Error& e) {
    throw Ending{outcome, what + ": " + first_line(e.what_without_backtrace())};
  } catch (const std::exception& e) {
    throw Ending{outcome, what + ": " + first_line(e.what())};
  }
}

std::string join(const std::vector<std::string>& items, const char* sep = ", ") {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : sep) + item;
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Which trivial output (zeros, the reference's mean, the first input) passes as the reference
// on this distribution; empty when none does, i.e. the distribution discriminates.
std::string trivial_pass(const std::vector<at::Tensor>& ref, const ArgList& inputs, const Tolerance& tol,
                         bool nan_pattern) {
  std::vector<at::Tensor> zeros, constant;
  bool all_scalar = true;
  for (const auto& r : ref) {
    zeros.push_back(at::zeros_like(r));
    at::Tensor mean = r.is_floating_point() ? r.to(at::kDouble).nan_to_num().mean() : r.to(at::kDouble).mean();
    constant.push_back(at::full_like(r, mean.item<double>()));
    all_scalar = all_scalar && r.numel() <= 1;
  }
  if (compare_outputs(ref, zeros, tol, nan_pattern).ok) return "zeros";
  // A scalar output (a loss) always equals its own mean: the constant test needs elements.
  if (!all_scalar && compare_outputs(ref, constant, tol, nan_pattern).ok) return "constant";
  if (ref.size() == 1 && !inputs.empty() && inputs[0].is_tensor && inputs[0].tensor.sizes() == ref[0].sizes() &&
      inputs[0].tensor.scalar_type() == ref[0].scalar_type() &&
      compare_outputs(ref, {inputs[0].tensor}, tol, nan_pattern).ok)
    return "input";
  return "";
}

class Evaluation {
 public:
  Evaluation(const WorkerJob& job, ReportChannel& channel)
      : job_(job), channel_(channel), protocol_(protocol_by_name(job.protocol)),
        precision_(precision_from_name(job.precision)) {}

  Verdict run() {
    auto started = std::chrono::steady_clock::now();
    verdict_.protocol = protocol_.name;
    verdict_.protocol_version = protocol_.version;
    verdict_.precision = std::string(precision_name(precision_));
    verdict_.candidate = {job_.candidate_path, ""};
    try {
      stages();
      verdict_.outcome = Outcome::correct;
    } catch (const Ending& end) {
      verdict_.outcome = end.outcome;
      verdict_.reason = end.reason;
    }
    verdict_.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return verdict_;
  }

 private:
  // Records an integrity flag once per name (the first evidence is kept; later hits are counted).
  void flag(const std::string& name, const std::string& evidence) {
    for (auto& f : verdict_.flags)
      if (f.name == name) return;
    verdict_.flags.push_back({name, evidence});
  }

  bool strict() const { return protocol_.integrity_checks; }
  // The TF32 setting the protocol's candidate and headline baseline run under.
  bool protocol_tf32() const { return protocol_.baseline == BaselineKind::eager_tf32_on; }

  void enter(const char* stage) {
    verdict_.stage = stage;
    channel_.stage(stage);
  }

  void stages() {
    enter("setup");
    verdict_.problem = guarded(Outcome::problem_error, "problem file",
                               [&] { return describe_problem(job_.problem_path, job_.size); });
    const bool audit = job_.candidate_path.empty();  // kbv audit: the problem alone
    if (!audit)
      verdict_.candidate.sha256 = guarded(Outcome::compile_error, "candidate file",
                                          [&] { return sha256_file(job_.candidate_path); });
    // Start-up in named stages, so stage_seconds shows what a worker's start costs.
    enter("device");  // the CUDA context
    device_ = guarded(Outcome::skipped, "device", [&] { return resolve_device(job_.device); });
    verdict_.device = describe_device(device_);
    enter("python");  // the interpreter and `import torch`
    python_ = std::make_unique<PythonRuntime>();
    verdict_.provenance.python_version = python_->python_version();
    verdict_.provenance.torch_version = python_->torch_version();
    verdict_.provenance.cuda_version = python_->cuda_version();
    // CUPTI allocation tracking (memory stage only): a build-only worker has no use for it.
    if (!job_.build_only) {
      enter("tracking");
      memory_method_ = memory_tracking_start(device_);
    }

    load_problem();
    if (audit) {
      audit_problem();
      enter("done");
      return;
    }
    build_candidate();
    if (job_.build_only) {
      enter("built");
      throw Ending{Outcome::skipped, "build only (kbv run's build phase)"};
    }
    build_models();
    check_correctness();
    if (strict()) audit_candidate_calls();
    if (job_.timing.enabled) measure_time();
    else if (strict()) check_reuse_without_timing();
    if (strict()) check_speed_bound();
    if (device_.is_cuda() && protocol_.measure_memory && job_.measure_memory) measure_memory();
    if (strict()) check_tampering("after the evaluation");
    enter("done");
    // Strict: an integrity flag makes a numerically correct candidate incorrect.
    for (const auto& f : verdict_.flags)
      if (is_integrity_flag(f.name)) throw Ending{Outcome::incorrect, "integrity check " + f.name + ": " + f.evidence};
  }

  void load_problem() {
    enter("load_problem");
    guarded(Outcome::problem_error, "problem", [&] {
      problem_ = import_file(job_.problem_path, "kbv_problem");
      if (job_.size == "small" && !apply_small_size(problem_))
        verdict_.warnings.push_back("problem defines no KBV_SMALL; ran at its default size");
      for (const char* name : {"Model", "get_inputs", "get_init_inputs"})
        if (!py::hasattr(problem_, name))
          throw std::runtime_error(std::string("the problem module defines no ") + name);
      init_inputs_ = problem_.attr("get_init_inputs")();
      // Out of the candidate's easy reach: `import kbv_problem` / sys.modules lookups fail.
      py::module_::import("sys").attr("modules").attr("pop")("kbv_problem", py::none());
    });
  }

  static bool is_integrity_flag(const std::string& name) { return name != "no_custom_kernel" && name != "degenerate"; }

  void check_tampering(const std::string& when) {
    for (const auto& change : tamper_->changed_attributes()) flag("tampering", when + ": " + change);
  }

  // Counts calls of any module defined in the problem file while the candidate runs (the
  // reference Model or a fresh instance of it). A global hook, so a new instance is seen too.
  void install_reference_call_counter() {
    py::module_ module_mod = py::module_::import("torch.nn.modules.module");
    long* counter = &reference_calls_;
    py::cpp_function hook([counter](py::object module, py::object) -> py::object {
      py::object type_module = py::type::handle_of(module).attr("__module__");
      if (!type_module.is_none() && type_module.cast<std::string>() == "kbv_problem") ++*counter;
      return py::none();
    });
    hook_handle_ = module_mod.attr("register_module_forward_pre_hook")(hook);
  }

  void build_candidate() {
    enter("build");
    BuildResult build;
    std::string source_hash = verdict_.candidate.sha256;
    fs::path root = job_.build_root.empty() ? fs::temp_directory_path() / "kbv-build" : fs::path(job_.build_root);
    build.build_dir = (root / source_hash.substr(0, 16)).string();
    build.log_path = build.build_dir + "/build.log";
    fs::create_directories(build.build_dir);
    BuildHookConfig hook_config{build.build_dir, source_hash, build.log_path, device_.is_cuda(),
                                verdict_.device.capability};
    auto started = std::chrono::steady_clock::now();
    std::optional<BuildHooks> hooks;
    std::optional<Ending> failure;
    tamper_.emplace();
    Tf32State tf32_before = read_tf32();
    try {
      hooks.emplace(hook_config);
      candidate_ = import_file(job_.candidate_path, "kbv_candidate");
      if (strict()) {
        check_tampering("importing the candidate");
        if (!(read_tf32() == tf32_before)) flag("tampering", "importing the candidate changed the TF32 / matmul precision settings");
      }
      if (!py::hasattr(candidate_, "ModelNew"))
        failure = Ending{Outcome::compile_error, "the candidate defines no ModelNew class"};
    } catch (py::error_already_set& e) {
      auto text = describe_python_error(e);
      if (BuildHooks::is_needs_cuda(e))
        failure = Ending{Outcome::skipped, "candidate needs CUDA (" + text.message + "); run it with --device cuda"};
      else if (hooks && hooks->failed_in_build())
        failure = Ending{Outcome::compile_error, "extension build failed: " + first_line(text.message)};
      else
        failure = Ending{Outcome::compile_error, "importing the candidate raised " + first_line(text.one_line())};
    }
    build.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (hooks) build.extensions = hooks->extensions();
    build.log_tail = tail_of_file(build.log_path, 8 * 1024);
    verdict_.custom_kernel = !build.extensions.empty();
    verdict_.build = build;
    if (failure) throw *failure;
  }

  // kbv audit: the reference alone under every distribution of every protocol: its output must
  // be finite, and a trivial output (zeros, a constant, the input) must not pass everywhere.
  // A distribution with a non-finite reference fails; degenerate protocols are flagged
  // "degenerate" with the protocol names in the evidence.
  void audit_problem() {
    enter("audit_problem");
    auto dtype = float_dtype_of(precision_);
    reference_ = guarded(Outcome::problem_error, "constructing Model", [&] {
      return construct_model(problem_.attr("Model"), init_inputs_, kModelSeed, device_, dtype);
    });
    source_ = InputSource{problem_.attr("get_inputs"), device_, dtype};
    CorrectnessResult result;
    Tolerance tol = protocol_.tolerance(precision_);
    result.atol = tol.atol;
    result.rtol = tol.rtol;
    std::vector<std::string> degenerate_under, non_finite;
    for (const auto& name : protocol_names()) {
      const Protocol& p = protocol_by_name(name);
      set_tf32(p.baseline == BaselineKind::eager_tf32_on);
      int discriminating = 0;
      for (const auto& spec : p.distributions(job_.secret)) {
        DistributionResult d;
        d.name = name + ":" + spec.name;
        d.kind = std::string(distribution_kind_name(spec.kind));
        if (spec.kind == DistributionKind::reinit_params)
          guarded(Outcome::problem_error, "re-initialising parameters",
                  [&] { reinit_parameters(named_parameters(reference_), spec.seed); });
        ArgList inputs = guarded(Outcome::problem_error, d.name + ": get_inputs()", [&] { return distribution_inputs(source_, spec); });
        auto ref = guarded(Outcome::problem_error, d.name + ": Model.forward", [&] {
          auto o = call_forward(reference_, clone_args(inputs));
          synchronize(device_);
          return o;
        });
        for (const auto& t : ref) d.numel += t.numel();
        if (!all_finite(ref)) {
          d.status = DistributionStatus::fail;
          d.reason = "the reference output has NaN/Inf";
          non_finite.push_back(d.name);
        } else {
          d.trivial_pass = trivial_pass(ref, inputs, tol, p.nan_pattern_must_match);
          if (d.trivial_pass.empty()) ++discriminating;
        }
        result.distributions.push_back(d);
      }
      if (discriminating == 0) degenerate_under.push_back(name);
    }
    verdict_.correctness = result;
    if (!degenerate_under.empty()) {
      flag("degenerate", "no distribution of " + join(degenerate_under) + " discriminates: a trivial output passes them all");
    }
    if (!non_finite.empty())
      throw Ending{Outcome::problem_error, "the reference output has NaN/Inf on " + non_finite.front() +
                                               (non_finite.size() > 1 ? " and " + std::to_string(non_finite.size() - 1) + " more" : "")};
  }

  void build_models() {
    enter("models");
    auto dtype = float_dtype_of(precision_);
    reference_ = guarded(Outcome::problem_error, "constructing Model", [&] {
      return construct_model(problem_.attr("Model"), init_inputs_, kModelSeed, device_, dtype);
    });
    candidate_model_ = guarded(Outcome::runtime_error, "constructing ModelNew", [&] {
      return construct_model(candidate_.attr("ModelNew"), init_inputs_, kModelSeed, device_, dtype);
    });
    copy_ = guarded(Outcome::runtime_error, "copying Model's weights into ModelNew",
                    [&] { return copy_matching_weights(reference_, candidate_model_); });
    if (!copy_.note.empty()) verdict_.warnings.push_back(copy_.note);
    source_ = InputSource{problem_.attr("get_inputs"), device_, dtype};
    if (strict()) install_reference_call_counter();
  }

  void check_correctness() {
    enter("correctness");
    CorrectnessResult result;
    Tolerance tol = protocol_.tolerance(precision_);
    if (job_.tolerance) tol = {*job_.tolerance, *job_.tolerance};
    result.atol = tol.atol;
    result.rtol = tol.rtol;
    set_tf32(protocol_tf32());

    std::optional<Ending> failure;
    for (const auto& spec : protocol_.distributions(job_.secret)) {
      DistributionResult d;
      d.name = spec.name;
      d.kind = std::string(distribution_kind_name(spec.kind));
      bool skip = false;
      if (spec.kind == DistributionKind::reinit_params) {
        if (copy_.copied < copy_.candidate_entries || copy_.candidate_entries == 0) {
          skip = true;
          d.reason = "ModelNew's parameters do not all match Model's by name and shape";
        } else {
          guarded(Outcome::runtime_error, "re-initialising parameters", [&] {
            reinit_parameters(named_parameters(reference_), spec.seed);
            copy_matching_weights(reference_, candidate_model_);
          });
        }
      }
      if (!skip) {
        ArgList inputs = guarded(Outcome::problem_error, spec.name + ": get_inputs()",
                                 [&] { return distribution_inputs(source_, spec); });
        // The candidate runs first, on its own copy: it cannot find this distribution's
        // reference result in freed memory, and cannot change the reference's inputs.
        ArgList candidate_inputs = clone_args(inputs);
        long reference_calls_before = reference_calls_;
        if (strict()) {
          poison_free_device_memory(device_);
          seed_default_generators(kSentinelSeed);
          reset_persisting_l2(device_);
        }
        auto out = run_candidate(spec.name + ": ModelNew.forward", candidate_inputs);
        if (strict()) check_candidate_call(spec.name, inputs, candidate_inputs, out, reference_calls_before);
        std::vector<at::Tensor> ref, ref_tf32;
        try {
          ref = reference_outputs(inputs, &ref_tf32);
        } catch (py::error_already_set& e) {
          skip = true;
          d.reason = "the reference raised " + first_line(describe_python_error(e).one_line());
        }
        if (!skip && !protocol_.nan_pattern_must_match && !all_finite(ref)) {
          skip = true;
          d.reason = "the reference output has NaN/Inf on this distribution";
        }
        if (!skip) {
          auto cmp = judge(ref, ref_tf32, out, tol);
          d.status = cmp.ok ? DistributionStatus::pass : DistributionStatus::fail;
          d.reason = cmp.reason;
          d.max_abs_err = cmp.max_abs_err;
          d.max_rel_err = cmp.max_rel_err;
          d.mismatched = cmp.mismatched;
          d.numel = cmp.numel;
          d.trivial_pass = trivial_pass(ref, inputs, tol, protocol_.nan_pattern_must_match);
          if (!cmp.ok && !failure) failure = Ending{Outcome::incorrect, spec.name + ": " + cmp.reason};
          if (strict() && cmp.ok && !nondeterminism_checked_) check_determinism(spec.name, inputs, out, tol);
        }
      }
      if (skip) {
        d.status = DistributionStatus::skipped;
        result.skipped.push_back(spec.name);
      }
      result.distributions.push_back(d);
    }
    flag_degenerate(result);
    verdict_.correctness = result;
    // The call counter has done its job; it must not cost every module call while timing.
    if (hook_handle_) hook_handle_.attr("remove")();
    if (failure) throw *failure;
    if (result.skipped.size() == result.distributions.size())
      throw Ending{Outcome::problem_error, "every distribution was skipped: " + result.distributions.front().reason};
  }

  void check_candidate_call(const std::string& dist, const ArgList& pristine, const ArgList& candidate_inputs,
                            const std::vector<at::Tensor>& out, long reference_calls_before) {
    if (auto e = find_input_mutation(pristine, candidate_inputs)) flag("input_mutated", dist + ": " + *e);
    if (auto e = find_output_aliasing(out, candidate_inputs, named_parameters(candidate_model_)))
      flag("output_aliases_input", dist + ": " + *e);
    if (auto e = find_poison_in_outputs(out)) flag("stale_memory", dist + ": " + *e);
    if (reference_calls_ != reference_calls_before)
      flag("reference_reachable", dist + ": ModelNew.forward called the problem's Model (" +
                                      std::to_string(reference_calls_ - reference_calls_before) + " call(s))");
    if (default_generators_reseeded(kSentinelSeed)) flag("tampering", dist + ": ModelNew.forward reseeded torch's default generator");
    const bool on = protocol_tf32();
    if (!(read_tf32() == tf32_state_for(on))) {
      flag("tampering", dist + ": ModelNew.forward changed the TF32 / matmul precision settings");
      set_tf32(on);
    }
    if (auto e = find_persisting_l2(device_)) flag("persisting_l2", dist + ": " + *e);
  }

  // One candidate call, waited for; its exception or CUDA error ends the evaluation.
  std::vector<at::Tensor> run_candidate(const std::string& what, const ArgList& args) {
    return guarded(Outcome::runtime_error, what, [&] {
      auto out = call_forward(candidate_model_, args);
      synchronize(device_);
      return out;
    });
  }

  // nondeterministic: the same inputs again must give the same outputs within tolerance.
  void check_determinism(const std::string& dist, const ArgList& inputs, const std::vector<at::Tensor>& first,
                         const Tolerance& tol) {
    nondeterminism_checked_ = true;
    ArgList again_inputs = clone_args(inputs);
    auto again = run_candidate(dist + ": ModelNew.forward (repeat)", again_inputs);
    auto cmp = compare_outputs(first, again, tol, true);
    if (!cmp.ok) flag("nondeterministic", dist + ": a second call on the same inputs differs: " + cmp.reason);
  }

  void flag_degenerate(CorrectnessResult& result) {
    std::vector<std::string> trivial;
    int compared = 0;
    for (const auto& d : result.distributions) {
      if (d.status == DistributionStatus::skipped) continue;
      ++compared;
      if (!d.trivial_pass.empty()) trivial.push_back(d.name + " (" + d.trivial_pass + ")");
    }
    if (compared > 0 && static_cast<int>(trivial.size()) == compared)
      flag("degenerate", "a trivial output passes every distribution: " + join(trivial));
    else if (!trivial.empty())
      verdict_.warnings.push_back("non-discriminative distributions (a trivial output passes): " + join(trivial));
  }

  // no_custom_kernel and unsynchronized_work, from one traced call on the D1-style inputs.
  void audit_candidate_calls() {
    enter("audit");
    ArgList inputs = guarded(Outcome::problem_error, "audit: get_inputs()", [&] { return draw_inputs(source_, kTimingSeedBase); });
    auto own = kernel_names_in_source(read_file(job_.candidate_path));
    // Late work depends on host timing (a launcher thread may be quick or slow to hand over), so
    // a few traced calls: any one with late work or a disturbed tracer decides.
    KernelAudit audit;
    int calls = 0, released_early = 0;
    std::string gate_error;
    for (int call = 0; call < kAuditCalls; ++call) {
      audit = guarded(Outcome::runtime_error, "audit: ModelNew.forward", [&] {
        return audit_kernels(device_, own, [&] {
          auto out = call_forward(candidate_model_, inputs);
          output_bytes_ = output_bytes_to_write(out, device_);  // the timing inputs' shapes
        });
      });
      if (audit.traced) ++calls;
      if (audit.traced && audit.gate != GateState::held) ++released_early;
      if (!audit.gate_error.empty()) gate_error = audit.gate_error;
      if (audit.disturbed || !audit.late_kernels.empty() || !audit.traced) break;
    }
    // Late work was then judged with the host's latency in it: short unjoined work can be missed.
    if (released_early > 0)
      verdict_.warnings.push_back(
          "kernel audit: in " + std::to_string(released_early) + " of " + std::to_string(calls) +
          " traced calls the current stream was not held until the marker (" +
          (gate_error.empty() ? "the gate timed out after " + std::to_string(kAuditGateTimeoutMs) +
                                    " ms: forward() synchronised, queued more launches than the launch queue holds, "
                                    "or ran that long on the host"
                              : "no gate: " + gate_error) +
          ")");
    if (audit.disturbed)
      flag("tampering", "kernel tracing was disturbed during ModelNew.forward (" + audit.note + "): a profiler or CUPTI client started by the candidate?");
    if (!audit.late_kernels.empty())
      flag("unsynchronized_work", "kernel(s) still running after forward() returned: " + audit.late_kernels.front() +
                                      (audit.late_kernels.size() > 1 ? " and " + std::to_string(audit.late_kernels.size() - 1) + " more" : ""));
    if (!verdict_.custom_kernel && own.empty()) {
      flag("no_custom_kernel", "the candidate built no extension and defines no kernel: a PyTorch-only rewrite");
    } else if (audit.traced && !audit.disturbed && audit.own_kernels == 0) {
      flag("no_custom_kernel", "none of the candidate's own kernels ran (" + std::to_string(audit.kernels) +
                                   " kernels, all from PyTorch or its libraries)");
    } else if (audit.traced) {
      std::ostringstream share;
      share.precision(3);
      share << audit.own_time_share * 100;
      verdict_.warnings.push_back("candidate's own kernels: " + std::to_string(audit.own_kernels) + " of " +
                                  std::to_string(audit.kernels) + " launches, " + share.str() + "% of kernel time");
    } else if (!audit.note.empty() && device_.is_cuda()) {
      verdict_.warnings.push_back("kernel audit not possible: " + audit.note);
    }
    if (audit.traced && !audit.note.empty()) verdict_.warnings.push_back("kernel audit: " + audit.note);
  }

  // Input sets for timing: fresh draws (never zeros), as many as fit the budget, so a
  // candidate that caches by pointer or by value is timed on data it has not seen last call.
  std::vector<ArgList> timing_inputs() {
    std::vector<ArgList> sets;
    sets.push_back(draw_inputs(source_, kTimingSeedBase));
    std::int64_t bytes = std::max<std::int64_t>(1, args_bytes(sets.front()));
    int wanted = static_cast<int>(std::min<std::int64_t>(job_.timing.max_input_sets,
                                                         std::max<std::int64_t>(1, job_.timing.input_set_budget_bytes / bytes)));
    for (int i = 1; i < wanted; ++i) sets.push_back(draw_inputs(source_, kTimingSeedBase + i));
    return sets;
  }

  // implausible_speed: the candidate's median time cannot be below what writing its outputs
  // past L2 takes at the device's peak bandwidth (core/speed_bound.hpp).
  void check_speed_bound() {
    if (!verdict_.timing || verdict_.timing->series.empty() || verdict_.timing->series[0].name != "candidate") return;
    if (device_.is_cuda() && verdict_.device.peak_dram_bytes_per_s <= 0)
      verdict_.warnings.push_back("implausible_speed not checked: the device reports no memory clock or bus width "
                                  "(set KBV_PEAK_DRAM_BYTES_PER_S)");
    if (auto e = implausible_speed(output_bytes_, verdict_.device.l2_bytes, verdict_.device.peak_dram_bytes_per_s,
                                   verdict_.timing->series[0].median_ms))
      flag("implausible_speed", *e);
  }

  void measure_time() {
    enter("timing");
    verdict_.timing = guarded(Outcome::runtime_error, "timing", [&] {
      auto sets = timing_inputs();
      std::vector<py::tuple> packed;
      for (const auto& s : sets) packed.push_back(pack_args(s));
      const bool tf32_on = protocol_tf32();
      const bool reset_l2 = strict();
      const at::Device device = device_;
      std::vector<TimedCallable> callables;
      callables.push_back({"candidate", [=] { set_tf32(tf32_on); if (reset_l2) reset_persisting_l2(device); },
                           [&](std::size_t i) { call_forward_discard(candidate_model_, packed[i]); }});
      auto add_baseline = [&](BaselineKind kind) {
        bool tf32 = kind == BaselineKind::eager_tf32_on;
        callables.push_back({std::string(baseline_name(kind)), [=] { set_tf32(tf32); if (reset_l2) reset_persisting_l2(device); },
                             [&](std::size_t i) { call_forward_discard(reference_, packed[i]); }});
      };
      if (device_.is_cuda()) {
        add_baseline(BaselineKind::eager_tf32_off);
        add_baseline(BaselineKind::eager_tf32_on);
      } else {
        add_baseline(protocol_.baseline);  // TF32 does not exist on the CPU: one eager baseline
      }
      BetweenRounds recheck;
      if (strict()) {
        recheck = [&](int round, std::size_t set) {
          if (round % kReuseCheckEvery == kReuseCheckEvery - 1) recheck_reuse(sets[set], round, set);
        };
      }
      auto result = time_interleaved(callables, sets.size(), std::string(baseline_name(protocol_.baseline)),
                                     job_.timing, device_, verdict_.device.l2_bytes, recheck);
      set_tf32(tf32_on);
      return result;
    });
  }

  // The reference outputs in true fp32 (TF32 off). Where the protocol's baseline runs with TF32
  // on a GPU, also the TF32 reference: the protocol accepts a candidate as precise as its own
  // baseline, and on mixed-sign data a K=4096 TF32 product is ~1e-2 off the fp32 one, so
  // neither an exact fp32 kernel nor a TF32 one can be held to the other's result.
  std::vector<at::Tensor> reference_outputs(const ArgList& inputs, std::vector<at::Tensor>* tf32_out) {
    const bool tf32 = protocol_tf32();
    set_tf32(false);
    auto ref = call_forward(reference_, clone_args(inputs));
    if (tf32 && device_.is_cuda() && tf32_out) {
      set_tf32(true);
      *tf32_out = call_forward(reference_, clone_args(inputs));
    }
    set_tf32(tf32);
    synchronize(device_);
    return ref;
  }

  // Passes when the candidate matches the fp32 reference, or the TF32 one when there is one;
  // reports the closer of the two.
  OutputComparison judge(const std::vector<at::Tensor>& ref, const std::vector<at::Tensor>& ref_tf32,
                         const std::vector<at::Tensor>& out, const Tolerance& tol) {
    auto cmp = compare_outputs(ref, out, tol, protocol_.nan_pattern_must_match);
    if (cmp.ok || ref_tf32.empty()) return cmp;
    auto cmp_tf32 = compare_outputs(ref_tf32, out, tol, protocol_.nan_pattern_must_match);
    if (cmp_tf32.ok || cmp_tf32.mismatched < cmp.mismatched) {
      cmp_tf32.reason = cmp_tf32.ok ? "" : cmp_tf32.reason + " (against the TF32 reference; closer than the fp32 one)";
      return cmp_tf32;
    }
    return cmp;
  }

  // result_reuse: `set` is rewritten in place (same storage, new values); the reference runs
  // first on a copy (so a candidate that writes into its inputs cannot spoil it), then the
  // candidate on the rewritten tensors themselves, as a caching candidate would see them.
  void recheck_reuse(ArgList& set, int round, std::size_t index) {
    ArgList fresh = draw_inputs(source_, ++rewrite_seed_);
    for (std::size_t a = 0; a < set.size(); ++a)
      if (set[a].is_tensor && is_floating(set[a].tensor)) set[a].tensor.copy_(fresh[a].tensor);
    std::vector<at::Tensor> ref_tf32;
    auto ref = reference_outputs(set, &ref_tf32);
    auto out = call_forward(candidate_model_, set);
    synchronize(device_);
    auto cmp = judge(ref, ref_tf32, out, protocol_.tolerance(precision_));
    if (!cmp.ok)
      flag("result_reuse", "call " + std::to_string(round) + " on input set " + std::to_string(index) +
                               " rewritten in place: " + cmp.reason);
  }

  // Strict without timing still re-checks reuse: a few calls rotating over two input sets that
  // are rewritten in place before each call.
  void check_reuse_without_timing() {
    enter("reuse_check");
    guarded(Outcome::runtime_error, "result_reuse check", [&] {
      std::vector<ArgList> sets{draw_inputs(source_, kTimingSeedBase), draw_inputs(source_, kTimingSeedBase + 1)};
      for (int call = 0; call < 2 * kReuseCheckEvery; ++call) {
        auto& set = sets[static_cast<std::size_t>(call) % sets.size()];
        call_forward(candidate_model_, set);  // the call a cache would remember
        recheck_reuse(set, call, static_cast<std::size_t>(call) % sets.size());
      }
    });
  }

  void measure_memory() {
    enter("memory");
    verdict_.memory = guarded(Outcome::runtime_error, "memory", [&] {
      MemoryResult result;
      result.method = memory_method_;
      set_tf32(protocol_tf32());
      ArgList inputs = draw_inputs(source_, kTimingSeedBase);
      auto run = [&](const py::object& model) {
        return measure_forward_memory(device_, [&] { auto out = call_forward(model, inputs); });
      };
      result.baseline = run(reference_);
      result.candidate = run(candidate_model_);
      HeldMemory base_held = held_tensor_bytes({reference_, problem_}, device_);
      HeldMemory cand_held = held_tensor_bytes({candidate_model_, candidate_}, device_);
      result.baseline.resident_bytes = base_held.bytes;
      result.candidate.resident_bytes = cand_held.bytes;
      if (cand_held.truncated)
        verdict_.warnings.push_back("memory: the candidate's object graph is too large to walk fully; its held bytes are a floor");
      auto ratio = [](std::int64_t a, std::int64_t b) { return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0.0; };
      result.ratio_allocated = ratio(result.candidate.peak_allocated_bytes, result.baseline.peak_allocated_bytes);
      result.ratio_device = ratio(result.candidate.peak_device_bytes, result.baseline.peak_device_bytes);
      result.ratio_footprint = ratio(result.candidate.footprint_bytes(), result.baseline.footprint_bytes());
      return result;
    });
  }

  const WorkerJob& job_;
  ReportChannel& channel_;
  const Protocol& protocol_;
  Precision precision_;
  Verdict verdict_;
  at::Device device_{at::kCPU};
  std::unique_ptr<PythonRuntime> python_;
  std::string memory_method_;
  py::module_ problem_;
  py::module_ candidate_;
  py::object init_inputs_;
  py::object reference_;
  py::object candidate_model_;
  WeightCopy copy_;
  InputSource source_;
  std::optional<TamperWatch> tamper_;
  long reference_calls_ = 0;
  std::int64_t output_bytes_ = 0;  // what the candidate must write per call (strict audit)
  py::object hook_handle_;
  bool nondeterminism_checked_ = false;
  std::uint64_t rewrite_seed_ = kTimingSeedBase + 1000;
};

}  // namespace

Verdict evaluate(const WorkerJob& job, ReportChannel& channel) {
  // Never destroyed: the worker exits right after sending the verdict, and tearing down the
  // interpreter and the models first cost ~0.3-0.5 s per evaluation (measured on the H200 as
  // the `done` stage) and could hang on a candidate's stray threads.
  auto* evaluation = new Evaluation(job, channel);
  return evaluation->run();
}

}  // namespace kbv::worker
