// kbv-judge: evaluates one (problem, candidate) pair and reports on fd 3. Started by the kbv CLI
// in its own process group, with its job as JSON on stdin (the secret seed never appears on a
// command line). The trusted side of docs/architecture.md: it never imports the candidate; it
// starts the candidate's sandbox (kbv-sandbox) and its own twin before anything else, then owns
// the problem, the inputs, the references, the timing and the verdict.
//   kbv-judge < job.json          evaluate (messages on stdout when fd 3 is not open)
//   kbv-judge --probe < job.json  only describe the job's device
//   kbv-judge --make-torch-pch BUILD_ROOT   precompile torch/extension.h for the builds there
//   kbv-judge --device-gate < job.json      started ahead (kbv run --prestart): start the
//       runners and the interpreters, then wait for one byte on fd 5 before touching the device
//   kbv-judge --serve [--device-gate] < jobs.json   a JSON array of jobs (one problem's
//       candidates), evaluated one after the other by this one process: its interpreter and CUDA
//       context start once, each candidate gets its own sandbox (started while the one before it
//       is evaluated, on a GPU), and a {"event":"job"} message begins each. With --device-gate,
//       one byte on fd 5 before each candidate. A judge that cannot
//       say everything of a candidate is gone (its device work included) ends there: kbv
//       evaluates the rest with a fresh judge.
#include <execinfo.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "core/job.hpp"
#include "core/verdict.hpp"
#include "judge/judgement.hpp"
#include "judge/profile.hpp"
#include "judge/report_channel.hpp"
#include "judge/torch_pch.hpp"
#include "torch_host/python_runtime.hpp"
#include "torch_host/device.hpp"
#include "torch_host/memory.hpp"

