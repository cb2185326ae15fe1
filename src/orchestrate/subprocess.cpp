// fork + exec of an untrusted child with merged, bounded output, an fd-3 message channel and a
// movable deadline. Everything the child does becomes a field of ProcessResult; only a failure
// to start it throws.
#include "orchestrate/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <system_error>
#include <utility>

namespace kbv {
namespace {

// How long to keep reading the pipes once the group is dead or killed: the pipe buffers are
// read at once; this bound only matters when a writer escaped the group and holds a pipe open.
constexpr auto drain_limit = std::chrono::milliseconds(200);
// Without a pidfd, the child's exit is noticed by polling at this period.
constexpr int exit_poll_ms = 10;
// How often a cancellable run looks at its cancel flag.
constexpr int cancel_poll_ms = 100;
constexpr std::size_t read_chunk = 64 * 1024;
// Reads per fd per loop turn, so a flooding child cannot starve the deadline check.
constexpr int reads_per_turn = 16;

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~UniqueFd() { reset(); }
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);  // close() is never retried on EINTR on Linux: the fd is gone
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

struct Pipe {
  UniqueFd read_end, write_end;
};

Pipe make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe2");
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

void set_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
    throw std::system_error(errno, std::generic_category(), "fcntl O_NONBLOCK");
}

// What the child sends back through the CLOEXEC pipe when it cannot reach exec.
struct StartError {
  int stage;  // 0: exec, 1: chdir, 2: fd setup
  int error;  // errno
};

// Everything the child needs, prepared before fork: after fork in a threaded parent only
// async-signal-safe calls are allowed, so no allocation happens in the child.
struct ExecPlan {
  std::vector<std::string> candidates;  // argv[0] with each PATH entry, as execvp would try
  std::vector<std::string> env_strings;
  std::vector<char*> argv, envp, candidate_ptrs;
};

