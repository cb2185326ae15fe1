#include "ipc/shared_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace kbv::ipc {
namespace {

void* map(int fd, std::size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) throw std::runtime_error(std::string("mmap of shared memory: ") + std::strerror(errno));
  return p;
}

}  // namespace

SharedMemory SharedMemory::create(std::size_t bytes, const std::string& name) {
  if (bytes == 0) bytes = 1;
  SharedMemory m;
  m.fd_.reset(::memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!m.fd_) throw std::runtime_error(std::string("memfd_create: ") + std::strerror(errno));
  if (::ftruncate(m.fd_.get(), static_cast<off_t>(bytes)) != 0)
    throw std::runtime_error(std::string("ftruncate of shared memory: ") + std::strerror(errno));
  // Its size is fixed for good: the other side holds the fd, and a file shrunk under our
  // mapping would kill this process (SIGBUS) on the next read.
  if (::fcntl(m.fd_.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
    throw std::runtime_error(std::string("sealing shared memory: ") + std::strerror(errno));
  m.data_ = map(m.fd_.get(), bytes);
  m.size_ = bytes;
  return m;
}

SharedMemory SharedMemory::attach(UniqueFd fd, std::size_t bytes) {
  struct stat st {};
  if (!fd || ::fstat(fd.get(), &st) != 0 || st.st_size < 0 || static_cast<std::size_t>(st.st_size) < bytes || bytes == 0)
    throw std::runtime_error("shared memory handed over is smaller than announced");
  SharedMemory m;
  m.fd_ = std::move(fd);
  m.data_ = map(m.fd_.get(), bytes);
  m.size_ = bytes;
  return m;
}

SharedMemory::SharedMemory(SharedMemory&& o) noexcept
    : fd_(std::move(o.fd_)), data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}

SharedMemory& SharedMemory::operator=(SharedMemory&& o) noexcept {
  if (this != &o) {
    if (data_) ::munmap(data_, size_);
    fd_ = std::move(o.fd_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

SharedMemory::~SharedMemory() {
  if (data_) ::munmap(data_, size_);
}

}  // namespace kbv::ipc