namespace {

// Candidates of a --serve batch whose sandboxes start while an earlier one is evaluated.
constexpr std::size_t kStartAhead = 2;

// Diagnosis of a judge stuck in a driver call (its deadlines cannot fire while the main thread
// spins inside CUDA): with KBV_JUDGE_STACKS=DIR, SIGUSR2 writes the native frames of the thread
// that takes it (for `kill -USR2`, the main thread while it runs) to DIR/judge-<pid>.stack;
// bench/probes/illegal_address_stack.sh uses it.
char g_stack_path[512];

void write_native_stack(int) {
  int fd = ::open(g_stack_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return;
  void* frames[64];
  int n = ::backtrace(frames, 64);
  static const char kHead[] = "--- native stack\n";
  (void)!::write(fd, kHead, sizeof kHead - 1);
  ::backtrace_symbols_fd(frames, n, fd);
  ::close(fd);
}

void install_stack_dump() {
  const char* dir = std::getenv("KBV_JUDGE_STACKS");
  if (!dir || !*dir) return;
  std::snprintf(g_stack_path, sizeof g_stack_path, "%s/judge-%d.stack", dir, static_cast<int>(::getpid()));
  void* warm[1];
  ::backtrace(warm, 1);  // loads the unwinder now: not async-signal-safe the first time
  std::signal(SIGUSR2, write_native_stack);
}

// The verdict of a judge that failed before its evaluation could begin: for the first protocol
// only (kbv evaluates the others again with a fresh judge).
void send_internal_error(kbv::judge::ReportChannel& channel, const kbv::WorkerJob& job, const std::string& what) {
  kbv::Verdict verdict;
  verdict.protocol = kbv::job_protocols(job).front();
  verdict.outcome = kbv::Outcome::internal_error;
  verdict.reason = "kbv-judge internal error: " + what;
  channel.verdict(verdict);
  std::fflush(nullptr);
}

// Evaluates one candidate (its runners started) and sends its verdicts. `gate_fd` >= 0: wait for
// the device's turn first. `on_turn` runs once the candidate has its job (the device is its own).
// True: everything of this candidate is gone (its sandbox, its twin, the judge's device work for
// it), so this process may evaluate another.
bool judge_one(kbv::judge::Judgement& judgement, const kbv::WorkerJob& job, kbv::judge::ReportChannel& channel, int gate_fd,
               const std::function<void()>& on_turn) {
  std::vector<kbv::Verdict> verdicts;
  bool finished = false;  // run() returned: it has stopped its sandbox and twin
  try {
    // kbv closed the gate unopened: it is stopping, and no verdict is wanted.
    if (gate_fd >= 0 && !judgement.start_ahead(gate_fd)) {
      judgement.abandon();
      std::_Exit(0);
    }
    judgement.begin_turn();
    on_turn();
    verdicts = judgement.run();
    finished = true;
  } catch (const std::exception& e) {
    kbv::judge::profile::write();
    send_internal_error(channel, job, e.what());
    return false;
  }
  kbv::judge::profile::write();
  for (const auto& verdict : verdicts) channel.verdict(verdict);
  // The device's next turn need not wait for this process's exit (its CUDA context's teardown).
  const bool done = finished && judgement.device_work_done();
  if (done) channel.released();
  std::fflush(nullptr);
  return done;
}

}  // namespace

int main(int argc, char** argv) {
  install_stack_dump();
  // No other process of this uid may read our memory or attach to us (/proc/<pid>/mem, ptrace).
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  // kbv sends SIGUSR1 at a deadline to get Python's stacks (faulthandler takes it over once the
  // interpreter is up); before that it must not kill us early: the group is killed after a grace.
  std::signal(SIGUSR1, SIG_IGN);
  std::signal(SIGPIPE, SIG_IGN);
  // The channel to kbv is whatever it put on fd 3; a copy at a high close-on-exec number, so no
  // process we start inherits it.
  if (argc == 3 && std::string(argv[1]) == "--make-torch-pch") {
    try {
      kbv::torch_host::PythonRuntime python;
      try {
        std::string summary;
        int code = kbv::judge::make_torch_pch(argv[2], &summary);
        std::cout << summary << std::endl;
        std::_Exit(code);
      } catch (const std::exception& e) {  // said while the interpreter is up: a Python error's text needs it
        std::cerr << "kbv-judge: precompiling torch/extension.h failed: " << e.what() << "\n";
        std::_Exit(1);
      }
    } catch (const std::exception& e) {
      std::cerr << "kbv-judge: precompiling torch/extension.h failed: " << e.what() << "\n";
      std::_Exit(1);
    }
  }
  // Before CUDA or Python starts: the judge's working set at large sizes is a few of the
  // problem's tensors, and a fragmented cache must not turn an honest candidate into kbv's error.
  kbv::torch_host::prefer_expandable_segments();
  int channel_fd = ::fcntl(3, F_DUPFD_CLOEXEC, 500);
  if (channel_fd >= 0) ::close(3);
  else channel_fd = ::dup(1);
  std::vector<std::string> options(argv + 1, argv + argc);
  auto has = [&](const char* name) { return std::find(options.begin(), options.end(), name) != options.end(); };
  const bool gated = has("--device-gate");
  const bool serve = has("--serve");
  const bool probe = has("--probe");
  int gate_fd = -1;
  if (gated) {
    gate_fd = ::fcntl(kbv::kDeviceGateFd, F_DUPFD_CLOEXEC, 500);
    if (gate_fd < 0) {
      std::cerr << "kbv-judge: --device-gate without a gate on fd " << kbv::kDeviceGateFd << "\n";
      return 2;
    }
    ::close(kbv::kDeviceGateFd);
  }
  kbv::judge::ReportChannel channel(channel_fd);

  std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, 0);

