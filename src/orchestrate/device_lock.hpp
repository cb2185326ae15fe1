#pragma once
// Evaluations in separate kbv processes on one device take turns (kbv eval; the Python API runs
// one kbv eval per item). A timed evaluation needs the device to itself: another process's work
// beside it is another tenant (device_busy turns into a warning, speedups become UNSURE) and, on
// the CPU, contention (judge/host_contention.hpp). So each kbv eval holds an advisory lock on a
// file named after the device while its judge uses it: exclusive when timed, shared when not
// (untimed evaluations may run beside each other, never beside a timed one). The judge is started
// ahead, behind its gate (kbv-judge --device-gate), so its interpreters and sandboxes start while
// another evaluation still has the device. kbv run orders its own evaluations (DeviceTurns) and
// does not take these locks.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <ostream>
#include <thread>

#include "orchestrate/evaluation_run.hpp"
#include "orchestrate/visible_devices.hpp"

namespace kbv {

// The lock's name for `device` ("cpu", "cuda:N"): one per physical device, whatever numbering the
// process sees. cuda:N is the N-th entry of CUDA_VISIBLE_DEVICES when set (its UUID, or the
// physical index's UUID from NVML, else the index), the N-th GPU otherwise.
std::string device_lock_name(const std::string& device, const std::optional<std::string>& cuda_visible_devices,
                             const GpuInventory& host);

// Where the lock files live: $KBV_LOCK_DIR, else /tmp/kbv-device-locks (made sticky and
// world-writable, so that every user's kbv takes turns on one machine's devices).
std::string device_lock_dir();

class DeviceLock {
 public:
  using Clock = std::chrono::steady_clock;
  // Opens (or makes) DIR/NAME.lock and DIR/NAME.intent: regular files of root's or ours, never
  // through a link. Throws (std::runtime_error) when it cannot.
  DeviceLock(const std::string& dir, const std::string& name);
  DeviceLock(const DeviceLock&) = delete;
  DeviceLock& operator=(const DeviceLock&) = delete;
  ~DeviceLock();
  // Waits until the lock is held (exclusive, or shared) or `cancel` is set or `deadline` passes:
  // true when held. An exclusive waiter keeps new shared holders out while it waits.
  bool acquire(bool exclusive, const std::atomic<bool>* cancel = nullptr, std::optional<Clock::time_point> deadline = std::nullopt);
  // Lets the next one in; again, or never held: nothing.
  void release();
  bool held() const { return held_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  int intent_fd_ = -1;
  bool held_ = false;
};

// One kbv eval's turn on its device: a gate for its judge (fd 5 of kbv-judge --device-gate) that
// opens once the device's lock is held. The lock is waited for on a thread of its own, so the
// judge starts at once; end() (or the destructor) lets the device go and stops the wait.
class LockedTurn {
 public:
  // Throws std::system_error when the lock file or the gate cannot be made.
  LockedTurn(const std::string& lock_dir, const std::string& lock_name, bool exclusive);
  LockedTurn(const LockedTurn&) = delete;
  LockedTurn& operator=(const LockedTurn&) = delete;
  ~LockedTurn();
  int gate_fd() const { return gate_read_; }
  // The wait passed kMaxDeviceWaitSeconds: the gate was closed unopened.
  bool gave_up() const { return gave_up_; }
  // When the lock was taken and the gate opened; nullopt while waiting.
  std::optional<std::chrono::steady_clock::time_point> opened_at() const;
  // Blocks until the gate opened (true) or the wait gave up (false).
  bool wait_open();
  // A warm judge's next candidate (kbv-judge --serve --device-gate reads a byte before each): the
  // device goes to whoever waits for it, and the gate opens once more when the lock is held again
  // (with a wait of kMaxDeviceWaitSeconds of its own). So a batch holds the device one candidate
  // at a time, as separate kbv evals do.
  void again();
  void end();

 private:
  void wait_in_background();
  DeviceLock lock_;
  const bool exclusive_;
  int gate_read_ = -1, gate_write_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<bool> gave_up_{false};
  mutable std::mutex mutex_;
  std::optional<std::chrono::steady_clock::time_point> opened_;
  std::condition_variable settled_;  // opened_ set, or gave_up_
  std::thread waiter_;
};

// kbv eval's place on its device, set into `run`: timed on a GPU, the judge starts at once behind
// a LockedTurn's gate (its start-up is off the device's path); on the CPU, and untimed (a shared
// lock, mostly free at once), the lock is waited for before the judge starts (a judge starting
// ahead on the CPU would share the cores with the timing it waits for). `note`, when given, hears that it waits. Holds nothing with KBV_DEVICE_LOCK=0. Keep it
// alive until run_evaluation() returns.
struct EvalDeviceTurn {
  std::unique_ptr<LockedTurn> gated;
  std::unique_ptr<DeviceLock> held;
  // Set when the device stayed another's for kMaxDeviceWaitSeconds: no evaluation, an
  // internal_error saying so (the machine's, evaluated again).
  std::optional<std::string> gave_up;
  // Why `device` was not evaluated (gave_up), or why its judge ended without a verdict (its gate
  // was closed unopened at the deadline); nullopt when neither.
  std::optional<std::string> gave_up_reason(const std::string& device) const;
};
// The longest a kbv eval waits for its turn: another process holding the device longer than any
// evaluation lasts is stuck, or not an evaluation.
inline constexpr double kMaxDeviceWaitSeconds = 3600;
EvalDeviceTurn take_eval_turn(EvaluationRun& run, std::ostream* note);
// The turns of a batch of `runs` for one warm judge (run_evaluation_batch): always behind a gate
// that opens once per candidate, and each candidate lets the device go once its judge released
// it. Timed on a GPU the judge starts at once; otherwise take_eval_turn's rule: the first turn
// is waited for before the judge starts.
EvalDeviceTurn take_batch_turns(std::vector<EvaluationRun>& runs, std::ostream* note);

}  // namespace kbv
