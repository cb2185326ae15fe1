#pragma once
// A child process that may misbehave: it runs in its own process group (so a kill reaches every
// process it started), its stdout and stderr are merged into one pipe of which only the head and
// tail are kept (a candidate may print gigabytes), and it reports progress as JSON lines on a
// third pipe (fd 3 in the child). Deadlines can change while it runs: each message may move the
// deadline (e.g. from the compile limit to the run limit).
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kbv {

struct ProcessSpec {
  std::vector<std::string> argv;                  // argv[0] is resolved through PATH if relative
  std::string stdin_data;                         // written to the child's stdin, then closed
  std::map<std::string, std::string> env_set;     // added to / replacing the parent's environment
  std::optional<std::string> working_dir;
  std::size_t keep_head_bytes = 4 * 1024;         // of merged stdout+stderr
  std::size_t keep_tail_bytes = 32 * 1024;
  std::size_t max_message_bytes = 64 * 1024 * 1024;  // a longer fd-3 line is cut and flagged
  // When set and it becomes true (e.g. on Ctrl-C), the group is killed within ~100 ms and the
  // result says cancelled.
  const std::atomic<bool>* cancel = nullptr;
  // When the deadline passes, first send this signal to the child alone (e.g. SIGUSR1 for a
  // worker that dumps its stacks on it) and give it timeout_grace_seconds to print, then kill the
  // group. 0: kill at once. Messages from the child after its deadline are not delivered.
  int timeout_signal = 0;
  double timeout_grace_seconds = 2.0;
  // When >= 0, the child gets a copy of this descriptor as fd 5 (kbv-judge's device gate); the
  // caller keeps and closes its own.
  int fd5 = -1;
  // > 0: the child (and all it starts) runs this much nicer than kbv: builds that share the cores with
  // an evaluation (kbv run --overlap-builds) yield to it.
  int nice = 0;
  // The child (and all it starts) runs in the idle scheduling class (a core only when nothing
  // else wants it; it cannot leave the class unprivileged) and is the OOM killer's first pick.
  bool background = false;
  // Also called with each piece of merged stdout+stderr as it is read (ProcessResult keeps the
  // whole stream's head and tail): a caller that splits the stream (one judge, several jobs).
  std::function<void(const char* data, std::size_t size)> on_output;
};

using Clock = std::chrono::steady_clock;

struct ProcessResult {
  bool exited = false;       // exited normally (then exit_code is valid)
  int exit_code = -1;
  int term_signal = 0;       // the signal that ended it, when !exited
  bool timed_out = false;    // kbv killed the group because a deadline passed
  bool cancelled = false;    // kbv killed the group because spec.cancel became true
  double wall_seconds = 0;
  // User + system CPU of the child and of every descendant reaped under it (a judge reaps its
  // sandboxes, they their compilers): what the whole process tree cost.
  double cpu_seconds = 0;
  std::string output_head;   // first keep_head_bytes of stdout+stderr
  std::string output_tail;   // last keep_tail_bytes of what follows the head (no overlap: head +
                             // tail is all of it when output_bytes <= keep_head + keep_tail)
  std::size_t output_bytes = 0;  // total printed, including what was dropped
  bool message_truncated = false;
  std::string describe() const;  // "exited with code 3", "killed by signal 11 (SIGSEGV)",
                                 // "timed out after 0.5 s"
};

// Keeps the first `head_cap` bytes and the last `tail_cap` bytes of what follows them, in
// O(head_cap + tail_cap + one read) memory however much the child prints.
class OutputKeeper {
 public:
  OutputKeeper(std::size_t head_cap, std::size_t tail_cap) : head_cap_(head_cap), tail_cap_(tail_cap) {}
  void add(const char* data, std::size_t size);
  // Into r's output_head, output_tail and output_bytes.
  void finish(ProcessResult& r);

 private:
  std::size_t head_cap_, tail_cap_;
  std::string head_, tail_;
  std::size_t total_ = 0;
};

// Called with each complete fd-3 line (without the newline), in order; a last line without a
// newline is delivered when the pipe closes. Return a new deadline to replace the current one,
// or std::nullopt to keep it (ignored once the child has exited or timed out).
using MessageHandler = std::function<std::optional<Clock::time_point>(const std::string& line)>;

// Runs the child to completion or until the deadline, then kills its whole process group with
// SIGKILL and reaps it; the group is also killed when the direct child exits, so background
// grandchildren do not survive it (one that leaves the group with setsid/setpgid escapes). Never
// throws for anything the child does; throws std::system_error only when the child cannot be
// started (fork/pipe failure, argv[0] not executable, working_dir missing).
// The child gets PR_SET_PDEATHSIG(SIGKILL) so it dies if kbv dies (strictly: if the calling
// thread dies, which cannot happen while it waits in this call).
ProcessResult run_process(const ProcessSpec& spec, Clock::time_point deadline,
                          const MessageHandler& on_message = {});

}  // namespace kbv