ExecPlan make_exec_plan(const ProcessSpec& spec) {
  ExecPlan plan;
  const std::string& prog = spec.argv[0];
  if (prog.find('/') != std::string::npos) {
    plan.candidates.push_back(prog);
  } else {
    std::string path;
    if (auto it = spec.env_set.find("PATH"); it != spec.env_set.end()) {
      path = it->second;
    } else if (const char* p = std::getenv("PATH")) {
      path = p;
    } else {
      path = "/bin:/usr/bin";  // glibc's execvp default
    }
    std::size_t start = 0;
    while (true) {
      std::size_t colon = path.find(':', start);
      std::string dir = path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      plan.candidates.push_back(dir.empty() ? prog : dir + "/" + prog);  // empty entry: cwd
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  for (const char* const* e = environ; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    std::string name = eq ? std::string(*e, eq) : std::string(*e);
    if (!spec.env_set.count(name)) plan.env_strings.emplace_back(*e);
  }
  for (const auto& [name, value] : spec.env_set) plan.env_strings.push_back(name + "=" + value);

  for (const auto& a : spec.argv) plan.argv.push_back(const_cast<char*>(a.c_str()));
  plan.argv.push_back(nullptr);
  for (auto& e : plan.env_strings) plan.envp.push_back(e.data());
  plan.envp.push_back(nullptr);
  for (auto& c : plan.candidates) plan.candidate_ptrs.push_back(c.data());
  plan.candidate_ptrs.push_back(nullptr);
  return plan;
}

[[noreturn]] void child_fail(int report_fd, int stage, int error) {
  StartError e{stage, error};
  ssize_t n;
  do n = ::write(report_fd, &e, sizeof e);
  while (n < 0 && errno == EINTR);
  ::_exit(127);
}

void close_from(int first) {
  if (::close_range(static_cast<unsigned>(first), ~0U, 0) == 0) return;
  // Kernels before 5.9: close one by one up to the descriptor limit.
  rlimit lim{};
  long max_fd = ::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY
                    ? static_cast<long>(lim.rlim_cur)
                    : 65536;
  for (long fd = first; fd < max_fd; ++fd) ::close(static_cast<int>(fd));
}

// Runs in the forked child; only async-signal-safe calls from here to exec.
[[noreturn]] void child_main(const ExecPlan& plan, const ProcessSpec& spec, pid_t parent, int in_r,
                             int out_w, int msg_w, int report_w) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);  // the parent died before prctl took effect

  // Ignored signals survive exec (kbv's own SIGPIPE choice must not leak into the candidate);
  // handlers do not, but reset them too so none runs before exec. The parent blocked every
  // signal around fork; unblock only after the reset.
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);  // EINVAL for glibc-internal ones is fine
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);

  // Lift every source fd above the targets first: a pipe may have been created on fd 0-4 if
  // the parent had them closed, and dup2 onto it would clobber it.
  int in = ::fcntl(in_r, F_DUPFD_CLOEXEC, 10);
  int out = ::fcntl(out_w, F_DUPFD_CLOEXEC, 10);
  int msg = ::fcntl(msg_w, F_DUPFD_CLOEXEC, 10);
  int report = ::fcntl(report_w, F_DUPFD_CLOEXEC, 10);
  int fd5 = spec.fd5 >= 0 ? ::fcntl(spec.fd5, F_DUPFD_CLOEXEC, 10) : -1;
  if (report < 0) ::_exit(127);
  if (in < 0 || out < 0 || msg < 0 || (spec.fd5 >= 0 && fd5 < 0)) child_fail(report, 2, errno);
  // dup2 clears CLOEXEC on 0-3 (and 5); the report pipe goes to 4 and keeps it, so exec closes it.
  if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(out, 2) < 0 || ::dup2(msg, 3) < 0 ||
      ::dup3(report, 4, O_CLOEXEC) < 0 || (fd5 >= 0 && ::dup2(fd5, 5) < 0))
    child_fail(report, 2, errno);
  close_from(fd5 >= 0 ? 6 : 5);
  report = 4;

  if (spec.working_dir && ::chdir(spec.working_dir->c_str()) != 0) child_fail(report, 1, errno);
  if (spec.nice > 0) (void)::nice(spec.nice);  // failing it only loses the courtesy
  if (spec.background) {
    sched_param none{};
    (void)::sched_setscheduler(0, SCHED_IDLE, &none);
    int oom = ::open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (oom >= 0) {
      (void)!::write(oom, "1000", 4);
      ::close(oom);
    }
  }

  // execvp's search, over candidates resolved in the parent: skip the "not here" errors,
  // report EACCES if any candidate had it, else the last error. Unlike execvp, ENOEXEC (a
  // script without #!) is an error, not a retry through /bin/sh.
  int error = ENOENT;
  bool saw_eacces = false;
  for (char* const* c = plan.candidate_ptrs.data(); *c; ++c) {
    ::execve(*c, plan.argv.data(), plan.envp.data());
    error = errno;
    if (error == EACCES) {
      saw_eacces = true;
    } else if (error != ENOENT && error != ENOTDIR && error != ELOOP && error != ENAMETOOLONG &&
               error != ESTALE && error != ENODEV && error != ETIMEDOUT) {
      break;
    }
  }
  child_fail(report, 0, saw_eacces && (error == ENOENT || error == ENOTDIR) ? EACCES : error);
}

