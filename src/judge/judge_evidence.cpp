// Figures the verdict takes from the judge's own evidence, never from the sandbox's word
// (docs/checks.md, "Where each verdict field comes from"): whether the candidate's own library is
// loaded (custom_kernel), the device memory its processes hold (the driver's per-process account),
// and whose fault an out-of-memory in the judge is. The sandbox's channel can be relayed and every
// answer on it rewritten by the candidate (examples/attacks/relay_forges_answers.py), so what it
// reports is at most a cross-check, and a disagreement is the informational flag
// sandbox_account_differs.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <set>

#include <cuda_runtime_api.h>

#include "cuda/process_memory.hpp"
#include "isolation/freeze.hpp"
#include "judge/held_memory.hpp"
#include "judge/judgement.hpp"
#include "judge/loaded_libraries.hpp"
#include "torch_host/memory.hpp"

namespace kbv::judge {
namespace {

std::string gib(std::int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / static_cast<double>(std::int64_t{1} << 30));
  return text;
}

// The share rule's evidence: who held what `when` the judge's step failed with `what`.
std::string over_share_evidence(const DeviceHolders& h, const std::string& when, const std::string& what) {
  return "the candidate's processes held " + gib(h.sandbox) + " of the device's " + gib(h.total) + " (the judge " + gib(h.judge) + ") " +
         when + ": " + first_line(what, 300);
}

// Why the sandbox is to blame for the judge's out-of-memory `reason`: over its share of the device,
// or holding more than an honest candidate by at least what the judge lacked.
std::string starvation_evidence(const DeviceHolders& h, const std::optional<HoardEvidence>& hoard, const std::string& when,
                                const std::string& reason) {
  if (sandbox_over_share(h) || !hoard) return over_share_evidence(h, when, reason);
  return "the candidate's processes held " + gib(hoard->held) + " " + when + ", " + gib(hoard->held - hoard->allowance) +
         " more than an honest candidate holds here (" + gib(hoard->allowance) +
         ": twice the reference's weights and forward peak, and 0.50 GiB); with no more than that, the "
         "judge's allocation would have fit" +
         (hoard->shortfall > 0 ? " (it lacked " + gib(hoard->shortfall) + ")" : std::string()) + ": " + first_line(reason, 300);
}

// The recorded failure is the one `error` reports: its size as torch writes it.
bool names_failure(const std::string& error, const std::optional<torch_host::OutOfMemoryMoment>& failure) {
  return failure && error.find("Tried to allocate " + torch_host::allocator_size_text(failure->asked)) != std::string::npos;
}

}  // namespace

bool is_out_of_memory(const std::string& text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* marker : {"out of memory", "outofmemoryerror", "alloc_failed", "memoryallocation", "cudaerrormemoryallocation"})
    if (lower.find(marker) != std::string::npos) return true;
  return false;
}

bool sandbox_over_share(const DeviceHolders& h) { return h.sandbox > std::max(h.judge, h.total / 8); }

std::int64_t hoard_allowance(std::int64_t reference_resident, std::int64_t reference_forward_peak) {
  auto bytes = [](std::int64_t b) { return std::max<std::int64_t>(0, b); };
  return kHonestProcessBytes + 2 * (bytes(reference_resident) + bytes(reference_forward_peak));
}

bool hoard_starved_judge(const HoardEvidence& e) { return e.held - e.allowance >= std::max(e.shortfall, kHoardFloorBytes); }

bool others_crowd_device(const DeviceHolders& h) { return h.others > std::max(h.sandbox, h.total / 8); }

void Judgement::observe_custom_kernel(const BuildResult* build) {
  if (!sandbox_ || verdict_.custom_kernel) return;
  const std::vector<std::string> loaded = libraries_mapped_from(cache_.dir, isolation::sandbox_processes(sandbox_->launched()));
  verdict_.custom_kernel = !loaded.empty();
  // The sandbox's account of what its import built, against the judge's look at its processes
  // right after that import (load_inline builds and loads at once).
  if (build && !build->extensions.empty() && loaded.empty())
    flag(FlagName::sandbox_account_differs,
         "build: the sandbox reported " + std::to_string(build->extensions.size()) + " extension(s) (first '" +
             first_line(build->extensions.front().requested_name, 80) +
             "') but no library in its build-cache entry is loaded in its processes; custom_kernel is false");
}

std::optional<DeviceHolders> Judgement::device_holders() {
  if (!device_.is_cuda() || !sandbox_ || !twin_) return std::nullopt;
  if (!nvml_) {
    std::string error;
    nvml_ = cuda::ProcessMemory::open(device_.index(), &error);
    if (!nvml_) return std::nullopt;
  }
  auto used = nvml_->used();
  if (!used) return std::nullopt;
  DeviceHolders h = holders_in(*used);
  h.total = verdict_.device.memory_bytes;
  if (h.total <= 0) {
    std::size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) h.total = static_cast<std::int64_t>(total_bytes);
    cudaGetLastError();
  }
  return h;
}

