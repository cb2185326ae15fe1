#include "scan/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "scan/scan.hpp"

extern char** environ;

namespace kbv::scan::detail {
namespace {

constexpr std::size_t kStderrKept = 2000;  // bytes of a child's stderr quoted in an error
constexpr std::size_t kChunk = 65536;      // bytes moved per read or write

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// A write to a child that died raises SIGPIPE in the writing thread: block it here, for this
// thread only, and consume what was raised, so a dead child becomes an error message.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &previous_);
  }
  ~SigpipeBlocked() {
    timespec zero{0, 0};
    while (sigtimedwait(&pipe_, nullptr, &zero) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  sigset_t pipe_{}, previous_{};
};

struct Child {
  pid_t pid = -1;
  int in = -1, out = -1, err = -1;  // our ends
  std::string_view input;
  std::size_t written = 0;
  std::string stdout_text, stderr_text;
};

void start(Child& c, const std::vector<std::string>& argv) {
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0) throw ScanError(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    throw ScanError(std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int rc = ::posix_spawn(&c.pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  c.in = in[1];
  c.out = out[0];
  c.err = err[0];
  if (rc != 0) {
    c.pid = -1;
    throw ScanError("cannot start '" + argv[0] + "': " + std::strerror(rc));
  }
  // A blocking write of more than the pipe holds would wait for the child to read while the
  // child waits for us to read its answers: write only what fits, read whatever is ready.
  ::fcntl(c.in, F_SETFL, ::fcntl(c.in, F_GETFL) | O_NONBLOCK);
  if (c.input.empty()) close_fd(c.in);
}

// Moves bytes until every child has closed its stdout and stderr.
void pump(std::vector<Child>& children) {
  std::array<char, kChunk> buf{};
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<std::pair<Child*, int>> owner;  // which child, which stream (0 in, 1 out, 2 err)
    for (auto& c : children) {
      if (c.in >= 0) fds.push_back({c.in, POLLOUT, 0}), owner.emplace_back(&c, 0);
      if (c.out >= 0) fds.push_back({c.out, POLLIN, 0}), owner.emplace_back(&c, 1);
      if (c.err >= 0) fds.push_back({c.err, POLLIN, 0}), owner.emplace_back(&c, 2);
    }
    if (fds.empty()) return;
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      throw ScanError(std::string("poll: ") + std::strerror(errno));
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      auto [c, stream] = owner[i];
      if (stream == 0) {
        ssize_t n = ::write(c->in, c->input.data() + c->written,
                            std::min(c->input.size() - c->written, kChunk));
        if (n > 0) c->written += static_cast<std::size_t>(n);
        bool full = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
        if ((n < 0 && !full) || c->written == c->input.size()) close_fd(c->in);
        continue;
      }
      int& fd = stream == 1 ? c->out : c->err;
      ssize_t n = ::read(fd, buf.data(), buf.size());
      if (n > 0)
        (stream == 1 ? c->stdout_text : c->stderr_text)
            .append(buf.data(), static_cast<std::size_t>(n));
      else if (n == 0 || errno != EINTR)
        close_fd(fd);
    }
  }
}

// Waits for every child started; the first failure, if any, as an error message.
std::string reap(std::vector<Child>& children, const std::string& program) {
  std::string failure;
  for (auto& c : children) {
    close_fd(c.in);
    close_fd(c.out);
    close_fd(c.err);
    if (c.pid < 0) continue;
    int status = 0;
    while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
    }
    c.pid = -1;
    if (failure.empty() && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
      std::string tail = c.stderr_text.size() > kStderrKept
                             ? "..." + c.stderr_text.substr(c.stderr_text.size() - kStderrKept)
                             : c.stderr_text;
      failure = "'" + program + "' failed (" +
                (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                   : "killed by a signal") +
                "): " + tail;
    }
  }
  return failure;
}

}  // namespace

std::vector<std::string> run_each_with_stdin(const std::vector<std::string>& argv,
                                             const std::vector<std::string_view>& inputs) {
  SigpipeBlocked sigpipe;
  std::vector<Child> children(inputs.size());
  std::string failure;
  try {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      children[i].input = inputs[i];
      start(children[i], argv);
    }
    pump(children);
  } catch (const ScanError& e) {
    failure = e.what();
  }
  std::string exit_failure = reap(children, argv[0]);
  if (failure.empty()) failure = exit_failure;
  if (!failure.empty()) throw ScanError(failure);
  std::vector<std::string> out;
  out.reserve(children.size());
  for (auto& c : children) out.push_back(std::move(c.stdout_text));
  return out;
}

}  // namespace kbv::scan::detail
