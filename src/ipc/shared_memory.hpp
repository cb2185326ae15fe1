#pragma once
// Memory both processes map: a memfd, handed over as an fd. Holds the CPU path's shared tensors
// and the two words through which the judge's and the sandbox's GPU streams signal each other
// (hop_words.hpp). The sandbox may write into any of it at any time: the judge copies what it
// reads before it trusts it.
#include <cstddef>
#include <string>

#include "ipc/unique_fd.hpp"

namespace kbv::ipc {

class SharedMemory {
 public:
  SharedMemory() = default;
  // A fresh memfd of `bytes` (sparse: pages exist once written), mapped read-write.
  static SharedMemory create(std::size_t bytes, const std::string& name);
  // Maps the other side's memfd; `bytes` is checked against the file's real size. (The judge's
  // memfds are sealed against shrinking: mapping one is safe whatever the other side does.)
  static SharedMemory attach(UniqueFd fd, std::size_t bytes);
  SharedMemory(SharedMemory&& o) noexcept;
  SharedMemory& operator=(SharedMemory&& o) noexcept;
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;
  ~SharedMemory();

  void* data() const { return data_; }
  std::size_t size() const { return size_; }
  int fd() const { return fd_.get(); }

 private:
  UniqueFd fd_;
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace kbv::ipc
