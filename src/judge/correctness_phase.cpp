// Correctness: every distribution of the protocol. The judge makes the inputs, writes them into
// the memory it shares with the sandbox (its own pristine copy stays private), asks for one call,
// reads the outputs itself, and compares them with its own reference. Strict adds the checks
// that only look at what the judge observed: inputs changed by the call, an output that is an
// input, and a second call on the same inputs. Under every protocol an output still being
// written after the call's end, or wrong only because the call's work ran ahead of its inputs,
// is unsynchronized_work (call_window.cpp).
#include "judge/blockwise.hpp"
#include "judge/distributions.hpp"
#include "judge/integrity.hpp"
#include "judge/judgement.hpp"
#include "judge/numerics.hpp"
#include "judge/profile.hpp"
#include "torch_host/device.hpp"
#include "torch_host/memory.hpp"
#include "torch_host/models.hpp"

namespace kbv::judge {

constexpr std::uint32_t kSlot = 0;  // every call uses one input slot: checked calls look like the rest

Tolerance Judgement::tolerance() const {
  Tolerance tol = protocol_->tolerance(precision_);
  if (job_.tolerance) tol = {*job_.tolerance, *job_.tolerance};
  return tol;
}

// The reference outputs in true fp32 (TF32 off). Where the protocol's baseline runs with TF32 on
// a GPU, also the TF32 reference: the protocol accepts a candidate as precise as its own baseline.
std::vector<at::Tensor> Judgement::reference_outputs(const ArgList& inputs, std::vector<at::Tensor>* tf32_out) {
  const bool tf32 = protocol_tf32();
  torch_host::set_tf32(false);
  std::vector<at::Tensor> ref;
  {
    const ArgList args = torch_host::clone_args(inputs);  // Model may write into its inputs
    reference_forward_peak_ = std::max(reference_forward_peak_, torch_host::allocation_rise(device_, [&] {
                                         ref = torch_host::call_forward(reference_, args);
                                       }));
  }
  if (tf32 && device_.is_cuda() && tf32_out) {
    torch_host::set_tf32(true);
    *tf32_out = torch_host::call_forward(reference_, torch_host::clone_args(inputs));
  }
  torch_host::set_tf32(tf32);
  torch_host::synchronize(device_);
  note_reference_outputs(ref);
  if (tf32_out) note_reference_outputs(*tf32_out);
  reference_ran_ = true;
  return ref;
}

OutputComparison Judgement::judge_outputs(const ArgList& inputs, const std::vector<at::Tensor>& ref,
                                          const std::vector<at::Tensor>& ref_tf32, const std::vector<at::Tensor>& out,
                                          const Tolerance& tol, std::optional<NumericsCheck>* numerics) {
  OutputComparison cmp = tolerance_outputs(ref, ref_tf32, out, tol);
  if (cmp.ok || !cmp.tolerance_only || !protocol_->numerics_model) return cmp;
  NumericsCheck check = profile::timed("compare.numerics", [&] { return numerics_against_truth(inputs, ref, ref_tf32, out); });
  if (check.within) {
    cmp.ok = true;
    cmp.reason.clear();
  } else if (check.note.empty()) {
    cmp.reason += "; against a float64 run of Model its max error is " + std::to_string(check.candidate_max_abs_err) +
                  ", eager PyTorch's " + std::to_string(check.eager_max_abs_err) + " (more than " +
                  std::to_string(static_cast<int>(check.factor)) + "x)";
  }
  if (numerics) *numerics = check;
  return cmp;
}

// Passes when the candidate matches the fp32 reference, or the TF32 one when there is one;
// reports the closer of the two.
OutputComparison Judgement::tolerance_outputs(const std::vector<at::Tensor>& ref, const std::vector<at::Tensor>& ref_tf32,
                                              const std::vector<at::Tensor>& out, const Tolerance& tol) const {
  // An honest TF32 candidate misses the fp32 reference and matches the TF32 one: the full
  // comparison (the failure's details) is then not needed against the fp32 one.
  if (!ref_tf32.empty() && !outputs_match(ref, out, tol, protocol_->nan_pattern_must_match) &&
      outputs_match(ref_tf32, out, tol, protocol_->nan_pattern_must_match))
    return compare_outputs(ref_tf32, out, tol, protocol_->nan_pattern_must_match);
  auto cmp = compare_outputs(ref, out, tol, protocol_->nan_pattern_must_match);
  if (cmp.ok || ref_tf32.empty()) return cmp;
  auto cmp_tf32 = compare_outputs(ref_tf32, out, tol, protocol_->nan_pattern_must_match);
  if (cmp_tf32.ok || cmp_tf32.mismatched < cmp.mismatched) {
    cmp_tf32.reason = cmp_tf32.ok ? "" : cmp_tf32.reason + " (against the TF32 reference; closer than the fp32 one)";
    return cmp_tf32;
  }
  return cmp;
}

// Model in float64 on float64 copies of the inputs: the truth of the numerics model. A copy, so
// the reference itself (and its precision) stays as it is.
std::vector<at::Tensor> Judgement::float64_outputs(const ArgList& inputs) {
  pybind11::object model = pybind11::module_::import("copy").attr("deepcopy")(reference_).attr("double")();
  // Floating inputs are new float64 tensors anyway; only the rest needs a copy (a Model that
  // changes its inputs must not change the caller's). At KernelBench's sizes a copy of every
  // input beside the float64 ones was what the device lacked.
  ArgList wide = inputs;
  for (auto& a : wide)
    if (a.is_tensor && a.tensor.defined())
      a.tensor = at::isFloatingType(a.tensor.scalar_type()) ? a.tensor.to(at::kDouble, /*non_blocking=*/false, /*copy=*/true)
                                                            : a.tensor.clone();
  auto out = torch_host::call_forward(model, wide);
  torch_host::synchronize(device_);
  return out;
}

// The numerics model: where the candidate misses the tolerance, its error against the float64
// truth is weighed against eager PyTorch's own -- the fp32 reference's, or the TF32 one's where
// the protocol's baseline runs TF32 (the larger of the two errors is eager's).
NumericsCheck Judgement::numerics_against_truth(const ArgList& inputs, const std::vector<at::Tensor>& ref,
                                                const std::vector<at::Tensor>& ref_tf32, const std::vector<at::Tensor>& out) {
  std::vector<at::Tensor> truth;
  try {
    truth = float64_outputs(inputs);
  } catch (pybind11::error_already_set& e) {
    NumericsCheck none;
    none.note = "Model does not run in float64: " + first_line(torch_host::describe_python_error(e).one_line());
    return none;
  } catch (const c10::Error& e) {
    NumericsCheck none;
    none.note = "Model does not run in float64: " + first_line(e.what_without_backtrace());
    return none;
  }
  NumericsCheck check = check_numerics(truth, ref, out);
  if (!ref_tf32.empty()) {
    NumericsCheck tf32 = check_numerics(truth, ref_tf32, out);
    if (tf32.note.empty() && tf32.eager_max_abs_err > check.eager_max_abs_err) check = tf32;
  }
  // The float64 inputs and outputs, freed, go back to the device: left in the judge's cache,
  // they are memory the candidate's next call cannot have.
  truth.clear();
  torch_host::free_cached_memory_over(device_, kFreeCacheOverBytes);
  return check;
}

namespace {

// Elements, over every output, where the candidate's value is inf or NaN and the reference's is
// finite (outputs that differ in shape or dtype count nothing: the comparison judged them).
std::int64_t non_finite_where_finite(const std::vector<at::Tensor>& ref, const std::vector<at::Tensor>& out) {
  std::int64_t n = 0;
  for (std::size_t i = 0; i < ref.size() && i < out.size(); ++i) {
    const at::Tensor &r = ref[i], &c = out[i];
    if (!r.defined() || !c.defined() || r.sizes() != c.sizes() || r.device() != c.device() || !r.is_floating_point() ||
        !c.is_floating_point())
      continue;
    n += count_blockwise({r, c}, [](const std::vector<at::Tensor>& b) { return at::isfinite(b[0]).logical_and_(at::isfinite(b[1]).logical_not_()); });
  }
  return n;
}

}  // namespace

void Judgement::check_candidate_call(const std::string& dist, const CallOutputs& out) {
  if (out.input_mutation) flag(FlagName::input_mutated, dist + ": " + *out.input_mutation);
  for (std::size_t i = 0; i < out.aliased_inputs.size(); ++i)
    if (out.aliased_inputs[i] >= 0)
      flag(FlagName::output_aliases_input, dist + ": output " + std::to_string(i) + " is a view of input " +
                                               std::to_string(out.aliased_inputs[i]));
}

void Judgement::flag_degenerate(const CorrectnessResult& result, bool skipped_for_the_candidate) {
  std::vector<std::string> trivial;
  int compared = 0;
  for (const auto& d : result.distributions) {
    if (d.status == DistributionStatus::skipped) continue;
    ++compared;
    if (!d.trivial_pass.empty()) trivial.push_back(d.name + " (" + d.trivial_pass + ")");
  }
  // The flag speaks of the problem (one strict verdict with it drops the problem from every
  // candidate's figures): a draw skipped for what the candidate is (ModelNew's parameters do not
  // cover Model's, so reinit_params is not drawn) leaves the audit incomplete, and a candidate must
  // not make a problem degenerate by leaving out the draw that discriminates.
  const bool all_trivial = compared > 0 && static_cast<int>(trivial.size()) == compared;
  if (all_trivial && skipped_for_the_candidate)
    warn("a trivial output passes every distribution drawn, but not every distribution was drawn (the candidate's "
         "parameters left reinit_params out): " + join(trivial));
  else if (all_trivial)
    flag(FlagName::degenerate, "a trivial output passes every distribution: " + join(trivial));
  else if (!trivial.empty())
    warn("non-discriminative distributions (a trivial output passes): " + join(trivial));
}

std::string Judgement::audit_key(const DistributionSpec& spec, const std::string& weights, const Tolerance& tol) const {
  // The files' hashes as this evaluation took them at its start (the verdict's problem record).
  const auto& problem = verdict_.problem;
  return nlohmann::json{{"problem", problem.path},
                        {"problem_sha256", problem.sha256},
                        {"hidden_sha256", problem.hidden_tests ? problem.hidden_tests->sha256 : ""},
                        {"size", job_.size},
                        {"precision", std::string(precision_name(precision_))},
                        {"device", device_.str()},
                        {"name", spec.name},
                        {"kind", std::string(distribution_kind_name(spec.kind))},
                        {"scale", spec.scale},
                        {"seed", spec.seed},
                        {"input_set", spec.input_set},
                        {"weights", weights},
                        {"atol", tol.atol},
                        {"rtol", tol.rtol},
                        {"nan_pattern", protocol_->nan_pattern_must_match}}
      .dump();
}

std::string Judgement::audited_trivial_pass(const DistributionSpec& spec, const std::string& weights, const ArgList& inputs,
                                            const std::vector<at::Tensor>& ref, const Tolerance& tol) {
  // An informational audit of the problem: a failure of kbv's here costs the verdict nothing but
  // the audit (tests/worker/test_judge_fuzz.cpp keeps it from throwing).
  try {
    const std::string key = audit_key(spec, weights, tol);
    if (auto it = life_.trivial_passes.find(key); it != life_.trivial_passes.end()) return it->second;
    profile::Step step("correctness.trivial_pass.audit");  // the audit itself, not taken from an earlier candidate
    std::string passes = trivial_pass(ref, inputs, tol, protocol_->nan_pattern_must_match);
    if (life_.trivial_passes.size() < 4096) life_.trivial_passes.emplace(key, passes);
    return passes;
  } catch (const std::exception& e) {
    // Starved by the sandbox's hoard, the audit's failure is the candidate's: otherwise a candidate
    // returning zeros could keep a degenerate problem unflagged by filling the device first.
    if (auto end = hoard_ending(e.what())) throw *end;
    warn(spec.name + ": the degenerate-problem audit could not run: " + first_line(e.what()));
    return "";
  }
}

void Judgement::check_correctness() {
  enter(Stage::correctness);
  // What Model's construction and the last protocol freed goes back to the device: at KernelBench's
  // sizes the candidate's outputs need it (timing_phase.cpp does the same).
  torch_host::free_cached_memory_over(device_, kFreeCacheOverBytes);
  CorrectnessResult result;
  Tolerance tol = tolerance();
  result.atol = tol.atol;
  result.rtol = tol.rtol;
  std::optional<Ending> failure;
  // lower_precision: wide_range (values beyond fp16's range) is the only draw that fails, with inf
  // or NaN where the reference is finite: what a kernel computing in fp16 returns.
  std::optional<std::string> beyond_half_range;
  int other_failures = 0;
  std::string weights = "init";  // Model's parameters: as built (this protocol's build_reference) or re-drawn
  bool skipped_for_the_candidate = false;  // a draw left out for what ModelNew is
  for (const auto& spec : correctness_distributions()) {
    DistributionResult d;
    d.name = spec.name;
    d.kind = std::string(distribution_kind_name(spec.kind));
    bool skip = false;
    if (spec.kind == DistributionKind::reinit_params) {
      // Decided from Model's side: re-initialise whenever every entry of Model has a same-named,
      // same-shaped entry in ModelNew (extra entries of ModelNew do not matter).
      auto model_state = torch_host::state_entries(reference_);
      bool covered = !model_state.empty();
      for (const auto& [name, t] : model_state) {
        auto it = candidate_state_.find(name);
        covered = covered && it != candidate_state_.end() && it->second == t.sizes().vec();
      }
      if (!covered) {
        skip = true;
        skipped_for_the_candidate = skipped_for_the_candidate || !model_state.empty();
        d.reason = model_state.empty() ? "Model has no parameters or buffers"
                                       : "ModelNew has no same-named, same-shaped entry for every entry of Model";
      } else {
        guarded(Outcome::problem_error, "re-initialising parameters",
                [&] { reinit_parameters(torch_host::named_parameters(reference_), spec.seed); });
        weights = "reinit:" + std::to_string(spec.seed);
        hand_over_weights();
      }
    }
    if (!skip) {
      ArgList inputs = [&] {
        profile::Step step("correctness.inputs");
        return guarded(Outcome::problem_error, spec.name + (spec.kind == DistributionKind::hidden_file ? ": get_hidden_inputs()" : ": get_inputs()"), [&] { return inputs_of(spec); });
      }();
      // The reference first: its outputs bound what the judge copies of the candidate's
      // (refuse_oversized_outputs), and nothing the candidate's call leaves on the device can
      // starve it of memory so that the draws it fails are skipped.
      std::vector<at::Tensor> ref, ref_tf32;
      // Not with the sandbox frozen: a judge held in its own call (inside the driver, after the
      // candidate's context broke) is freed by its watchdog when the sandbox ends, and a frozen
      // sandbox cannot end (tests/integration/test_judge_watchdog_cli.cpp).
      try {
        profile::Step step("correctness.reference");
        ref = reference_outputs(inputs, &ref_tf32);
      } catch (pybind11::error_already_set& e) {
        const std::string error = first_line(torch_host::describe_python_error(e).one_line());
        // Model failed while the sandbox holds more than its share of the device: the candidate's
        // doing, whatever the error says (cuDNN finds no algorithm under memory pressure, and says
        // so). Read here, at once, not when the evaluation ends.
        if (auto end = starvation_ending(error, /*any_failure=*/true)) throw *end;
        // Out of device memory is no property of the draw, and never a skipped distribution:
        // whose it is (the sandbox's hoard, other processes, the judge's own copies, a problem
        // too large for the device) is decided when the evaluation ends (oom_blame).
        if (is_out_of_memory(error)) throw Ending{Outcome::problem_error, spec.name + ": Model.forward: " + error};
        // A hidden-test list went through Model before the candidate ran at all: failing now
        // is no property of the list, and skipping it would drop the file's check.
        if (spec.kind == DistributionKind::hidden_file)
          throw Ending{Outcome::internal_error, spec.name + ": Model ran this list before the candidate's calls and fails "
                                                "on it now: " + error};
        skip = true;
        d.reason = "the reference raised " + error;
      }
      if (!skip && !protocol_->nan_pattern_must_match && !all_finite(ref)) {
        skip = true;
        d.reason = "the reference output has NaN/Inf on this distribution";
      }
      if (!skip) {
        CallOutputs out = [&] {
          profile::Step step("correctness.call");
          return call_candidate(kSlot, inputs, spec.name + ": ModelNew.forward");
        }();
        if (output_bytes_ == 0) output_bytes_ = torch_host::output_bytes_to_write(out.views, device_);
        if (strict()) check_candidate_call(spec.name, out);
        // Outputs still being written after the call's end: a caller on the current stream would
        // read them unfinished. Every protocol.
        if (out.late_writes && !failure) {
          flag(FlagName::unsynchronized_work, spec.name + ": " + *out.late_writes);
          failure = Ending{Outcome::incorrect, "unsynchronized_work: " + spec.name + ": " + *out.late_writes};
        }
        auto cmp = [&] {
          profile::Step step("correctness.compare");
          return judge_outputs(inputs, ref, ref_tf32, out.snapshot, tol, &d.numerics);
        }();
        d.status = cmp.ok ? DistributionStatus::pass : DistributionStatus::fail;
        d.reason = cmp.reason;
        d.max_abs_err = cmp.max_abs_err;
        d.max_rel_err = cmp.max_rel_err;
        d.mismatched = cmp.mismatched;
        d.numel = cmp.numel;
        d.trivial_pass = [&] {
          profile::Step step("correctness.trivial_pass");
          return audited_trivial_pass(spec, weights, inputs, ref, tol);
        }();
        if (!cmp.ok && !failure) {
          profile::Step step("correctness.explain");
          DistributionSpec other = spec;
          other.seed ^= 0x9e3779b97f4a7c15ULL;
          ArgList decoy = guarded(Outcome::problem_error, spec.name + ": get_inputs()", [&] { return inputs_of(other); });
          if (auto why = explain_wrong_output(kSlot, inputs, decoy, ref, ref_tf32, out.snapshot, tol)) {
            flag(FlagName::unsynchronized_work, spec.name + ": " + *why);
            failure = Ending{Outcome::incorrect, "unsynchronized_work: " + spec.name + ": " + *why + " (in its window: " + cmp.reason + ")"};
          } else {
            failure = Ending{Outcome::incorrect, spec.name + ": " + cmp.reason};
          }
          // The explaining calls ended badly: the sandbox may be mid-call, and what it does
          // next is no evidence against the wrong output already in hand.
          if (sandbox_unfit_) throw *failure;
        }
        if (!cmp.ok && spec.kind != DistributionKind::wide_range) ++other_failures;
        if (!cmp.ok && spec.kind == DistributionKind::wide_range && !beyond_half_range) {
          const std::int64_t n = guarded(Outcome::internal_error, spec.name + ": counting non-finite outputs",
                                         [&] { return non_finite_where_finite(ref, out.snapshot); });
          if (n > 0)
            beyond_half_range = spec.name + ": " + std::to_string(n) + " output elements are inf or NaN where the reference "
                                "is finite, on inputs beyond fp16's largest value (65504) that every other draw stays "
                                "within, and every other draw passed: the kernel computes in half precision where the "
                                "problem asks for " + std::string(precision_name(precision_));
        }
        if (strict() && cmp.ok && !determinism_checked_) {
          // nondeterministic: the same inputs again, compared with the first call's snapshot.
          determinism_checked_ = true;
          profile::Step step("correctness.repeat");
          CallOutputs again = call_candidate(kSlot, inputs, spec.name + ": ModelNew.forward (repeat)");
          auto same = compare_outputs(out.snapshot, again.snapshot, tol, true);
          if (!same.ok) flag(FlagName::nondeterministic, spec.name + ": a second call on the same inputs differs: " + same.reason);
        }
      }
    }
    if (skip) {
      d.status = DistributionStatus::skipped;
      result.skipped.push_back(spec.name);
    }
    result.distributions.push_back(d);
  }
  if (beyond_half_range && other_failures == 0) flag(FlagName::lower_precision, *beyond_half_range);
  flag_degenerate(result, skipped_for_the_candidate);
  verdict_.correctness = result;
  if (failure) throw *failure;
  if (result.skipped.size() == result.distributions.size())
    throw Ending{Outcome::problem_error, "every distribution was skipped: " + result.distributions.front().reason};
}

}  // namespace kbv::judge
