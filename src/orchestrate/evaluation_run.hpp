#pragma once
// Runs one evaluation (one candidate, one or more protocols) in a kbv-judge child process and
// returns its verdicts: the judge's own, or one that says how the judge ended (timeout in which
// stage, signal, early exit) with the tail of what it printed. Torch-free: this is the CLI's side
// of the judge protocol.
#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/job.hpp"
#include "core/verdict.hpp"

namespace kbv {

struct EvaluationLimits {
  double compile_timeout_seconds = defaults::kCompileTimeoutSeconds;  // the "build" stage: importing the candidate, its builds
  double run_timeout_seconds = defaults::kRunTimeoutSeconds;  // every other stage together
};

struct EvaluationRun {
  WorkerJob job;
  std::string worker_path;               // the kbv-worker executable
  EvaluationLimits limits;
  std::vector<std::string> argv;         // kbv's own command line, for provenance
  const std::atomic<bool>* cancel = nullptr;  // Ctrl-C: kills the worker; the verdict says crashed
  // The device as probed beforehand (kbv run): a verdict for a worker that died before saying
  // what it ran on still carries it, so the store's key finds it on a re-run.
  std::optional<DeviceInfo> device;
  // Started ahead (kbv run --prestart): the read end of the device's gate (DeviceTurns), and how
  // many evaluations may run before this one's turn (its backstop allows for them). -1: none.
  int device_gate_fd = -1;
  int turns_ahead = 0;
  // When the gate opened (DeviceTurns::Turn::opened_at): start-up after it was on the device's path.
  std::function<std::optional<std::chrono::steady_clock::time_point>()> gate_opened_at;
  // The judge said the device is free (its sandbox and twin have ended, its verdicts are sent):
  // kbv run ends its device turn here rather than at the judge's exit.
  std::function<void()> on_released;
  // > 0: the judge's niceness (and its sandbox's, its compilers'): a build beside an evaluation.
  int nice = 0;
  bool background = false;  // idle scheduling class, first for the OOM killer (ProcessSpec)
  // Out, when set: CPU seconds of the judge's process tree (its sandboxes and their compilers).
  double* cpu_seconds = nullptr;
};

// The judge's verdicts for the job's protocols (job_protocols), in the order it sent them. A judge
// that ended without a verdict for the protocol it was in gets one saying how it ended; protocols
// it never began (it stopped early: a sandbox unfit to serve the next one, or its own failure)
// are left out, for the caller to evaluate with a fresh judge.
std::vector<Verdict> run_evaluations(const EvaluationRun& run);
// A judge kept warm for several jobs (kbv-judge --serve), one after the other: its interpreter
// and CUDA context start once, each candidate still gets a sandbox of its own. The settings
// (worker, gate, cancel, nice) are the first run's; with a gate the judge waits for it before each
// job, and each run's on_released is called when its job's device work is done.
// Per job, in order: its verdicts as run_evaluations gives them, or none for a job the judge never
// began (it ended before, e.g. after a candidate it could not say was wholly gone): evaluate
// those again with a fresh judge.
// `on_job_done(i, verdicts)` as soon as job i's verdicts are known (the judge went on, or ended).
using JobDone = std::function<void(std::size_t index, const std::vector<Verdict>& verdicts)>;
std::vector<std::vector<Verdict>> run_evaluation_batch(const std::vector<EvaluationRun>& runs, const JobDone& on_job_done = {});
// A job of one protocol: always its verdict.
Verdict run_evaluation(const EvaluationRun& run);

// The kbv-worker next to the running executable (or $KBV_WORKER). Throws UsageError if none.
std::string find_worker_executable();

}  // namespace kbv
