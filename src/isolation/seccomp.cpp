#include "isolation/seccomp.hpp"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace kbv::isolation {

int deny_tracing() {
#if defined(__x86_64__)
  constexpr unsigned kArch = AUDIT_ARCH_X86_64;
  constexpr unsigned kX32Bit = 0x40000000;  // x32 system calls: the same arch, this bit set
#elif defined(__aarch64__)
  constexpr unsigned kArch = AUDIT_ARCH_AARCH64;
  constexpr unsigned kX32Bit = 0xffffffff;  // no such ABI: a number no call has
#else
  return ENOSYS;
#endif
  constexpr unsigned kDeny = SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
  // clone3 passes its flags in memory a filter cannot read: "not implemented", and glibc (thread
  // creation, posix_spawn) falls back to clone, whose flags it can.
  constexpr unsigned kNoClone3 = SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA);
  constexpr unsigned kNewNamespaces =
      CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET;
  // args[0] of clone is its flags; the low 32 bits hold every namespace flag (little-endian).
  constexpr unsigned kArg0Low = offsetof(seccomp_data, args);
  // Jump offsets count from the next instruction: 16 is "deny", 17 "no clone3".
  sock_filter filter[] = {
      /* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      /* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
      /* 2 */ BPF_STMT(BPF_RET | BPF_K, kDeny),
      /* 3 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      /* 4 */ BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, kX32Bit, 11, 0),
      /* 5 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ptrace, 10, 0),
      /* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 9, 0),
      /* 7 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_writev, 8, 0),
      /* 8 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 7, 0),
      /* 9 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_setns, 6, 0),
      /* 10 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 6, 0),
      /* 11 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 1, 0),
      /* 12 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      /* 13 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArg0Low),
      /* 14 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, kNewNamespaces, 1, 0),
      /* 15 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      /* 16 */ BPF_STMT(BPF_RET | BPF_K, kDeny),
      /* 17 */ BPF_STMT(BPF_RET | BPF_K, kNoClone3),
  };
  sock_fprog program{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) != 0) return errno;
  return 0;
}

}  // namespace kbv::isolation
