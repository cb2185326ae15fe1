// Probe: can a judge process share device memory and events with a sandboxed child, and what
// does timing across the process boundary cost? Run on the GPU machine:
//   nvcc -O2 -arch=sm_90 -o /tmp/ipc_probe bench/probes/ipc_probe.cu && /tmp/ipc_probe
// For each isolation mode (plain child, other uid, user+pid+net+mount namespaces, the same plus
// Landlock) the child opens the parent's legacy IPC memory and event handles, checks and writes
// memory, and then serves timed calls: the parent records E0 and an IPC event A, rings the child
// over a socket, the child waits for A, runs its work, records its IPC event B and replies; the
// parent waits for B and records E1. The same work timed inside one process is the reference.
#include <cuda_runtime.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sched.h>
#include <grp.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(x)                                                                                   \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      std::printf("[%s] CUDA error %s at %s:%d: %s\n", g_role, cudaGetErrorString(e_), __FILE__, \
                  __LINE__, #x);                                                                \
      std::fflush(stdout);                                                                      \
      std::exit(3);                                                                             \
    }                                                                                           \
  } while (0)

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif

static const char* g_role = "parent";
constexpr size_t kN = 16 << 20;  // floats: 64 MiB

__global__ void fill(float* p, size_t n, float base) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) p[i] = base + (float)(i % 1000);
}
__global__ void tiny(float* p) { p[0] += 1.f; }
__global__ void relu(const float* in, float* out, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] > 500.f ? in[i] : 0.f;
}
__global__ void spin(long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while ((long long)(t - t0) < ns);
}

struct Hello {
  cudaIpcMemHandle_t mem;
  cudaIpcEventHandle_t event_a;
};
struct Reply {
  int ok;
  char note[200];
  cudaIpcEventHandle_t event_b;
};
struct Go {
  int op;  // 0 empty, 1 tiny, 2 relu 64 MiB, 3 side-stream 5 ms spin after B, 9 quit
};

// ---------------------------------------------------------------- child
static int child_main(int sock) {
  g_role = "child";
  Hello h;
  if (recv(sock, &h, sizeof h, 0) != sizeof h) return 10;
  Reply r{};
  std::snprintf(r.note, sizeof r.note, "uid=%d euid=%d pid=%d", getuid(), geteuid(), getpid());
  CK(cudaSetDevice(0));
  float* shared = nullptr;
  cudaError_t e = cudaIpcOpenMemHandle((void**)&shared, h.mem, cudaIpcMemLazyEnablePeerAccess);
  if (e != cudaSuccess) {
    std::snprintf(r.note + strlen(r.note), sizeof r.note - strlen(r.note), " OPEN MEM FAILED: %s", cudaGetErrorString(e));
    send(sock, &r, sizeof r, 0);
    return 11;
  }
  std::vector<float> host(1000);
  CK(cudaMemcpy(host.data(), shared, 1000 * sizeof(float), cudaMemcpyDeviceToHost));
  bool good = true;
  for (int i = 0; i < 1000; ++i) good = good && host[i] == 7.f + (float)i;
  fill<<<(kN / 2 + 255) / 256, 256>>>(shared + kN / 2, kN / 2, 100.f);  // second half: child writes
  CK(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  e = cudaIpcOpenEventHandle(&a, h.event_a);
  if (e != cudaSuccess) {
    std::snprintf(r.note + strlen(r.note), sizeof r.note - strlen(r.note), " OPEN EVENT FAILED: %s", cudaGetErrorString(e));
    send(sock, &r, sizeof r, 0);
    return 12;
  }
  CK(cudaEventCreateWithFlags(&b, cudaEventDisableTiming | cudaEventInterprocess));
  CK(cudaIpcGetEventHandle(&r.event_b, b));
  r.ok = good ? 1 : 2;
  send(sock, &r, sizeof r, 0);

  cudaStream_t s, side;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  float *own_in, *own_out;
  CK(cudaMalloc(&own_in, kN * sizeof(float)));
  CK(cudaMalloc(&own_out, kN * sizeof(float)));
  for (;;) {
    Go g;
    if (recv(sock, &g, sizeof g, 0) != sizeof g || g.op == 9) break;
    CK(cudaStreamWaitEvent(s, a, 0));
    if (g.op == 1) tiny<<<1, 1, 0, s>>>(own_out);
    if (g.op == 2) relu<<<(kN + 255) / 256, 256, 0, s>>>(shared, own_out, kN);
    CK(cudaEventRecord(b, s));
    if (g.op == 3) spin<<<1, 1, 0, side>>>(5000000);
    int done = 1;
    send(sock, &done, sizeof done, 0);
  }
  CK(cudaDeviceSynchronize());
  return 0;
}

// ---------------------------------------------------------------- isolation
static void write_file(const char* path, const char* text) {
  int fd = open(path, O_WRONLY);
  if (fd >= 0) {
    ssize_t w = write(fd, text, strlen(text));
    (void)w;
    close(fd);
  }
}

static int landlock_abi() {
  return (int)syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
}

// Writes allowed only under `dirs`; reading is not restricted.
static int apply_landlock(const std::vector<const char*>& dirs) {
  int abi = landlock_abi();
  if (abi < 1) return -1;
  __u64 handled = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
                  LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                  LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
                  LANDLOCK_ACCESS_FS_MAKE_SYM;
  if (abi >= 2) handled |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) handled |= LANDLOCK_ACCESS_FS_TRUNCATE;
  if (abi >= 5) handled |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  landlock_ruleset_attr attr{};
  attr.handled_access_fs = handled;
  int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (rs < 0) return -2;
  for (const char* d : dirs) {
    landlock_path_beneath_attr pb{};
    pb.allowed_access = handled;
    pb.parent_fd = open(d, O_PATH | O_CLOEXEC);
    if (pb.parent_fd < 0) continue;
    syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
    close(pb.parent_fd);
  }
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (syscall(SYS_landlock_restrict_self, rs, 0) != 0) return -3;
  close(rs);
  return abi;
}

