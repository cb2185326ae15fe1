// The call window (call_window.hpp, docs/timing.md): poison between calls, late writes, and a
// wrong output's cause named from what the judge itself saw.
#include "judge/call_window.hpp"

#include <algorithm>
#include <limits>

#include "judge/blockwise.hpp"
#include "judge/integrity.hpp"
#include "judge/judgement.hpp"
#include "torch_host/device.hpp"
#include "torch_host/forward.hpp"

namespace kbv::judge {

void fill_input_poison(at::Tensor& t) {
  if (!t.defined() || t.numel() == 0) return;
  if (t.is_floating_point() || t.is_complex()) t.fill_(std::numeric_limits<double>::quiet_NaN());
  else t.zero_();
}

void fill_output_poison(at::Tensor& t, const at::Tensor& was) {
  if (!t.defined() || t.numel() == 0) return;
  if (t.is_floating_point() || t.is_complex()) {
    t.fill_(std::numeric_limits<double>::quiet_NaN());
  } else if (was.defined() && was.sizes() == t.sizes() && was.scalar_type() == t.scalar_type()) {
    t.copy_(was.bitwise_not());  // bool: logical not
  } else {
    t.bitwise_not_();
  }
}

void copy_on_the_sms(at::Tensor& dst, const at::Tensor& src) {
  if (!dst.is_cuda() || dst.numel() == 0) {
    dst.copy_(src);
    return;
  }
  at::Tensor s = src.to(dst.device(), dst.scalar_type());
  if (dst.scalar_type() == at::kBool) {
    at::logical_and_out(dst, s, s);
  } else if (at::isFloatingType(dst.scalar_type()) || at::isComplexType(dst.scalar_type()) ||
             at::isIntegralType(dst.scalar_type(), /*includeBool=*/false)) {
    at::mul_out(dst, s, at::ones({}, s.options()));  // x * 1 is x exactly (-0, denormals, NaN, inf)
  } else {
    dst.copy_(s);
  }
}

std::string poison_evidence(const std::vector<at::Tensor>& reference, const std::vector<at::Tensor>& output) {
  for (std::size_t i = 0; i < reference.size() && i < output.size(); ++i) {
    const at::Tensor& r = reference[i];
    const at::Tensor& o = output[i];
    if (!r.defined() || !o.defined() || r.sizes() != o.sizes() || !o.is_floating_point() || o.numel() == 0) continue;
    const at::Tensor o_here = o.to(r.device());
    const std::int64_t nan_where_finite = count_blockwise({r, o_here}, [](const std::vector<at::Tensor>& b) {
      at::Tensor nan = at::isnan(b[1]);
      return b[0].is_floating_point() ? nan.logical_and_(at::isfinite(b[0])) : nan;
    });
    if (2 * nan_where_finite > o.numel())
      return "output " + std::to_string(i) + " is NaN in " + std::to_string(nan_where_finite) + " of " + std::to_string(o.numel()) +
             " elements where the reference is finite, and NaN is what the judge leaves in the inputs between calls";
  }
  return "";
}

std::string computed_from_poison(const std::vector<at::Tensor>& reference, const std::vector<at::Tensor>& output,
                                 const std::vector<at::Tensor>& from_poison, double atol, double rtol) {
  for (std::size_t i = 0; i < reference.size() && i < output.size() && i < from_poison.size(); ++i) {
    const at::Tensor& r = reference[i];
    const at::Tensor& o = output[i];
    const at::Tensor& p = from_poison[i];
    if (!r.defined() || !o.defined() || !p.defined() || r.sizes() != o.sizes() || p.sizes() != o.sizes() || o.numel() == 0) continue;
    const auto type = o.is_floating_point() ? o.scalar_type() : at::kDouble;
    const at::Tensor r_here = r.to(o.device()), p_here = p.to(o.device());
    // Block by block, each converted there: whole, these are several copies of an output.
    auto wrong_in = [&](const std::vector<at::Tensor>& b) {
      return at::logical_not(at::isclose(b[1].to(type), b[0].to(type), rtol, atol, /*equal_nan=*/true));
    };
    const std::int64_t n_wrong = count_blockwise({r_here, o, p_here}, wrong_in);
    if (n_wrong == 0) continue;
    const std::int64_t n_same = count_blockwise({r_here, o, p_here}, [&](const std::vector<at::Tensor>& b) {
      const at::Tensor od = b[1].to(type), pd = b[2].to(type);
      return wrong_in(b).logical_and_(at::logical_or(at::eq(od, pd), at::logical_and(at::isnan(od), at::isnan(pd))));
    });
    if (2 * n_same > n_wrong)
      return "output " + std::to_string(i) + " is, in " + std::to_string(n_same) + " of its " + std::to_string(n_wrong) +
             " wrong elements, exactly what the candidate returns for inputs that hold only the poison the judge leaves "
             "in them between calls";
  }
  return "";
}

std::optional<std::string> unjoined_kernels(const ipc::Fields& completed) {
  if (!completed.has("unjoined")) return std::nullopt;
  const nlohmann::json& list = completed.array("unjoined", 64);
  if (list.empty()) return std::nullopt;
  std::string kernels;
  for (const auto& k : list) {
    ipc::Fields f(k, "unjoined kernel");
    const double ms = f.number("ms_after");
    kernels += (kernels.empty() ? "" : "; ") + f.str("kernel", 256) + " on stream " +
               std::to_string(f.integer("stream", 0, UINT32_MAX)) + ", " + std::to_string(ms) + " ms after";
  }
  return "kernels on other streams were still running when the call's stream reached its end (the sandbox's own kernel "
         "trace: " + kernels + "): the call returned without joining them, so a caller on its stream reads the output "
         "unfinished";
}

void Judgement::poison_slot(std::uint32_t slot) {
  if (slot >= slots_.size() || !slots_[slot]) return;
  for (at::Tensor t : slots_[slot]->tensors()) fill_input_poison(t);
  // Finished on the device before anything else happens: the next call is asked for only after.
  torch_host::synchronize(device_);
  if (slot_poisoned_.size() <= slot) slot_poisoned_.resize(slot + 1, false);
  slot_poisoned_[slot] = true;
}

void Judgement::ready_slot(std::uint32_t slot, const ArgList& inputs) {
  bind_if_needed(slot, inputs);
  if (slot >= slot_poisoned_.size() || !slot_poisoned_[slot]) poison_slot(slot);
}

void Judgement::close_call(std::uint32_t slot, const ArgList& pristine, CallOutputs& out, CallMode mode) {
  // Read again now that the sandbox's work is over and the judge's stream has synchronised:
  // anything that differs from the snapshot taken at the window's end was written after it. The
  // outputs themselves are read, block by block, not a second copy of them (blockwise.hpp).
  if (mode == CallMode::in_window && !out.views.empty() && !out.snapshot.empty()) out.late_writes = find_late_writes(out.snapshot, out.views);
  if (strict()) out.input_mutation = find_input_mutation(pristine, slot_inputs(slot));
  if (device_.is_cuda()) {
    for (std::size_t i = 0; i < out.views.size(); ++i) {
      if (i < out.aliased_inputs.size() && out.aliased_inputs[i] >= 0) continue;  // input memory: poisoned below
      at::Tensor v = out.views[i];
      try {
        fill_output_poison(v, i < out.snapshot.size() ? out.snapshot[i] : at::Tensor());
      } catch (const c10::Error&) {
        // An integer view whose elements overlap (an expanded output) cannot be copied into
        // element-wise; its memory is the sandbox's, so nothing beyond the view is touched.
      }
    }
  }
  poison_slot(slot);
}

std::optional<std::string> Judgement::explain_wrong_output(std::uint32_t slot, const ArgList& inputs, const ArgList& decoy,
                                                           const std::vector<at::Tensor>& ref, const std::vector<at::Tensor>& ref_tf32,
                                                           const std::vector<at::Tensor>& wrong, const Tolerance& tol) {
  // Named only where the wrong output was computed from the poison: NaN where the reference is
  // finite, in most of an output, or, for a kernel that turns NaN into numbers, what it returns
  // for inputs of nothing but poison. A kernel that is merely flaky, or wrong on some draws, is
  // not called a stream race because a second try happened to be right.
  std::string nan_note;
  try {
    nan_note = poison_evidence(ref, wrong);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (nan_note.empty()) {
    try {
      ArgList poisoned = torch_host::clone_args(inputs);
      for (auto& a : poisoned)
        if (a.is_tensor) fill_input_poison(a.tensor);
      const CallOutputs p = call_candidate(slot, poisoned, "inputs that hold only the poison", CallMode::settled);
      nan_note = computed_from_poison(ref, wrong, p.snapshot, tol.atol, tol.rtol);
    } catch (...) {
      sandbox_unfit_ = true;  // the wrong output stands, whatever ended this call; the sandbox may be mid-call now
      return std::nullopt;
    }
  }
  if (nan_note.empty()) return std::nullopt;
  // First a settled call on other inputs of the same kind: whatever it leaves in memory the
  // candidate never wrote (a dropped temporary the allocator hands back as the next output) is of
  // those inputs, so the call that follows cannot be right by reading what an earlier call on
  // these same inputs left behind.
  CallOutputs again;
  try {
    call_candidate(slot, decoy, "other inputs, already on the device", CallMode::settled);
    again = call_candidate(slot, inputs, "the same inputs, already on the device", CallMode::settled);
  } catch (...) {
    // Whatever these calls did (an ending of their own, or outputs that broke the judge's
    // reading of them), the wrong output stands; the sandbox may be mid-call now.
    sandbox_unfit_ = true;
    return std::nullopt;
  }
  try {
    if (!judge_outputs(inputs, ref, ref_tf32, again.snapshot, tol).ok) return std::nullopt;  // wrong however it is called
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return "the output was wrong when the call's inputs reached the device on the caller's stream just before the call's "
         "work could start (" + nan_note + "), and right when the same inputs were on the device before the call was made: "
         "its work does not wait for the stream it was called on (a stream that never waits for the current one, or a copy "
         "or graph replayed on one), so it ran before its inputs were there";
}

namespace {

// In 128 bits, saturated: a claimed element count may be anything up to 2^63 (a stride-0 view),
// and a product or sum that wrapped around would pass any bound.
std::int64_t dense_bytes(const std::vector<at::Tensor>& outputs) {
  __int128 bytes = 0;
  for (const auto& t : outputs)
    if (t.defined()) bytes += static_cast<__int128>(t.numel()) * static_cast<__int128>(t.element_size());
  return bytes > std::numeric_limits<std::int64_t>::max() ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(bytes);
}

// Beyond the reference's bytes: a scalar for a one-element tensor and the like cost nothing.
constexpr std::int64_t kOutputBytesSlack = std::int64_t{1} << 20;

}  // namespace

void Judgement::note_reference_outputs(const std::vector<at::Tensor>& outputs) {
  reference_output_bytes_ = std::max(reference_output_bytes_, dense_bytes(outputs));
}

void Judgement::refuse_oversized_outputs(const std::vector<at::Tensor>& views, const std::string& what) const {
  if (!reference_ran_) return;  // nothing to bound them by yet (no call comes before the first reference)
  const std::int64_t bytes = dense_bytes(views);
  if (bytes > reference_output_bytes_ + kOutputBytesSlack)
    throw Ending{Outcome::incorrect, what + ": the outputs hold " + std::to_string(bytes) + " bytes of elements, the reference's at most " +
                                         std::to_string(reference_output_bytes_) + ": not the reference's shapes"};
}

void Judgement::end_unsynchronized(const std::string& evidence) {
  flag(FlagName::unsynchronized_work, evidence);
  throw Ending{Outcome::incorrect, "unsynchronized_work: " + evidence};
}

}  // namespace kbv::judge
