#pragma once
// One device's turns, for evaluations started ahead (kbv run --prestart N): a judge starts while
// the evaluation before it still has the device, does its CPU start-up (interpreters, `import
// torch`, the sandboxes) and then waits at a gate, a pipe on which kbv writes one byte when
// every earlier turn on the device has ended. So the device still runs one evaluation at a time
// (timing and the strict checks need it to themselves), and start-up is off its path.
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <mutex>
#include <set>

namespace kbv {

class DeviceTurns {
 public:
  // A place in the device's order. Ending it (end() or the destructor, again: a no-op) lets the
  // next turn in; end it only once nothing of its candidate is left on the device and its judge
  // is done with it: at the judge's exit, or when the judge says so after its sandbox ended.
  class Turn {
   public:
    Turn(Turn&& other) noexcept;
    Turn& operator=(Turn&&) = delete;
    ~Turn();
    int gate_fd() const { return gate_read_; }  // for the judge's fd 5; readable once it is this turn's
    // When the gate was opened (the device became this turn's); nullopt while it is closed.
    std::optional<std::chrono::steady_clock::time_point> opened_at() const;
    void end();

   private:
    friend class DeviceTurns;
    Turn(DeviceTurns* owner, std::uint64_t number, int gate_read) : owner_(owner), number_(number), gate_read_(gate_read) {}
    DeviceTurns* owner_;
    std::uint64_t number_;
    int gate_read_;
  };

  DeviceTurns() = default;
  DeviceTurns(const DeviceTurns&) = delete;
  DeviceTurns& operator=(const DeviceTurns&) = delete;
  ~DeviceTurns();

  // The next turn; its gate is open at once when no earlier turn is still running. Throws
  // std::system_error when no pipe can be made.
  Turn take();

 private:
  void end(std::uint64_t number);
  void open_current();  // with mutex_ held

  std::mutex mutex_;
  std::uint64_t next_ = 0;     // the number the next take() hands out
  std::uint64_t current_ = 0;  // the lowest turn not ended: the one the device is for
  std::set<std::uint64_t> ended_early_;  // ended while an earlier turn still ran
  std::map<std::uint64_t, int> gates_;   // write ends of the gates not opened yet
  std::map<std::uint64_t, std::chrono::steady_clock::time_point> opened_;  // turns opened, not ended
};

}  // namespace kbv
