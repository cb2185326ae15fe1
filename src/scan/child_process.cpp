#include "scan/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
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

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fd, O_CLOEXEC) != 0) throw ScanError(std::string("pipe: ") + std::strerror(errno));
  }
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  void close(int i) {
    if (fd[i] >= 0) ::close(fd[i]);
    fd[i] = -1;
  }
};

constexpr std::size_t kStderrKept = 2000;  // bytes of the child's stderr quoted in an error

}  // namespace

std::string run_with_stdin(const std::vector<std::string>& argv, std::string_view input) {
  Pipe in, out, err;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.fd[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out.fd[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err.fd[1], 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw ScanError("cannot start '" + argv[0] + "': " + std::strerror(rc));
  in.close(0);
  out.close(1);
  err.close(1);
  // A blocking write of more than the pipe holds would wait for the child to read while the child
  // waits for us to read its answers: write only what fits, read whatever is ready.
  ::fcntl(in.fd[1], F_SETFL, ::fcntl(in.fd[1], F_GETFL) | O_NONBLOCK);
  // A broken pipe (the child died early) must become an error message, not SIGPIPE.
  struct sigaction ignore{}, previous{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &previous);

  std::string stdout_text, stderr_text;
  std::size_t written = 0;
  if (input.empty()) in.close(1);
  std::array<char, 65536> buf{};
  while (out.fd[0] >= 0 || err.fd[0] >= 0) {
    std::array<pollfd, 3> fds{{{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}, {in.fd[1], POLLOUT, 0}}};
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[2].revents & (POLLOUT | POLLERR | POLLHUP)) {
      ssize_t n = ::write(in.fd[1], input.data() + written, std::min<std::size_t>(input.size() - written, buf.size()));
      if (n > 0) written += static_cast<std::size_t>(n);
      bool full = n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
      if ((n < 0 && !full) || written == input.size()) in.close(1);
    }
    for (int i : {0, 1}) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      int& fd = i == 0 ? out.fd[0] : err.fd[0];
      ssize_t n = ::read(fd, buf.data(), buf.size());
      if (n > 0) (i == 0 ? stdout_text : stderr_text).append(buf.data(), static_cast<std::size_t>(n));
      else (i == 0 ? out : err).close(0);
    }
  }
  in.close(1);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ::sigaction(SIGPIPE, &previous, nullptr);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    if (stderr_text.size() > kStderrKept) stderr_text = "..." + stderr_text.substr(stderr_text.size() - kStderrKept);
    throw ScanError("'" + argv[0] + "' failed (" +
                    (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status)) : "killed by a signal") +
                    "): " + stderr_text);
  }
  return stdout_text;
}

}  // namespace kbv::scan::detail
