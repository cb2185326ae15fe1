// The problem: its module (trusted input: the judge imports it, the sandbox never sees it
// through the judge), Model, and the source of every input. Also `kbv audit`, which judges the
// problem alone.
#include <filesystem>
#include <regex>

#include "core/sha256.hpp"

#include "judge/distributions.hpp"
#include "judge/held_memory.hpp"
#include "judge/judgement.hpp"
#include "judge/problem_audit.hpp"
#include "judge/profile.hpp"
#include "judge/rehearsal.hpp"
#include "torch_host/device.hpp"
#include "torch_host/models.hpp"
#include "torch_host/py_json.hpp"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace kbv::judge {
namespace {

// Seed for constructing both models (KernelBench seeds model construction the same way).
constexpr std::uint64_t kModelSeed = 42;

}  // namespace

ProblemInfo describe_problem(const std::string& path, const std::string& size) {
  ProblemInfo info;
  fs::path p(path);
  info.path = path;
  info.sha256 = sha256_file(path);
  info.size = size;
  std::smatch m;
  std::string folder = p.parent_path().filename().string();
  // Numbers too large for an int leave the field unknown rather than stopping the evaluation.
  auto to_int = [](const std::string& digits, int fallback) {
    try {
      return std::stoi(digits);
    } catch (const std::exception&) {
      return fallback;
    }
  };
  if (std::regex_match(folder, m, std::regex(R"(level_?(\d+))"))) info.level = to_int(m[1], 0);
  std::string stem = p.stem().string();
  if (std::regex_match(stem, m, std::regex(R"((\d+)_(.*))"))) {
    info.id = to_int(m[1], -1);
    info.name = m[2];
  } else {
    info.name = stem;
  }
  return info;
}

void Judgement::load_problem() {
  enter(Stage::load_problem);
  guarded(Outcome::problem_error, "problem", [&] {
    problem_ = torch_host::import_file(job_.problem_path, "kbv_problem");
    if (job_.size == "small" && !torch_host::apply_small_size(problem_))
      warn("problem defines no KBV_SMALL; ran at its default size");
    for (const char* name : {"Model", "get_inputs", "get_init_inputs"})
      if (!py::hasattr(problem_, name)) throw std::runtime_error(std::string("the problem module defines no ") + name);
    init_inputs_ = problem_.attr("get_init_inputs")();
  });
}

void Judgement::build_reference() {
  auto dtype = float_dtype_of(precision_);
  reference_ = guarded(Outcome::problem_error, "constructing Model", [&] {
    return torch_host::construct_model(problem_.attr("Model"), init_inputs_, kModelSeed, device_, dtype);
  });
  // Weighed against what the sandbox holds should the judge run short (hoard_evidence), also in a
  // later protocol whose own Model failed: measured once, as every protocol's Model is the same.
  if (reference_resident_ == 0) {
    try {
      reference_resident_ = held_tensor_bytes({reference_}, device_).bytes;
    } catch (const std::exception&) {
    }
  }
  source_ = InputSource{problem_.attr("get_inputs"), device_, dtype};
  if (!job_.hidden_tests_path.empty()) load_hidden();
}

// The hidden-test file, and each of its lists through Model once: a list Model cannot run is
// the file's fault (or a size it was not written for), never the candidate's.
void Judgement::load_hidden() {
  // Drawn under the protocol's first seed: fixed for standard and verified, secret for strict.
  const std::uint64_t seed = protocol_->distributions(job_.secret).front().seed;
  hidden_ = guarded(Outcome::problem_error, "hidden-test file",
                    [&] { return load_hidden_tests(job_.hidden_tests_path, problem_); });
  const std::vector<ArgList> lists = guarded(Outcome::problem_error, "hidden-test file",
                                             [&] { return hidden_input_lists(hidden_, source_, seed); });
  hidden_.sets = static_cast<int>(lists.size());
  const ArgList like = guarded(Outcome::problem_error, "get_inputs()", [&] { return draw_inputs(source_, seed); });
  const std::string size_hint = job_.size == "small" && py::hasattr(problem_, "KBV_SMALL")
                                    ? " (Model runs at the problem's KBV_SMALL size here; hidden-test files are written for "
                                      "its default size: use --size default)"
                                    : "";
  for (std::size_t i = 0; i < lists.size(); ++i) {
    guarded(Outcome::problem_error, "hidden-test file: hidden_" + std::to_string(i + 1) + " through Model" + size_hint,
            [&] { return reference_outputs(lists[i], nullptr).size(); });
    hidden_.timeable.push_back(same_layout(lists[i], like));
  }
}