DeviceHolders Judgement::holders_in(const std::map<pid_t, std::int64_t>& used, std::set<pid_t>* others) const {
  std::set<pid_t> ours{::getpid()};
  auto sum = [&](const RunnerClient& r, std::set<pid_t>* pids) {
    std::int64_t bytes = 0;
    for (pid_t p : isolation::sandbox_processes(r.launched())) {
      ours.insert(p);
      if (pids) pids->insert(p);
      if (auto it = used.find(p); it != used.end()) bytes += it->second;
    }
    return bytes;
  };
  DeviceHolders h;
  std::set<pid_t> sandbox_pids;
  const std::int64_t twin = sum(*twin_, nullptr);
  std::int64_t sandbox = sum(*sandbox_, &sandbox_pids);
  // Only a process that runs is someone else's: a pid the driver still lists after it ended is
  // nobody's, and a zombie (a child the sandbox never reaps is out of its cgroup's list while a
  // live process keeps its context) is the sandbox's own trick (isolation::process_running). The
  // memory such a child's context still holds is the sandbox's (examples/attacks/hoard_in_zombie.py).
  for (const auto& [pid, bytes] : used) {
    if (ours.count(pid)) continue;
    if (isolation::process_running(pid)) {
      h.others += bytes;
      if (others) others->insert(pid);
    } else if (sandbox_pids.count(isolation::parent_process(pid))) {
      sandbox += bytes;
    }
  }
  // The twin is a bare torch process with a CUDA context: what the sandbox holds above it is the
  // candidate's.
  h.sandbox = std::max<std::int64_t>(0, sandbox - twin);
  if (auto it = used.find(::getpid()); it != used.end()) h.judge = it->second;
  return h;
}

std::optional<Ending> Judgement::starvation_ending(const std::string& what, bool any_failure) {
  if (!any_failure && !is_out_of_memory(what)) return std::nullopt;
  auto h = device_holders();
  if (!h) return std::nullopt;
  if (!sandbox_over_share(*h)) return std::nullopt;
  const std::string evidence = over_share_evidence(*h, "when the judge's step failed", what);
  flag(FlagName::judge_starved, evidence);
  return Ending{Outcome::runtime_error, "judge_starved: " + evidence};
}

std::string Judgement::judge_memory_note(const std::string& error) const {
  const torch_host::AllocatorBytes a = torch_host::allocator_bytes(device_);
  std::int64_t shared = 0;
  std::size_t blocks = retired_slots_.size();
  for (const auto& s : slots_)
    if (s) {
      shared += s->bytes();
      ++blocks;
    }
  for (const auto& s : retired_slots_) shared += s.bytes();
  std::string note;
  // The figures at the failed allocation (once the error is caught, the failing step's tensors are
  // freed and show as free cache), when it is the failure `error` reports: not an earlier one
  // caught and recovered from (torch.compile's autotuning), nor a cudaMalloc outside the allocator.
  const auto at_failure = torch_host::last_out_of_memory();
  if (names_failure(error, at_failure))
    note = "when " + gib(at_failure->asked) + " more was asked for, the judge's tensors held " + gib(at_failure->held.allocated) +
           " and its allocator's free cache " + gib(at_failure->held.reserved - at_failure->held.allocated) +
           (at_failure->cache_layout.empty() ? "" : " (" + at_failure->cache_layout + ")") + "; now ";
  return note + "the judge's tensors " + gib(a.allocated) + ", its allocator's free cache " + gib(a.reserved - a.allocated) +
         ", the candidate's input blocks " + gib(shared) + " in " + std::to_string(blocks);
}

OomBlame oom_blame(Outcome outcome, bool out_of_memory, const std::optional<DeviceHolders>& holders, bool reference_ran,
                   const std::optional<HoardEvidence>& hoard) {
  if (!out_of_memory) return OomBlame::as_it_stands;
  if (outcome != Outcome::problem_error && outcome != Outcome::internal_error && outcome != Outcome::runtime_error)
    return OomBlame::as_it_stands;
  if (outcome != Outcome::runtime_error && holders && sandbox_over_share(*holders)) return OomBlame::candidate;
  // Beside others who crowd the device, a hoard is the cause only when it is the larger.
  if (outcome != Outcome::runtime_error && hoard && hoard_starved_judge(*hoard) &&
      (!holders || !others_crowd_device(*holders) || hoard->held - hoard->allowance >= holders->others))
    return OomBlame::candidate;
  if (holders && others_crowd_device(*holders)) return OomBlame::others;
  if (outcome == Outcome::internal_error || (outcome == Outcome::problem_error && reference_ran)) return OomBlame::judge;
  return OomBlame::as_it_stands;
}