// Writes to the child's stdin without letting SIGPIPE end kbv: SIGPIPE is blocked in this
// thread for the write and the one it raised is consumed, so the process-wide disposition (which
// other code may rely on) is never touched. Returns write()'s result and errno.
ssize_t write_no_sigpipe(int fd, const char* data, std::size_t size) {
  sigset_t pipe_set, old_mask, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
  sigemptyset(&pending);
  ::sigpending(&pending);
  bool was_pending = sigismember(&pending, SIGPIPE) == 1;

  ssize_t n;
  do n = ::write(fd, data, size);
  while (n < 0 && errno == EINTR);
  int saved = errno;

  if (n < 0 && saved == EPIPE && !was_pending) {
    timespec zero{};
    while (::sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  errno = saved;
  return n;
}


// Splits the fd-3 stream into lines; a line over `max_bytes` keeps its first `max_bytes`.
class MessageSplitter {
 public:
  explicit MessageSplitter(std::size_t max_bytes) : max_(max_bytes) {}

  template <typename Deliver>
  void add(const char* data, std::size_t size, Deliver&& deliver) {
    while (size > 0) {
      const char* nl = static_cast<const char*>(std::memchr(data, '\n', size));
      std::size_t piece = nl ? static_cast<std::size_t>(nl - data) : size;
      append(data, piece);
      if (!nl) return;
      deliver(line_);
      line_.clear();
      data += piece + 1;
      size -= piece + 1;
    }
  }

  // A last line without a newline still counts: a child that dies mid-message has said it.
  template <typename Deliver>
  void finish(Deliver&& deliver) {
    if (!line_.empty()) deliver(line_);
    line_.clear();
  }

  bool truncated() const { return truncated_; }

 private:
  void append(const char* data, std::size_t size) {
    std::size_t room = max_ - std::min(max_, line_.size());
    if (size > room) truncated_ = true;
    line_.append(data, std::min(size, room));
  }

  std::size_t max_;
  std::string line_;
  bool truncated_ = false;
};

// Kills and reaps the child if run_process leaves early (e.g. on_message threw), so no
// process outlives the call.
struct ChildGuard {
  pid_t pid = -1;
  bool reaped = false;
  ~ChildGuard() {
    if (pid <= 0 || reaped) return;
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
};

// True once the child has exited; WNOWAIT leaves it a zombie so its pid (and thus the
// process-group id) cannot be reused before we kill the group.
bool child_has_exited(pid_t pid) {
  siginfo_t info{};
  int rc;
  do rc = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
  while (rc < 0 && errno == EINTR);
  return rc == 0 && info.si_pid == pid;
}

int poll_timeout_ms(Clock::time_point now, Clock::time_point until) {
  if (now >= until) return 0;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(until - now).count();
  return static_cast<int>(std::min<long long>(ms, INT_MAX));
}

std::string start_error_text(const ProcessSpec& spec, const StartError& e) {
  std::string what = "cannot start '" + spec.argv[0] + "'";
  if (e.stage == 1) what += " in working directory '" + spec.working_dir.value_or("") + "'";
  if (e.stage == 2) what += " (setting up its file descriptors)";
  return what;
}

}  // namespace

void OutputKeeper::add(const char* data, std::size_t size) {
  total_ += size;
  std::size_t to_head = std::min(size, head_cap_ - head_.size());
  head_.append(data, to_head);
  data += to_head;
  size -= to_head;
  if (size == 0 || tail_cap_ == 0) return;
  if (size >= tail_cap_) {
    tail_.assign(data + size - tail_cap_, tail_cap_);
    return;
  }
  tail_.append(data, size);
  // Trim only when the slack doubles the cap: amortised O(1) per byte.
  if (tail_.size() > 2 * tail_cap_) tail_.erase(0, tail_.size() - tail_cap_);
}

void OutputKeeper::finish(ProcessResult& r) {
  if (tail_.size() > tail_cap_) tail_.erase(0, tail_.size() - tail_cap_);
  r.output_head = std::move(head_);
  r.output_tail = std::move(tail_);
  r.output_bytes = total_;
}


std::string ProcessResult::describe() const {
  char buf[96];
  if (timed_out) {
    std::snprintf(buf, sizeof buf, "timed out after %.1f s", wall_seconds);
  } else if (exited) {
    std::snprintf(buf, sizeof buf, "exited with code %d", exit_code);
  } else if (term_signal != 0) {
    const char* abbrev = ::sigabbrev_np(term_signal);
    if (abbrev)
      std::snprintf(buf, sizeof buf, "killed by signal %d (SIG%s)", term_signal, abbrev);
    else
      std::snprintf(buf, sizeof buf, "killed by signal %d", term_signal);
  } else {
    return "did not run";
  }
  return buf;
}

ProcessResult run_process(const ProcessSpec& spec, Clock::time_point deadline,
                          const MessageHandler& on_message) {
  if (spec.argv.empty() || spec.argv[0].empty())
    throw std::system_error(EINVAL, std::generic_category(), "run_process: empty argv");

  ExecPlan plan = make_exec_plan(spec);
  Pipe in = make_pipe(), out = make_pipe(), msg = make_pipe(), report = make_pipe();
  // A bigger output pipe means fewer wake-ups under a flood; the kernel may refuse, that's fine.
  ::fcntl(out.write_end.get(), F_SETPIPE_SZ, 1 << 20);

  const auto start = Clock::now();
  const pid_t parent = ::getpid();

  // Block every signal across fork so no handler of ours runs in the child before it resets
  // dispositions.
  sigset_t all, old_mask;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old_mask);
  pid_t pid = ::fork();
  if (pid == 0)
    child_main(plan, spec, parent, in.read_end.get(), out.write_end.get(), msg.write_end.get(),
               report.write_end.get());
  int fork_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  if (pid < 0) throw std::system_error(fork_errno, std::generic_category(), "fork");

  ChildGuard guard{pid};
  ::setpgid(pid, pid);  // also from this side, so the group exists whichever runs first

  in.read_end.reset();
  out.write_end.reset();
  msg.write_end.reset();
  report.write_end.reset();

  // EOF here means exec succeeded (the CLOEXEC pipe closed); a StartError means it did not.
  StartError start_error{};
  std::size_t got = 0;
  while (got < sizeof start_error) {
    ssize_t n = ::read(report.read_end.get(), reinterpret_cast<char*>(&start_error) + got,
                       sizeof start_error - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  report.read_end.reset();
  if (got == sizeof start_error) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    guard.reaped = true;
    throw std::system_error(start_error.error, std::generic_category(), start_error_text(spec, start_error));
  }

  UniqueFd stdin_w = std::move(in.write_end);
  UniqueFd out_r = std::move(out.read_end);
  UniqueFd msg_r = std::move(msg.read_end);
  set_nonblocking(out_r.get());
  set_nonblocking(msg_r.get());
  std::size_t stdin_pos = 0;
  if (spec.stdin_data.empty()) stdin_w.reset();
  else set_nonblocking(stdin_w.get());

  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));  // -1 on old kernels: poll

  ProcessResult result;
  OutputKeeper output(spec.keep_head_bytes, spec.keep_tail_bytes);
  MessageSplitter messages(spec.max_message_bytes);
  bool running = true;  // until the child exited or we killed the group
  Clock::time_point drain_until{};

  auto deliver = [&](const std::string& line) {
    // Once timed out (e.g. in the grace after timeout_signal) the child's messages are late:
    // the caller never sees them, so it judges the child by what it said in time.
    if (!on_message || result.timed_out) return;
    auto next = on_message(line);
    if (next && running) deadline = *next;  // after the end, a new deadline means nothing
  };

  // Reads what is there now (bounded); closes the fd at EOF or on error.
  std::array<char, read_chunk> buf;
  auto drain_fd = [&](UniqueFd& fd, bool is_output) {
    for (int i = 0; i < reads_per_turn; ++i) {
      ssize_t n = ::read(fd.get(), buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      if (n <= 0) {
        fd.reset();
        return;
      }
      if (is_output) {
        output.add(buf.data(), static_cast<std::size_t>(n));
        if (spec.on_output) spec.on_output(buf.data(), static_cast<std::size_t>(n));
      }
      else messages.add(buf.data(), static_cast<std::size_t>(n), deliver);
    }
  };

  auto end_group = [&] {
    ::kill(-pid, SIGKILL);  // the whole group, so no grandchild keeps the pipes or survives
    ::kill(pid, SIGKILL);   // and the child itself, should it not lead its group after all
    running = false;
    stdin_w.reset();
    drain_until = Clock::now() + drain_limit;
  };

  while (true) {
    auto now = Clock::now();
    if (!running && ((!out_r.valid() && !msg_r.valid()) || now >= drain_until)) break;

    std::array<pollfd, 4> fds{};
    nfds_t nfds = 0;
    int in_idx = -1, out_idx = -1, msg_idx = -1;
    if (stdin_w.valid()) {
      in_idx = static_cast<int>(nfds);
      fds[nfds++] = {stdin_w.get(), POLLOUT, 0};
    }
    if (out_r.valid()) {
      out_idx = static_cast<int>(nfds);
      fds[nfds++] = {out_r.get(), POLLIN, 0};
    }
    if (msg_r.valid()) {
      msg_idx = static_cast<int>(nfds);
      fds[nfds++] = {msg_r.get(), POLLIN, 0};
    }
    int timeout;
    if (running) {
      if (pidfd.valid()) fds[nfds++] = {pidfd.get(), POLLIN, 0};
      timeout = poll_timeout_ms(now, deadline);
      if (!pidfd.valid()) timeout = std::min(timeout, exit_poll_ms);
      if (spec.cancel) timeout = std::min(timeout, cancel_poll_ms);
    } else {
      timeout = poll_timeout_ms(now, drain_until);
    }

    int ready = ::poll(fds.data(), nfds, timeout);
    if (ready < 0 && errno != EINTR) {  // ENOMEM only: give up on the child rather than spin
      if (running) end_group();
      break;
    }
    if (ready > 0) {
      if (in_idx >= 0 && fds[in_idx].revents) {
        ssize_t n = write_no_sigpipe(stdin_w.get(), spec.stdin_data.data() + stdin_pos,
                                     spec.stdin_data.size() - stdin_pos);
        if (n > 0) stdin_pos += static_cast<std::size_t>(n);
        // EPIPE: the child closed stdin and does not want the rest; that is its business.
        if ((n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) || stdin_pos == spec.stdin_data.size())
          stdin_w.reset();
      }
      if (out_idx >= 0 && fds[out_idx].revents) drain_fd(out_r, true);
      if (msg_idx >= 0 && fds[msg_idx].revents) drain_fd(msg_r, false);
    }

    if (running) {
      if (child_has_exited(pid)) {
        end_group();
      } else if (Clock::now() >= deadline) {
        const bool first_deadline = !result.timed_out;
        result.timed_out = true;
        if (spec.timeout_signal != 0 && first_deadline) {
          // Late but alive: ask it to say where it is stuck, then kill it after the grace.
          ::kill(pid, spec.timeout_signal);
          deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(spec.timeout_grace_seconds));
        } else {
          end_group();
        }
      } else if (spec.cancel && spec.cancel->load()) {
        result.cancelled = true;
        end_group();
      }
    }
  }
  messages.finish(deliver);

  int status = 0;
  pid_t waited;
  struct rusage usage {};
  do waited = ::wait4(pid, &status, 0, &usage);
  while (waited < 0 && errno == EINTR);
  guard.reaped = true;
  result.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (waited == pid) {
    auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
    result.cpu_seconds = seconds(usage.ru_utime) + seconds(usage.ru_stime);
  }

  if (waited == pid && WIFEXITED(status)) {
    result.exited = true;
    result.exit_code = WEXITSTATUS(status);
  } else if (waited == pid && WIFSIGNALED(status)) {
    result.term_signal = WTERMSIG(status);
  }
  output.finish(result);
  result.message_truncated = messages.truncated();
  return result;
}

}  // namespace kbv
