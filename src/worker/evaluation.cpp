#include "worker/evaluation.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>

#include <c10/util/Exception.h>
#include <pybind11/pybind11.h>

#include "core/protocol.hpp"
#include "core/sha256.hpp"
#include "worker/build_hooks.hpp"
#include "worker/compare.hpp"
#include "worker/device.hpp"
#include "worker/distributions.hpp"
#include "worker/forward.hpp"
#include "worker/inputs.hpp"
#include "worker/memory.hpp"
#include "worker/models.hpp"
#include "worker/python_runtime.hpp"
#include "worker/timing.hpp"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace kbv::worker {
namespace {

// Seed for constructing both models (KernelBench seeds model construction the same way).
constexpr std::uint64_t kModelSeed = 42;
// Seeds of the timing input sets: fresh draws, disjoint from the correctness seeds.
constexpr std::uint64_t kTimingSeedBase = 9000;

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
  void enter(const char* stage) {
    verdict_.stage = stage;
    channel_.stage(stage);
  }

  void stages() {
    enter("setup");
    verdict_.problem = guarded(Outcome::problem_error, "problem file",
                               [&] { return describe_problem(job_.problem_path, job_.size); });
    verdict_.candidate.sha256 = guarded(Outcome::compile_error, "candidate file",
                                        [&] { return sha256_file(job_.candidate_path); });
    device_ = guarded(Outcome::skipped, "device", [&] { return resolve_device(job_.device); });
    verdict_.device = describe_device(device_);
    python_ = std::make_unique<PythonRuntime>();
    verdict_.provenance.python_version = python_->python_version();
    verdict_.provenance.torch_version = python_->torch_version();
    memory_method_ = memory_tracking_start(device_);

    load_problem();
    build_candidate();
    build_models();
    check_correctness();
    if (job_.timing.enabled) measure_time();
    if (device_.is_cuda() && protocol_.measure_memory && job_.measure_memory) measure_memory();
    enter("done");
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
    });
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
    try {
      hooks.emplace(hook_config);
      candidate_ = import_file(job_.candidate_path, "kbv_candidate");
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
  }

  void check_correctness() {
    enter("correctness");
    CorrectnessResult result;
    Tolerance tol = protocol_.tolerance(precision_);
    if (job_.tolerance) tol = {*job_.tolerance, *job_.tolerance};
    result.atol = tol.atol;
    result.rtol = tol.rtol;
    set_tf32(protocol_.baseline == BaselineKind::eager_tf32_on);

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
        auto out = guarded(Outcome::runtime_error, spec.name + ": ModelNew.forward", [&] {
          auto o = call_forward(candidate_model_, candidate_inputs);
          synchronize(device_);
          return o;
        });
        std::vector<at::Tensor> ref;
        try {
          ref = call_forward(reference_, inputs);
          synchronize(device_);
        } catch (py::error_already_set& e) {
          skip = true;
          d.reason = "the reference raised " + first_line(describe_python_error(e).one_line());
        }
        if (!skip && !protocol_.nan_pattern_must_match && !all_finite(ref)) {
          skip = true;
          d.reason = "the reference output has NaN/Inf on this distribution";
        }
        if (!skip) {
          auto cmp = compare_outputs(ref, out, tol, protocol_.nan_pattern_must_match);
          d.status = cmp.ok ? DistributionStatus::pass : DistributionStatus::fail;
          d.reason = cmp.reason;
          d.max_abs_err = cmp.max_abs_err;
          d.max_rel_err = cmp.max_rel_err;
          d.mismatched = cmp.mismatched;
          d.numel = cmp.numel;
          if (!cmp.ok && !failure) failure = Ending{Outcome::incorrect, spec.name + ": " + cmp.reason};
        }
      }
      if (skip) {
        d.status = DistributionStatus::skipped;
        result.skipped.push_back(spec.name);
      }
      result.distributions.push_back(d);
    }
    verdict_.correctness = result;
    if (failure) throw *failure;
    if (result.skipped.size() == result.distributions.size())
      throw Ending{Outcome::problem_error, "every distribution was skipped: " + result.distributions.front().reason};
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

  void measure_time() {
    enter("timing");
    verdict_.timing = guarded(Outcome::runtime_error, "timing", [&] {
      auto sets = timing_inputs();
      std::vector<py::tuple> packed;
      for (const auto& s : sets) packed.push_back(pack_args(s));
      const bool protocol_tf32 = protocol_.baseline == BaselineKind::eager_tf32_on;
      std::vector<TimedCallable> callables;
      callables.push_back({"candidate", [=] { set_tf32(protocol_tf32); },
                           [&](std::size_t i) { call_forward_discard(candidate_model_, packed[i]); }});
      auto add_baseline = [&](BaselineKind kind) {
        bool tf32 = kind == BaselineKind::eager_tf32_on;
        callables.push_back({std::string(baseline_name(kind)), [=] { set_tf32(tf32); },
                             [&](std::size_t i) { call_forward_discard(reference_, packed[i]); }});
      };
      if (device_.is_cuda()) {
        add_baseline(BaselineKind::eager_tf32_off);
        add_baseline(BaselineKind::eager_tf32_on);
      } else {
        add_baseline(protocol_.baseline);  // TF32 does not exist on the CPU: one eager baseline
      }
      auto result = time_interleaved(callables, sets.size(), std::string(baseline_name(protocol_.baseline)),
                                     job_.timing, device_, verdict_.device.l2_bytes);
      set_tf32(protocol_tf32);
      return result;
    });
  }

  void measure_memory() {
    enter("memory");
    verdict_.memory = guarded(Outcome::runtime_error, "memory", [&] {
      MemoryResult result;
      result.method = memory_method_;
      set_tf32(protocol_.baseline == BaselineKind::eager_tf32_on);
      ArgList inputs = draw_inputs(source_, kTimingSeedBase);
      auto run = [&](const py::object& model) {
        return measure_forward_memory(device_, [&] { auto out = call_forward(model, inputs); });
      };
      result.baseline = run(reference_);
      result.candidate = run(candidate_model_);
      result.baseline.resident_bytes = model_state_bytes(reference_);
      result.candidate.resident_bytes = model_state_bytes(candidate_model_);
      auto ratio = [](std::int64_t a, std::int64_t b) { return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0.0; };
      result.ratio_allocated = ratio(result.candidate.peak_allocated_bytes, result.baseline.peak_allocated_bytes);
      result.ratio_device = ratio(result.candidate.peak_device_bytes, result.baseline.peak_device_bytes);
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
};

}  // namespace

Verdict evaluate(const WorkerJob& job, ReportChannel& channel) {
  Evaluation evaluation(job, channel);
  return evaluation.run();
}

}  // namespace kbv::worker