// Starts `self child` with the socket as fd 3 under `mode`. Returns the pid the parent waits for.
static pid_t spawn(const char* self, int sock, const std::string& mode) {
  int sync_pipe[2], go_pipe[2];
  if (pipe(sync_pipe) || pipe(go_pipe)) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(sync_pipe[0]);
    close(go_pipe[1]);
    dup2(sock, 3);
    if (mode == "setuid") {
      setgroups(0, nullptr);
      if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534)) _exit(20);
    } else if (mode.rfind("ns", 0) == 0) {
      int flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID;
      if (mode.find("ipc") != std::string::npos) flags |= CLONE_NEWIPC;
      if (unshare(flags)) _exit(21);
      char c = 1;
      if (write(sync_pipe[1], &c, 1) != 1) _exit(22);
      if (read(go_pipe[0], &c, 1) != 1) _exit(23);  // the parent wrote the uid/gid maps
      if (setresgid(0, 0, 0) || setresuid(0, 0, 0)) _exit(24);
      pid_t inner = fork();  // PID 1 of the new namespace
      if (inner < 0) _exit(25);
      if (inner > 0) {
        int st = 0;
        waitpid(inner, &st, 0);
        _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
      }
      mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr);
      if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr)) _exit(26);
      if (mode.find("landlock") != std::string::npos) {
        mkdir("/tmp/probe_w", 0777);
        if (apply_landlock({"/dev", "/tmp/probe_w"}) < 0) _exit(27);
      }
    }
    struct rlimit nproc{512, 512};
    setrlimit(RLIMIT_NPROC, &nproc);
    execl(self, self, "child", (char*)nullptr);
    _exit(28);
  }
  close(sync_pipe[1]);
  close(go_pipe[0]);
  if (mode.rfind("ns", 0) == 0) {
    char c;
    if (read(sync_pipe[0], &c, 1) != 1) return pid;
    std::string base = "/proc/" + std::to_string(pid);
    write_file((base + "/setgroups").c_str(), "deny");
    write_file((base + "/uid_map").c_str(), "0 100000 1");
    write_file((base + "/gid_map").c_str(), "0 100000 1");
    c = 1;
    if (write(go_pipe[1], &c, 1) != 1) return pid;
  }
  close(sync_pipe[0]);
  close(go_pipe[1]);
  return pid;
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}
static double pct(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[(size_t)(q * (v.size() - 1))];
}

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "child") return child_main(3);
  std::printf("landlock ABI %d; running as uid %d\n", landlock_abi(), getuid());
  CK(cudaSetDevice(0));
  float* shared;
  CK(cudaMalloc(&shared, kN * sizeof(float)));
  fill<<<(kN + 255) / 256, 256>>>(shared, kN, 7.f);
  CK(cudaDeviceSynchronize());
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *in_proc_out;
  CK(cudaMalloc(&in_proc_out, kN * sizeof(float)));
  cudaEvent_t e0, e1, a;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaEventCreateWithFlags(&a, cudaEventDisableTiming | cudaEventInterprocess));
  Hello h;
  CK(cudaIpcGetMemHandle(&h.mem, shared));
  CK(cudaIpcGetEventHandle(&h.event_a, a));

  // In-process reference timings.
  auto time_in_process = [&](int op) {
    std::vector<double> ms;
    for (int i = 0; i < 200; ++i) {
      CK(cudaEventRecord(e0, s));
      if (op == 1) tiny<<<1, 1, 0, s>>>(in_proc_out);
      if (op == 2) relu<<<(kN + 255) / 256, 256, 0, s>>>(shared, in_proc_out, kN);
      CK(cudaEventRecord(e1, s));
      CK(cudaEventSynchronize(e1));
      float t;
      CK(cudaEventElapsedTime(&t, e0, e1));
      if (i >= 20) ms.push_back(t * 1000.0);
    }
    return ms;
  };
  const char* op_names[] = {"empty", "tiny kernel", "relu 64 MiB"};
  for (int op = 0; op < 3; ++op) {
    auto v = time_in_process(op);
    std::printf("in-process %-12s median %8.2f us  p10 %8.2f  p90 %8.2f\n", op_names[op], median(v), pct(v, .1), pct(v, .9));
  }

  const char* modes[] = {"plain", "setuid", "ns", "ns_ipc", "ns_landlock"};
  for (const char* mode : modes) {
    int sv[2];
    socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv);
    pid_t pid = spawn(argv[0], sv[1], mode);
    close(sv[1]);
    send(sv[0], &h, sizeof h, 0);
    Reply r{};
    ssize_t got = recv(sv[0], &r, sizeof r, 0);
    if (got != sizeof r || r.ok == 0) {
      int st = 0;
      waitpid(pid, &st, 0);
      std::printf("mode %-12s FAILED: reply %zd, note '%s', child exit %d\n", mode, got, r.note,
                  WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st));
      close(sv[0]);
      continue;
    }
    std::vector<float> host(1000);
    CK(cudaMemcpy(host.data(), shared + kN / 2, 1000 * sizeof(float), cudaMemcpyDeviceToHost));
    bool child_wrote = host[5] == 105.f;
    cudaEvent_t b;
    cudaError_t eb = cudaIpcOpenEventHandle(&b, r.event_b);
    std::printf("mode %-12s child %s: read parent's memory %s, wrote it %s, child event %s\n", mode, r.note,
                r.ok == 1 ? "ok" : "WRONG", child_wrote ? "ok" : "NOT SEEN", eb == cudaSuccess ? "opened" : cudaGetErrorString(eb));
    if (eb == cudaSuccess) {
      if (std::string(mode) == "ns") {
        std::string cmd = "nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader; echo child outer pid " + std::to_string(pid);
        if (system(cmd.c_str())) {}
      }
      // Ordering: A recorded behind a 20 ms spin; B (after the child's wait on A) must not complete before it.
      spin<<<1, 1, 0, s>>>(20000000);
      CK(cudaEventRecord(a, s));
      auto t0 = std::chrono::steady_clock::now();
      Go g{0};
      send(sv[0], &g, sizeof g, 0);
      int done;
      recv(sv[0], &done, sizeof done, 0);
      CK(cudaEventSynchronize(b));
      double waited = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      std::printf("  ordering: child's B completed %.1f ms after the go (A sat behind a 20 ms spin) -> %s\n", waited,
                  waited > 15 ? "ordered" : "NOT ORDERED");
      for (int op = 0; op < 4; ++op) {
        std::vector<double> ms, host_us;
        for (int i = 0; i < 200; ++i) {
          auto h0 = std::chrono::steady_clock::now();
          CK(cudaEventRecord(e0, s));
          CK(cudaEventRecord(a, s));
          Go go{op};
          send(sv[0], &go, sizeof go, 0);
          recv(sv[0], &done, sizeof done, 0);
          CK(cudaStreamWaitEvent(s, b, 0));
          CK(cudaEventRecord(e1, s));
          CK(cudaEventSynchronize(e1));
          host_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0).count());
          float t;
          CK(cudaEventElapsedTime(&t, e0, e1));
          if (i >= 20) ms.push_back(t * 1000.0);
          if (op == 3) usleep(6000);  // let the side spin finish
        }
        const char* name = op == 3 ? "side 5ms spin" : op_names[op];
        std::printf("  cross-process %-13s median %8.2f us  p10 %8.2f  p90 %8.2f  (host round trip median %.1f us)\n", name,
                    median(ms), pct(ms, .1), pct(ms, .9), median(host_us));
      }
    }
    Go quit{9};
    send(sv[0], &quit, sizeof quit, 0);
    int st = 0;
    waitpid(pid, &st, 0);
    close(sv[0]);
  }
  return 0;
}