  if (!serve) {
    kbv::WorkerJob job;
    try {
      job = nlohmann::json::parse(input).get<kbv::WorkerJob>();
    } catch (const std::exception& e) {
      std::cerr << "kbv-judge: cannot parse the job on stdin: " << e.what() << "\n";
      return 2;
    }
    if (probe) {
      try {
        auto device = kbv::torch_host::resolve_device(job.device);
        channel.device(kbv::device_to_json(kbv::torch_host::describe_device(device)));
      } catch (const std::exception& e) {
        std::cerr << "kbv-judge: " << e.what() << "\n";
        std::_Exit(3);
      }
      std::_Exit(0);
    }
    // Never destroyed: leaving without Python's or CUDA's teardown keeps a broken CUDA context
    // or stray threads from turning a finished verdict into a hang (0.3-0.5 s per evaluation).
    auto* life = new kbv::judge::JudgeLife;
    kbv::judge::Judgement* judgement = nullptr;
    try {
      judgement = new kbv::judge::Judgement(job, channel, *life);
      judgement->start_runners();  // before any thread or CUDA context exists: they are forked
    } catch (const std::exception& e) {
      send_internal_error(channel, job, e.what());
      std::_Exit(0);
    }
    judge_one(*judgement, job, channel, gate_fd, [] {});
    std::_Exit(0);
  }

  std::vector<kbv::WorkerJob> jobs;
  try {
    jobs = nlohmann::json::parse(input).get<std::vector<kbv::WorkerJob>>();
  } catch (const std::exception& e) {
    std::cerr << "kbv-judge: cannot parse the jobs (a JSON array) on stdin: " << e.what() << "\n";
    return 2;
  }
  auto* life = new kbv::judge::JudgeLife;  // never destroyed, as above
  // The next candidates', their runners started (null: start it at its turn).
  std::deque<std::unique_ptr<kbv::judge::Judgement>> ahead;
  life->before_exit = [&ahead] {
    for (auto& j : ahead)
      if (j) j->abandon();
  };
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    channel.job(i);
    std::unique_ptr<kbv::judge::Judgement> judgement;
    if (!ahead.empty()) {
      judgement = std::move(ahead.front());
      ahead.pop_front();
    }
    try {
      if (!judgement) {
        judgement = std::make_unique<kbv::judge::Judgement>(jobs[i], channel, *life);
        judgement->start_runners();
      }
    } catch (const std::exception& e) {
      send_internal_error(channel, jobs[i], e.what());
      std::_Exit(0);
    }
    // The next candidates' sandboxes start (their interpreters, `import torch`: no candidate code,
    // no CUDA) while this one is evaluated: on a GPU, or untimed. A CPU timing would share the
    // cores with them, so then each starts at its turn. Two ahead: a sandbox's start (3-5 s) is
    // longer than a warm candidate's turn (~1.5 s at ReLU's default size on an H100). Even two
    // were not always ready with one run per device; the Session runs two (bench/RESULTS.md,
    // session 25).
    auto start_next = [&] {
      if (jobs[i].device.rfind("cuda", 0) != 0 && jobs[i].timing.enabled) return;
      while (ahead.size() < kStartAhead && i + 1 + ahead.size() < jobs.size()) {
        const auto& job = jobs[i + 1 + ahead.size()];
        std::unique_ptr<kbv::judge::Judgement> started;
        try {
          started = std::make_unique<kbv::judge::Judgement>(job, channel, *life);
          started->start_runners(/*ahead=*/true);
        } catch (const std::exception&) {
          started.reset();  // started again, and its failure reported, in its turn
        }
        ahead.push_back(std::move(started));
      }
    };
    // Gated, each candidate waits for its own turn: the device goes to others between them.
    const bool fit = judge_one(*judgement, jobs[i], channel, gate_fd, start_next);
    if (!fit) {
      // Something of this candidate may be left (a process, its device work): no other candidate
      // is evaluated beside it. kbv evaluates the rest with a fresh judge.
      life->before_exit();
      std::fflush(nullptr);
      std::_Exit(0);
    }
  }
  std::fflush(nullptr);
  std::_Exit(0);
}
