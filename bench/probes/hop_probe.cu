// Probe 2: a cross-process "hop" built from stream memory operations on a shared pinned page
// (CUDA IPC events do not open across users or namespaces: ipc_probe), with the host doorbell a
// spin on the same page. Measures, per isolation mode, E0 -> E1 around the child's work with and
// without a gate holding the parent's stream until the child has queued everything; the same hop
// between two streams of one process; IPC memory in both directions; Landlock variants.
//   nvcc -O2 -arch=sm_90 -o /tmp/hop_probe bench/probes/hop_probe.cu -lcuda && /tmp/hop_probe
#include <cuda.h>
#include <cuda_runtime.h>
#include <fcntl.h>
#include <grp.h>
#include <immintrin.h>
#include <linux/landlock.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

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
#define CK(x)                                                                                             \
  do {                                                                                                    \
    cudaError_t e_ = (x);                                                                                 \
    if (e_ != cudaSuccess) {                                                                              \
      std::printf("[%s] CUDA error %s at line %d: %s\n", g_role, cudaGetErrorString(e_), __LINE__, #x);   \
      std::fflush(stdout);                                                                                \
      std::exit(3);                                                                                       \
    }                                                                                                     \
  } while (0)
#define CU(x)                                                                    \
  do {                                                                           \
    CUresult r_ = (x);                                                           \
    if (r_ != CUDA_SUCCESS) {                                                    \
      std::printf("[%s] CU error %d at line %d: %s\n", g_role, r_, __LINE__, #x); \
      std::fflush(stdout);                                                       \
      std::exit(3);                                                              \
    }                                                                            \
  } while (0)

constexpr size_t kN = 16 << 20;
__global__ void fill(float* p, size_t n, float base) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) p[i] = base + (float)(i % 1000);
}
__global__ void tiny(float* p) { p[0] += 1.f; }
__global__ void relu(const float* in, float* out, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] > 500.f ? in[i] : 0.f;
}

// The shared page: one word a cache line.
struct Page {
  alignas(64) std::atomic<uint32_t> req;
  alignas(64) std::atomic<uint32_t> op;
  alignas(64) std::atomic<uint32_t> reply;
  alignas(64) uint32_t word_a;   // parent's stream writes, child's stream waits
  alignas(64) uint32_t word_b;   // child's stream writes, parent's stream waits
  alignas(64) uint32_t gate;     // parent's host writes, parent's stream waits
  alignas(64) cudaIpcMemHandle_t parent_mem;
  alignas(64) cudaIpcMemHandle_t child_mem;
  alignas(64) std::atomic<uint32_t> child_status;  // 1 ready, 2+ failures
  char note[256];
};

static void spin_until(std::atomic<uint32_t>& w, uint32_t v) {
  auto t0 = std::chrono::steady_clock::now();
  while (w.load(std::memory_order_acquire) != v) {
    _mm_pause();
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(10)) {
      std::printf("[%s] spin timeout\n", g_role);
      std::exit(4);
    }
  }
}

static CUdeviceptr dev_of(void* host) {
  void* d = nullptr;
  CK(cudaHostGetDevicePointer(&d, host, 0));
  return (CUdeviceptr)d;
}

