#include "orchestrate/device_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

namespace kbv {
namespace {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    out.push_back(b == std::string::npos ? "" : item.substr(b, e - b + 1));
  }
  return out;
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

// A file name's characters only: a UUID or an index stays as it is.
std::string file_safe(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  return out;
}

}  // namespace

std::string device_lock_name(const std::string& device, const std::optional<std::string>& cuda_visible_devices,
                             const GpuInventory& host) {
  if (device.rfind("cuda", 0) != 0) return "cpu";
  const auto colon = device.find(':');
  const std::string number = colon == std::string::npos ? "0" : device.substr(colon + 1);
  const std::size_t logical = all_digits(number) ? std::stoul(number) : 0;
  std::string entry = std::to_string(logical);  // no variable: the N-th GPU
  if (cuda_visible_devices) {
    const auto entries = split_commas(*cuda_visible_devices);
    if (logical < entries.size()) entry = entries[logical];
  }
  if (all_digits(entry)) {
    const std::size_t physical = std::stoul(entry);
    if (host.nvml_uuids && physical < host.nvml_uuids->size()) return "gpu-" + file_safe((*host.nvml_uuids)[physical]);
    return "gpu-index-" + entry;
  }
  // A UUID (or a prefix of one, as CUDA accepts): NVML's full UUID when it matches one.
  if (host.nvml_uuids)
    for (const auto& uuid : *host.nvml_uuids)
      if (uuid.rfind(entry, 0) == 0) return "gpu-" + file_safe(uuid);
  return "gpu-" + file_safe(entry);
}

std::string device_lock_dir() {
  if (const char* dir = std::getenv("KBV_LOCK_DIR"); dir && *dir) return dir;
  const std::string dir = "/tmp/kbv-device-locks";
  if (::mkdir(dir.c_str(), 01777) == 0) ::chmod(dir.c_str(), 01777);  // past the umask
  return dir;
}

namespace {

// The lock file, opened without trusting the folder: never through a symbolic link (another user
// could plant one in a world-writable folder and have kbv, as root, create or open any file), a
// regular file owned by root or by us, made 0644 (a read-only descriptor is enough for flock).
int open_lock_file(const std::string& dir, const std::string& path) {
  struct stat d {};
  if (::lstat(dir.c_str(), &d) != 0 || !S_ISDIR(d.st_mode))
    throw std::runtime_error("the device lock folder " + dir + " is not a folder");
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 && (errno == EACCES || errno == EPERM)) fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "cannot open the device lock " + path);
  struct stat f {};
  if (::fstat(fd, &f) != 0 || !S_ISREG(f.st_mode) || (f.st_uid != 0 && f.st_uid != ::geteuid())) {
    ::close(fd);
    throw std::runtime_error("the device lock " + path + " is not a regular file of root's or ours");
  }
  return fd;
}

}  // namespace

