#include "isolation/peek_exit.hpp"

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kbv::isolation {
namespace {

constexpr int kPidfdId = 3;  // P_PIDFD (Linux 5.4), which older glibc headers do not name

}  // namespace

int open_pidfd(int pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

std::optional<int> peek_exit_status(int pidfd) {
  if (pidfd < 0) return std::nullopt;
  siginfo_t info{};
  if (::waitid(static_cast<idtype_t>(kPidfdId), static_cast<id_t>(pidfd), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
      info.si_pid == 0)
    return std::nullopt;
  // As waitpid() would give it.
  if (info.si_code == CLD_EXITED) return (info.si_status & 0xff) << 8;
  return (info.si_status & 0x7f) | (info.si_code == CLD_DUMPED ? 0x80 : 0);
}

}  // namespace kbv::isolation