static int child_main() {
  g_role = "child";
  Page* page = (Page*)mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, 4, 0);
  if (page == MAP_FAILED) return 10;
  std::snprintf(page->note, sizeof page->note, "uid=%d pid=%d", getuid(), getpid());
  cudaError_t e = cudaSetDevice(0);
  if (e == cudaSuccess) e = cudaFree(nullptr);
  if (e != cudaSuccess) {
    std::snprintf(page->note, sizeof page->note, "uid=%d: CUDA start failed: %s", getuid(), cudaGetErrorString(e));
    page->child_status.store(2);
    return 11;
  }
  e = cudaHostRegister(page, 4096, cudaHostRegisterMapped | cudaHostRegisterPortable);
  if (e != cudaSuccess) {
    std::snprintf(page->note, sizeof page->note, "uid=%d: cudaHostRegister failed: %s", getuid(), cudaGetErrorString(e));
    page->child_status.store(3);
    return 12;
  }
  float* shared = nullptr;
  e = cudaIpcOpenMemHandle((void**)&shared, page->parent_mem, cudaIpcMemLazyEnablePeerAccess);
  if (e != cudaSuccess) {
    std::snprintf(page->note, sizeof page->note, "uid=%d: open parent mem failed: %s", getuid(), cudaGetErrorString(e));
    page->child_status.store(4);
    return 13;
  }
  float *own_out, *export_buf;
  CK(cudaMalloc(&own_out, kN * sizeof(float)));
  CK(cudaMalloc(&export_buf, 1 << 20));
  fill<<<1024, 256>>>(export_buf, 1 << 18, 300.f);
  CK(cudaDeviceSynchronize());
  CK(cudaIpcGetMemHandle(&page->child_mem, export_buf));
  std::vector<float> host(10);
  CK(cudaMemcpy(host.data(), shared, 10 * sizeof(float), cudaMemcpyDeviceToHost));
  if (host[3] != 10.f) std::snprintf(page->note + strlen(page->note), 64, " READ WRONG %f", host[3]);
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CUdeviceptr a = dev_of(&page->word_a), b = dev_of(&page->word_b);
  page->child_status.store(1, std::memory_order_release);
  for (uint32_t n = 1;; ++n) {
    spin_until(page->req, n);
    uint32_t op = page->op.load();
    if (op == 9) break;
    CU(cuStreamWaitValue32(s, a, n, CU_STREAM_WAIT_VALUE_GEQ));
    if (op == 1) tiny<<<1, 1, 0, s>>>(own_out);
    if (op == 2) relu<<<(kN + 255) / 256, 256, 0, s>>>(shared, own_out, kN);
    CU(cuStreamWriteValue32(s, b, n, 0));
    page->reply.store(n, std::memory_order_release);
  }
  CK(cudaDeviceSynchronize());
  return 0;
}

static int landlock_abi() { return (int)syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION); }

static int apply_landlock(const std::vector<std::string>& dirs, bool ioctl) {
  int abi = landlock_abi();
  if (abi < 1) return -1;
  __u64 handled = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
                  LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                  LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
                  LANDLOCK_ACCESS_FS_MAKE_SYM;
  if (abi >= 2) handled |= LANDLOCK_ACCESS_FS_REFER;
  if (abi >= 3) handled |= LANDLOCK_ACCESS_FS_TRUNCATE;
  if (abi >= 5 && ioctl) handled |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
  landlock_ruleset_attr attr{};
  attr.handled_access_fs = handled;
  int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (rs < 0) return -2;
  for (const auto& d : dirs) {
    landlock_path_beneath_attr pb{};
    pb.allowed_access = handled;
    pb.parent_fd = open(d.c_str(), O_PATH | O_CLOEXEC);
    if (pb.parent_fd < 0) continue;
    if (syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0)) {
      // a file (not a dir): only file rights apply
      pb.allowed_access = handled & (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | (ioctl ? LANDLOCK_ACCESS_FS_IOCTL_DEV : 0));
      syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
    }
    close(pb.parent_fd);
  }
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (syscall(SYS_landlock_restrict_self, rs, 0) != 0) return -3;
  return abi;
}

static void write_file(const std::string& path, const char* text) {
  int fd = open(path.c_str(), O_WRONLY);
  if (fd >= 0) {
    if (write(fd, text, strlen(text))) {}
    close(fd);
  }
}

struct Mode {
  std::string name;
  bool ns = false, setuid = false, landlock = false, ioctl = true;
  std::vector<std::string> dirs;
};

static pid_t spawn(const char* self, int memfd, const Mode& m) {
  int sync_pipe[2], go_pipe[2];
  if (pipe(sync_pipe) || pipe(go_pipe)) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(memfd, 4);
    if (m.setuid) {
      setgroups(0, nullptr);
      if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534)) _exit(20);
    }
    if (m.ns) {
      if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID)) _exit(21);
      char c = 1;
      if (write(sync_pipe[1], &c, 1) != 1 || read(go_pipe[0], &c, 1) != 1) _exit(22);
      if (setresgid(0, 0, 0) || setresuid(0, 0, 0)) _exit(24);
      pid_t inner = fork();
      if (inner > 0) {
        int st = 0;
        waitpid(inner, &st, 0);
        _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
      }
      mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr);
      if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr)) _exit(26);
    }
    if (m.landlock && apply_landlock(m.dirs, m.ioctl) < 0) _exit(27);
    execl(self, self, "child", (char*)nullptr);
    _exit(28);
  }
  close(sync_pipe[1]);
  close(go_pipe[0]);
  if (m.ns) {
    char c;
    if (read(sync_pipe[0], &c, 1) == 1) {
      std::string base = "/proc/" + std::to_string(pid);
      write_file(base + "/setgroups", "deny");
      write_file(base + "/uid_map", "0 100000 1");
      write_file(base + "/gid_map", "0 100000 1");
      if (write(go_pipe[1], &c, 1)) {}
    }
  }
  close(sync_pipe[0]);
  close(go_pipe[1]);
  return pid;
}