DeviceLock::DeviceLock(const std::string& dir, const std::string& name)
    : path_(dir + "/" + name + ".lock") {
  fd_ = open_lock_file(dir, path_);
  try {
    intent_fd_ = open_lock_file(dir, dir + "/" + name + ".intent");
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

DeviceLock::~DeviceLock() {
  release();
  if (intent_fd_ >= 0) ::close(intent_fd_);
  if (fd_ >= 0) ::close(fd_);
}

namespace {

bool try_flock(int fd, int how, const std::string& path) {
  if (::flock(fd, how | LOCK_NB) == 0) return true;
  if (errno != EWOULDBLOCK && errno != EINTR) throw std::system_error(errno, std::generic_category(), "cannot lock " + path);
  return false;
}

}  // namespace

bool DeviceLock::acquire(bool exclusive, const std::atomic<bool>* cancel, std::optional<Clock::time_point> deadline) {
  if (held_) return true;
  // Timed evaluations go first: one holds the intent file exclusively while it waits, and an
  // untimed one passes through it (shared) before it takes the lock, so a stream of untimed
  // evaluations cannot keep a timed one out for ever (flock keeps no queue).
  const int intent = exclusive ? LOCK_EX : LOCK_SH;
  bool intent_held = false;
  // Polled, so that a cancel (the judge ended, Ctrl-C) or the deadline is seen within a few
  // milliseconds.
  for (;;) {
    if (!intent_held) intent_held = try_flock(intent_fd_, intent, path_);
    if (intent_held && try_flock(fd_, exclusive ? LOCK_EX : LOCK_SH, path_)) {
      ::flock(intent_fd_, LOCK_UN);
      held_ = true;
      return true;
    }
    if ((cancel && cancel->load()) || (deadline && Clock::now() >= *deadline)) {
      if (intent_held) ::flock(intent_fd_, LOCK_UN);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void DeviceLock::release() {
  if (!held_) return;
  ::flock(fd_, LOCK_UN);
  held_ = false;
}

LockedTurn::LockedTurn(const std::string& lock_dir, const std::string& lock_name, bool exclusive)
    : lock_(lock_dir, lock_name), exclusive_(exclusive) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe2 for a device gate");
  gate_read_ = fds[0];
  gate_write_ = fds[1];
  wait_in_background();
}

void LockedTurn::wait_in_background() {
  const auto deadline = DeviceLock::Clock::now() + std::chrono::seconds(static_cast<long>(kMaxDeviceWaitSeconds));
  waiter_ = std::thread([this, deadline] {
    if (!lock_.acquire(exclusive_, &stop_, deadline)) {
      if (!stop_) {
        std::lock_guard<std::mutex> g(mutex_);
        gave_up_ = true;
        ::close(gate_write_);  // unopened: the judge gives up and ends its runners
        gate_write_ = -1;
      }
      settled_.notify_all();
      return;
    }
    {
      std::lock_guard<std::mutex> g(mutex_);
      opened_ = std::chrono::steady_clock::now();  // before the byte: the judge may answer at once
    }
    settled_.notify_all();
    // One byte into a pipe whose read end is still ours and that the judge has emptied before
    // asking again: never blocks, never EPIPE.
    const char go = 1;
    ssize_t n;
    do n = ::write(gate_write_, &go, 1);
    while (n < 0 && errno == EINTR);
  });
}

bool LockedTurn::wait_open() {
  std::unique_lock<std::mutex> g(mutex_);
  settled_.wait(g, [&] { return opened_.has_value() || gave_up_ || stop_; });
  return opened_.has_value();
}

void LockedTurn::again() {
  if (waiter_.joinable()) waiter_.join();
  lock_.release();
  {
    std::lock_guard<std::mutex> g(mutex_);
    if (gave_up_ || stop_ || gate_write_ < 0) return;
    opened_.reset();
  }
  // A timed waiter holds the intent file and comes first by itself; an untimed one polls every
  // 5 ms, and gets a few polls' time to take the device before this turn asks for it again.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  wait_in_background();
}

LockedTurn::~LockedTurn() {
  end();
  if (gate_read_ >= 0) ::close(gate_read_);
}

std::optional<std::chrono::steady_clock::time_point> LockedTurn::opened_at() const {
  std::lock_guard<std::mutex> g(mutex_);
  return opened_;
}

void LockedTurn::end() {
  {
    std::lock_guard<std::mutex> g(mutex_);
    stop_ = true;
  }
  settled_.notify_all();
  if (waiter_.joinable()) waiter_.join();
  lock_.release();
  if (gate_write_ >= 0) {
    ::close(gate_write_);  // unopened: the judge, if still waiting, gives up
    gate_write_ = -1;
  }
}

namespace {

std::string waited_too_long(const std::string& device) {
  return "the " + device + " stayed another process's for " + std::to_string(static_cast<int>(kMaxDeviceWaitSeconds)) +
         " s (its lock in " + device_lock_dir() + "): nothing was evaluated; evaluate again";
}

// KBV_DEVICE_LOCK=0: no turns.
bool device_locks_off() {
  const char* off = std::getenv("KBV_DEVICE_LOCK");
  return off && std::string(off) == "0";
}

// device_lock_name for `device` as this process sees the host's GPUs.
std::string this_hosts_lock_name(const std::string& device) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  return device_lock_name(device, visible ? std::optional<std::string>(visible) : std::nullopt,
                          device.rfind("cuda", 0) == 0 ? gpu_inventory() : GpuInventory{});
}

}  // namespace

std::optional<std::string> EvalDeviceTurn::gave_up_reason(const std::string& device) const {
  if (gave_up) return gave_up;
  if (gated && gated->gave_up()) return waited_too_long(device);
  return std::nullopt;
}

EvalDeviceTurn take_eval_turn(EvaluationRun& run, std::ostream* note) {
  EvalDeviceTurn turn;
  if (device_locks_off()) return turn;
  const std::string& device = run.job.device;
  const bool cuda = device.rfind("cuda", 0) == 0;
  const bool exclusive = run.job.timing.enabled;
  try {
    const std::string name = this_hosts_lock_name(device);
    // Untimed, the lock is shared and mostly free: the gate would only put the judge's start-up
    // ahead of its sandbox's (which gets its job at the turn), so it is taken before the start.
    if (cuda && exclusive) {
      turn.gated = std::make_unique<LockedTurn>(device_lock_dir(), name, exclusive);
      LockedTurn* gate = turn.gated.get();
      run.device_gate_fd = gate->gate_fd();
      run.turns_ahead = 1;  // the waiting backstop behind kMaxDeviceWaitSeconds
      run.gate_opened_at = [gate] { return gate->opened_at(); };
      run.on_released = [gate] { gate->end(); };
      return turn;
    }
    turn.held = std::make_unique<DeviceLock>(device_lock_dir(), name);
    std::atomic<bool> now{true};
    if (!turn.held->acquire(exclusive, &now)) {  // one try: say so before waiting
      if (note) *note << "kbv: waiting for the " << device << " (another process holds its lock in " << device_lock_dir() << ")\n";
      const auto deadline = DeviceLock::Clock::now() + std::chrono::seconds(static_cast<long>(kMaxDeviceWaitSeconds));
      if (!turn.held->acquire(exclusive, nullptr, deadline)) turn.gave_up = waited_too_long(device);
    }
  } catch (const std::exception& e) {
    // No turn to take is no reason to judge nothing: evaluate, saying so.
    if (note) *note << "kbv: warning: no turn on the " << device << " (" << e.what() << "); other kbv evals may share it\n";
    turn = {};
    run.device_gate_fd = -1;
    run.gate_opened_at = nullptr;
    run.on_released = nullptr;
  }
  return turn;
}

EvalDeviceTurn take_batch_turns(std::vector<EvaluationRun>& runs, std::ostream* note) {
  EvalDeviceTurn turn;
  if (runs.empty()) return turn;
  if (device_locks_off()) return turn;
  EvaluationRun& first = runs.front();
  const std::string& device = first.job.device;
  const bool cuda = device.rfind("cuda", 0) == 0;
  const bool exclusive = first.job.timing.enabled;
  try {
    const std::string name = this_hosts_lock_name(device);
    turn.gated = std::make_unique<LockedTurn>(device_lock_dir(), name, exclusive);
    LockedTurn* gate = turn.gated.get();
    if (!(cuda && exclusive) && !gate->opened_at()) {
      if (note) *note << "kbv: waiting for the " << device << " (another process holds its lock in " << device_lock_dir() << ")\n";
      if (!gate->wait_open()) {
        turn.gave_up = waited_too_long(device);
        return turn;
      }
    }
    for (std::size_t i = 0; i < runs.size(); ++i) {
      runs[i].device_gate_fd = gate->gate_fd();
      runs[i].turns_ahead = 1;  // the waiting backstop behind kMaxDeviceWaitSeconds
      runs[i].gate_opened_at = [gate] { return gate->opened_at(); };
      const bool last = i + 1 == runs.size();
      runs[i].on_released = [gate, last] { last ? gate->end() : gate->again(); };
    }
  } catch (const std::exception& e) {
    if (note) *note << "kbv: warning: no turn on the " << device << " (" << e.what() << "); other kbv evals may share it\n";
    turn = {};
    for (auto& run : runs) {
      run.device_gate_fd = -1;
      run.gate_opened_at = nullptr;
      run.on_released = nullptr;
    }
  }
  return turn;
}

}  // namespace kbv