void Judgement::rehearse() {
  RehearsalPlan plan{job_.problem_path, job_.size == "small", device_, precision_, {}, kModelSeed};
  for (const auto& name : job_protocols(job_)) plan.protocols.push_back(&protocol_by_name(name));
  // The sandbox's answer seen between steps: when its import ended, for the verdict's build time.
  plan.after_step = [this] { note_waiting_answer(); };
  // What stopped it goes to the profile alone: the real stages meet it again and report it.
  if (rehearse_device_work(plan)) profile::add("shared.rehearsal_stopped", 0.0);
}

std::vector<DistributionSpec> Judgement::correctness_distributions() const {
  auto specs = protocol_->distributions(job_.secret);
  return interleave(specs, hidden_distributions(hidden_, specs.front().seed), job_.secret);
}

std::vector<DistributionSpec> Judgement::timed_distributions() const {
  std::vector<DistributionSpec> kinds;
  for (const auto& spec : protocol_->distributions(job_.secret))
    if (spec.kind != DistributionKind::reinit_params) kinds.push_back(spec);
  return kinds;
}

std::vector<DistributionSpec> Judgement::timed_hidden_distributions() const {
  std::vector<DistributionSpec> kinds;
  for (const auto& spec : hidden_distributions(hidden_, 0))
    if (hidden_.timeable[static_cast<std::size_t>(spec.input_set)]) kinds.push_back(spec);
  return kinds;
}

ArgList Judgement::inputs_of(const DistributionSpec& spec) {
  return spec.kind == DistributionKind::hidden_file ? hidden_inputs(hidden_, source_, spec) : distribution_inputs(source_, spec);
}

nlohmann::json Judgement::init_inputs_json() const {
  return guarded(Outcome::problem_error, "get_init_inputs()", [&] { return torch_host::python_to_json(init_inputs_); });
}

std::uint64_t Judgement::model_seed() { return kModelSeed; }

// kbv audit: the reference alone under every distribution of every protocol: its output must be
// finite, and a trivial output (zeros, a constant, the input) must not pass everywhere. A
// distribution with a non-finite reference fails; degenerate protocols are flagged "degenerate"
// with the protocol names in the evidence.
void Judgement::audit_problem() {
  enter(Stage::correctness);
  build_reference();
  CorrectnessResult result;
  Tolerance tol = protocol_->tolerance(precision_);
  result.atol = tol.atol;
  result.rtol = tol.rtol;
  std::vector<std::string> degenerate_under, non_finite;
  for (const auto& name : protocol_names()) {
    const Protocol& p = protocol_by_name(name);
    torch_host::set_tf32(p.baseline == BaselineKind::eager_tf32_on);
    int discriminating = 0;
    for (const auto& spec : p.distributions(job_.secret)) {
      DistributionResult d;
      d.name = name + ":" + spec.name;
      d.kind = std::string(distribution_kind_name(spec.kind));
      if (spec.kind == DistributionKind::reinit_params)
        guarded(Outcome::problem_error, "re-initialising parameters",
                [&] { reinit_parameters(torch_host::named_parameters(reference_), spec.seed); });
      ArgList inputs = guarded(Outcome::problem_error, d.name + ": get_inputs()", [&] { return distribution_inputs(source_, spec); });
      auto ref = guarded(Outcome::problem_error, d.name + ": Model.forward", [&] {
        auto o = torch_host::call_forward(reference_, torch_host::clone_args(inputs));
        torch_host::synchronize(device_);
        return o;
      });
      for (const auto& t : ref) d.numel += t.defined() ? t.numel() : 0;
      if (!all_finite(ref) && spec.kind == DistributionKind::wide_range) {
        // A draw made to leave fp16's range may leave the problem's too (a cumulative product of
        // 1e5s): evaluations skip it and say so, as for any draw with a non-finite reference.
        d.status = DistributionStatus::skipped;
        d.reason = "the reference output has NaN/Inf on this wide-range draw: skipped in evaluations";
      } else if (!all_finite(ref)) {
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
  if (!degenerate_under.empty())
    flag(FlagName::degenerate, "no distribution of " + join(degenerate_under) + " discriminates: a trivial output passes them all");
  if (!non_finite.empty())
    throw Ending{Outcome::problem_error, "the reference output has NaN/Inf on " + non_finite.front() +
                                             (non_finite.size() > 1 ? " and " + std::to_string(non_finite.size() - 1) + " more" : "")};
}

}  // namespace kbv::judge