static double q(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[(size_t)(p * (v.size() - 1))];
}

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "child") return child_main();
  mkdir("/tmp/probe_w", 0777);
  CK(cudaSetDevice(0));
  float* shared;
  CK(cudaMalloc(&shared, kN * sizeof(float)));
  fill<<<(kN + 255) / 256, 256>>>(shared, kN, 7.f);
  CK(cudaDeviceSynchronize());
  cudaStream_t s, s2;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  float* out;
  CK(cudaMalloc(&out, kN * sizeof(float)));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  const char* op_names[] = {"empty", "tiny", "relu64MiB"};

  // One process, two streams, the same memop hop (what the hop costs without a context switch).
  {
    void* p = nullptr;
    CK(cudaHostAlloc(&p, 4096, cudaHostAllocMapped));
    std::memset(p, 0, 4096);
    auto* w = (uint32_t*)p;
    CUdeviceptr a = dev_of(&w[0]), b = dev_of(&w[16]), g = dev_of(&w[32]);
    for (int op = 0; op < 3; ++op)
      for (int gated = 0; gated < 2; ++gated) {
        std::vector<double> v;
        for (uint32_t n = 1; n <= 200; ++n) {
          uint32_t id = (uint32_t)(op * 1000 + gated * 500) + n;
          if (gated) CU(cuStreamWaitValue32(s, g, id, CU_STREAM_WAIT_VALUE_GEQ));
          CK(cudaEventRecord(e0, s));
          CU(cuStreamWriteValue32(s, a, id, 0));
          CU(cuStreamWaitValue32(s2, a, id, CU_STREAM_WAIT_VALUE_GEQ));
          if (op == 1) tiny<<<1, 1, 0, s2>>>(out);
          if (op == 2) relu<<<(kN + 255) / 256, 256, 0, s2>>>(shared, out, kN);
          CU(cuStreamWriteValue32(s2, b, id, 0));
          CU(cuStreamWaitValue32(s, b, id, CU_STREAM_WAIT_VALUE_GEQ));
          CK(cudaEventRecord(e1, s));
          if (gated) ((volatile uint32_t*)w)[32] = id;
          CK(cudaEventSynchronize(e1));
          float t;
          CK(cudaEventElapsedTime(&t, e0, e1));
          if (n > 20) v.push_back(t * 1000);
        }
        std::printf("same-process 2-stream hop %-9s %s: median %7.2f us p10 %7.2f p90 %7.2f\n", op_names[op],
                    gated ? "gated  " : "ungated", q(v, .5), q(v, .1), q(v, .9));
      }
    for (int op = 0; op < 3; ++op) {
      std::vector<double> v;
      for (int i = 0; i < 200; ++i) {
        CK(cudaEventRecord(e0, s));
        if (op == 1) tiny<<<1, 1, 0, s>>>(out);
        if (op == 2) relu<<<(kN + 255) / 256, 256, 0, s>>>(shared, out, kN);
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        float t;
        CK(cudaEventElapsedTime(&t, e0, e1));
        if (i >= 20) v.push_back(t * 1000);
      }
      std::printf("same-process one stream   %-9s        : median %7.2f us p10 %7.2f p90 %7.2f\n", op_names[op], q(v, .5), q(v, .1), q(v, .9));
    }
  }

  std::vector<Mode> modes;
  modes.push_back({"plain"});
  modes.push_back({"setuid", false, true});
  modes.push_back({"ns", true});
  Mode ll{"ns+landlock(dev,tmp)", true, false, true, true, {"/dev", "/tmp/probe_w"}};
  modes.push_back(ll);
  Mode ll2 = ll;
  ll2.name = "ns+landlock(dev,tmp) no-ioctl-right";
  ll2.ioctl = false;
  modes.push_back(ll2);
  Mode ll3 = ll;
  ll3.name = "ns+landlock(dev,tmp,proc,sys,run,dev/shm)";
  ll3.dirs = {"/dev", "/tmp/probe_w", "/proc", "/sys", "/run", "/dev/shm"};
  modes.push_back(ll3);
  Mode ll4 = ll;
  ll4.name = "ns+landlock(/)";
  ll4.dirs = {"/"};
  modes.push_back(ll4);
  Mode ll5 = ll;
  ll5.name = "landlock(dev,tmp,proc) only";
  ll5.ns = false;
  ll5.dirs = {"/dev", "/tmp/probe_w", "/proc"};
  modes.push_back(ll5);

  for (const auto& m : modes) {
    int memfd = memfd_create("kbv-probe", 0);
    if (ftruncate(memfd, 4096)) return 5;
    Page* page = (Page*)mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    std::memset((void*)page, 0, 4096);
    CK(cudaIpcGetMemHandle(&page->parent_mem, shared));
    CK(cudaHostRegister(page, 4096, cudaHostRegisterMapped | cudaHostRegisterPortable));
    pid_t pid = spawn(argv[0], memfd, m);
    auto t0 = std::chrono::steady_clock::now();
    while (page->child_status.load() == 0 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30)) {
      int st;
      if (waitpid(pid, &st, WNOHANG) == pid) {
        std::printf("mode %-42s child exited early: %d (%s)\n", m.name.c_str(), WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st), page->note);
        pid = -1;
        break;
      }
      usleep(1000);
    }
    if (pid < 0) {
      cudaHostUnregister(page);
      munmap(page, 4096);
      close(memfd);
      continue;
    }
    if (page->child_status.load() != 1) {
      std::printf("mode %-42s FAILED: %s\n", m.name.c_str(), page->note);
      kill(pid, 9);
      waitpid(pid, nullptr, 0);
      cudaHostUnregister(page);
      munmap(page, 4096);
      close(memfd);
      continue;
    }
    float* child_buf = nullptr;
    cudaError_t e = cudaIpcOpenMemHandle((void**)&child_buf, page->child_mem, cudaIpcMemLazyEnablePeerAccess);
    float v5 = -1;
    if (e == cudaSuccess) CK(cudaMemcpy(&v5, child_buf + 5, 4, cudaMemcpyDeviceToHost));
    std::printf("mode %-42s child %s; parent opened child's memory: %s (value %s)\n", m.name.c_str(), page->note,
                e == cudaSuccess ? "yes" : cudaGetErrorString(e), v5 == 305.f ? "right" : "WRONG");
    if (m.name == "ns") {
      std::string cmd = "nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader | tr '\\n' ' '; echo '<- nvidia-smi; child outer pid " + std::to_string(pid) + "'";
      if (system(cmd.c_str())) {}
    }
    CUdeviceptr a = dev_of(&page->word_a), b = dev_of(&page->word_b), g = dev_of(&page->gate);
    uint32_t n = 0;
    bool full = m.name == "plain" || m.name == "ns";
    for (int op = 0; op < 3; ++op)
      for (int gated = 0; gated < 2; ++gated) {
        if (!full && (op != 0 || gated)) continue;
        std::vector<double> v, host;
        for (int i = 0; i < 200; ++i) {
          ++n;
          auto h0 = std::chrono::steady_clock::now();
          if (gated) CU(cuStreamWaitValue32(s, g, n, CU_STREAM_WAIT_VALUE_GEQ));
          CK(cudaEventRecord(e0, s));
          CU(cuStreamWriteValue32(s, a, n, 0));
          page->op.store((uint32_t)op);
          page->req.store(n, std::memory_order_release);
          spin_until(page->reply, n);
          CU(cuStreamWaitValue32(s, b, n, CU_STREAM_WAIT_VALUE_GEQ));
          CK(cudaEventRecord(e1, s));
          if (gated) ((volatile uint32_t*)&page->gate)[0] = n;
          CK(cudaEventSynchronize(e1));
          host.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - h0).count());
          float t;
          CK(cudaEventElapsedTime(&t, e0, e1));
          if (i >= 20) v.push_back(t * 1000);
        }
        std::printf("  cross-process %-9s %s: median %7.2f us p10 %7.2f p90 %7.2f (host round trip %.1f us)\n", op_names[op],
                    gated ? "gated  " : "ungated", q(v, .5), q(v, .1), q(v, .9), q(host, .5));
      }
    page->op.store(9);
    page->req.store(n + 1, std::memory_order_release);
    int st = 0;
    waitpid(pid, &st, 0);
    if (child_buf) cudaIpcCloseMemHandle(child_buf);
    cudaHostUnregister(page);
    munmap(page, 4096);
    close(memfd);
  }
  return 0;
}