void Judgement::note_holders_at_failure() noexcept {
  try {
    const auto failure = torch_host::last_out_of_memory();
    if (!failure) return;
    if (auto h = device_holders()) holders_at_failure_ = std::make_pair(failure->sequence, *h);
  } catch (...) {
    // No reading: the blame falls back on the holders as they are when the evaluation ends.
  }
}

std::optional<DeviceHolders> Judgement::holders_for(const std::string& error, std::optional<torch_host::OutOfMemoryMoment>* failure) {
  auto last = torch_host::last_out_of_memory();
  // That failure's own reading: not an earlier one's of the same size (a reading can fail).
  if (names_failure(error, last) && holders_at_failure_ && holders_at_failure_->first == last->sequence) {
    *failure = last;
    return holders_at_failure_->second;
  }
  failure->reset();
  return device_holders();
}

std::optional<HoardEvidence> Judgement::hoard_evidence(const DeviceHolders& holders,
                                                       const std::optional<torch_host::OutOfMemoryMoment>& failure) {
  if (!sandbox_) return std::nullopt;
  const std::int64_t peak = std::max(reference_forward_peak_, reference_output_bytes_);
  if (peak <= 0) return std::nullopt;  // nothing to weigh the sandbox's holding against yet
  std::int64_t resident = reference_resident_;
  try {
    if (reference_ && !reference_.is_none()) resident = std::max(resident, held_tensor_bytes({reference_, problem_}, device_).bytes);
  } catch (const std::exception&) {
  }
  HoardEvidence e;
  e.held = holders.sandbox;
  e.allowance = hoard_allowance(resident, peak);
  // The shortfall is known only for the failure the hook read; otherwise (a library's own
  // allocation, a kernel module's load) the floor alone is the bar.
  if (failure) e.shortfall = std::max<std::int64_t>(0, failure->asked - failure->device_free);
  return e;
}

Judgement::StarvationReading Judgement::read_starvation(const std::string& error) {
  StarvationReading r;
  std::optional<torch_host::OutOfMemoryMoment> failure;  // the one `error` reports, read by the hook
  r.holders = holders_for(error, &failure);
  if (r.holders && !sandbox_over_share(*r.holders)) r.hoard = hoard_evidence(*r.holders, failure);
  r.when = failure ? "when the judge's allocation failed" : "when the judge's step had failed";
  return r;
}

std::optional<Ending> Judgement::hoard_ending(const std::string& error) {
  if (!is_out_of_memory(error)) return std::nullopt;
  const StarvationReading r = read_starvation(error);
  if (!r.holders || oom_blame(Outcome::internal_error, true, r.holders, /*reference_ran=*/true, r.hoard) != OomBlame::candidate)
    return std::nullopt;
  const std::string evidence = starvation_evidence(*r.holders, r.hoard, r.when, error);
  flag(FlagName::judge_starved, evidence);
  return Ending{Outcome::runtime_error, "judge_starved: " + evidence};
}

void Judgement::blame_starvation() {
  try {
    if (!is_out_of_memory(verdict_.reason)) return;
    const StarvationReading r = read_starvation(verdict_.reason);
    const std::optional<DeviceHolders>& h = r.holders;
    switch (oom_blame(verdict_.outcome, true, h, reference_ran_, r.hoard)) {
      case OomBlame::as_it_stands:
        return;
      case OomBlame::candidate: {
        const std::string evidence = starvation_evidence(*h, r.hoard, r.when, verdict_.reason);
        flag(FlagName::judge_starved, evidence);
        verdict_.outcome = Outcome::runtime_error;
        verdict_.reason = "judge_starved: " + evidence;
        return;
      }
      case OomBlame::others:
        // Nobody in this evaluation is to blame, and the verdict is to be taken again on a device
        // that has room (internal_error is what kbv run evaluates again).
        verdict_.outcome = Outcome::internal_error;
        verdict_.reason = "the device ran out of memory while processes that are not this evaluation's held " + gib(h->others) +
                          " of its " + gib(h->total) + " (the candidate's " + gib(h->sandbox) + ", the judge " + gib(h->judge) +
                          "): evaluate again on a device with room; " + first_line(verdict_.reason, 300);
        return;
      case OomBlame::judge:
        verdict_.outcome = Outcome::internal_error;
        verdict_.reason = "the device ran out of memory for the judge's own copies at this problem size" +
                          (h ? " (the judge held " + gib(h->judge) + ", the candidate " + gib(h->sandbox) + " of " + gib(h->total) + ")"
                             : std::string()) +
                          (reference_ran_ ? ", after the problem's Model had run at it" : "") +
                          ": evaluate on a device with more memory or at a smaller size; " + judge_memory_note(verdict_.reason) + "; " +
                          first_line(verdict_.reason, 700);
        return;
    }
  } catch (const std::exception&) {
    // The driver could not say: the ending stands as it was.
  }
}

}  // namespace kbv::judge
