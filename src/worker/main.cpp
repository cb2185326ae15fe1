// kbv-worker: evaluates one (problem, candidate) pair and reports on fd 3. Started by the kbv
// CLI in its own process group, with its job as JSON on stdin (the secret seed never appears on
// the command line). Not meant to be run by hand, but it can be: `kbv-worker < job.json`
// prints the messages on stdout when fd 3 is not open.
#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <string>

#include "core/job.hpp"
#include "core/verdict.hpp"
#include "worker/device.hpp"
#include "worker/evaluation.hpp"
#include "worker/report_channel.hpp"

int main(int argc, char** argv) {
  // kbv sends SIGUSR1 at a deadline to get Python's stacks (faulthandler takes it over once the
  // interpreter is up); before that it must not kill us early: the group is killed after a grace.
  std::signal(SIGUSR1, SIG_IGN);
  // The channel is whatever the CLI put on fd 3; keep our own duplicate out of the candidate's
  // easy reach (fd 3 itself is closed, the copy is close-on-exec at a high number).
  int channel_fd = ::fcntl(3, F_DUPFD_CLOEXEC, 500);
  if (channel_fd >= 0) ::close(3);
  else channel_fd = ::dup(1);
  kbv::worker::ReportChannel channel(channel_fd);

  std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  kbv::WorkerJob job;
  try {
    job = nlohmann::json::parse(input).get<kbv::WorkerJob>();
  } catch (const std::exception& e) {
    std::cerr << "kbv-worker: cannot parse the job on stdin: " << e.what() << "\n";
    return 2;
  }
  // stdin is done; a candidate reading it gets EOF rather than blocking the evaluation.
  int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, 0);

  // --probe: only describe the job's device (kbv run keys stored verdicts by it before it
  // evaluates anything).
  if (argc > 1 && std::string(argv[1]) == "--probe") {
    try {
      auto device = kbv::worker::resolve_device(job.device);
      channel.device(kbv::device_to_json(kbv::worker::describe_device(device)));
    } catch (const std::exception& e) {
      std::cerr << "kbv-worker: " << e.what() << "\n";
      std::_Exit(3);
    }
    std::_Exit(0);
  }

  kbv::Verdict verdict;
  try {
    verdict = kbv::worker::evaluate(job, channel);
  } catch (const std::exception& e) {
    verdict.outcome = kbv::Outcome::crashed;
    verdict.reason = std::string("kbv-worker internal error: ") + e.what();
  }
  channel.verdict(verdict);
  std::fflush(nullptr);
  // Leave without running Python's or CUDA's teardown: a candidate's stray threads or a broken
  // CUDA context must not turn a finished verdict into a hang or a crash.
  std::_Exit(0);
}
