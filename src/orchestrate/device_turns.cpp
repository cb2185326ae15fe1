#include "orchestrate/device_turns.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace kbv {

DeviceTurns::Turn::Turn(Turn&& other) noexcept : owner_(other.owner_), number_(other.number_), gate_read_(other.gate_read_) {
  other.owner_ = nullptr;
  other.gate_read_ = -1;
}

DeviceTurns::Turn::~Turn() { end(); }

void DeviceTurns::Turn::end() {
  // First the turn (which closes a gate never opened), then our read end: the gate is never
  // written while nobody could read it.
  if (owner_) owner_->end(number_);
  owner_ = nullptr;
  if (gate_read_ >= 0) ::close(gate_read_);
  gate_read_ = -1;
}

std::optional<std::chrono::steady_clock::time_point> DeviceTurns::Turn::opened_at() const {
  if (!owner_) return std::nullopt;
  std::lock_guard<std::mutex> lock(owner_->mutex_);
  auto it = owner_->opened_.find(number_);
  if (it == owner_->opened_.end()) return std::nullopt;
  return it->second;
}

DeviceTurns::~DeviceTurns() {
  for (auto& [number, fd] : gates_) ::close(fd);
}

DeviceTurns::Turn DeviceTurns::take() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe2 for a device gate");
  std::lock_guard<std::mutex> lock(mutex_);
  std::uint64_t number = next_++;
  gates_[number] = fds[1];
  open_current();
  return Turn(this, number, fds[0]);
}

void DeviceTurns::end(std::uint64_t number) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = gates_.find(number); it != gates_.end()) {  // ended before its turn came
    ::close(it->second);
    gates_.erase(it);
  }
  opened_.erase(number);
  ended_early_.insert(number);
  while (ended_early_.erase(current_)) ++current_;
  open_current();
}

void DeviceTurns::open_current() {
  auto it = gates_.find(current_);
  if (it == gates_.end()) return;
  // Recorded first: the judge may answer before this thread returns from the write.
  opened_[current_] = std::chrono::steady_clock::now();
  // One byte into an empty pipe whose read end the turn still holds: never blocks, never EPIPE.
  char go = 1;
  ssize_t n;
  do n = ::write(it->second, &go, 1);
  while (n < 0 && errno == EINTR);
  ::close(it->second);
  gates_.erase(it);
}

}  // namespace kbv
