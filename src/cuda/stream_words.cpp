#include "cuda/stream_words.hpp"

#include "cuda/driver_entry.hpp"

namespace kbv::cuda {
namespace {

using WaitValue32 = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
using WriteValue32 = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

}  // namespace

std::uintptr_t register_host_words(void* host, std::size_t bytes, std::string* error) {
  if (cudaError_t e = cudaHostRegister(host, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable); e != cudaSuccess) {
    fail(error, std::string("cudaHostRegister: ") + cudaGetErrorString(e));
    return 0;
  }
  void* device = nullptr;
  if (cudaError_t e = cudaHostGetDevicePointer(&device, host, 0); e != cudaSuccess) {
    cudaHostUnregister(host);
    fail(error, std::string("cudaHostGetDevicePointer: ") + cudaGetErrorString(e));
    return 0;
  }
  return reinterpret_cast<std::uintptr_t>(device);
}

void unregister_host_words(void* host) {
  cudaHostUnregister(host);
  cudaGetLastError();
}

bool stream_wait_word(void* stream, std::uintptr_t device_word, std::uint32_t value, std::string* error) {
  static WaitValue32 wait = driver_function<WaitValue32>("cuStreamWaitValue32");
  if (!wait) return fail(error, "the driver has no cuStreamWaitValue32");
  if (wait(static_cast<CUstream>(stream), static_cast<CUdeviceptr>(device_word), value, CU_STREAM_WAIT_VALUE_GEQ) != CUDA_SUCCESS)
    return fail(error, "cuStreamWaitValue32 failed");
  return true;
}

bool stream_wait_word_equal(void* stream, std::uintptr_t device_word, std::uint32_t value, std::string* error) {
  static WaitValue32 wait = driver_function<WaitValue32>("cuStreamWaitValue32");
  if (!wait) return fail(error, "the driver has no cuStreamWaitValue32");
  if (wait(static_cast<CUstream>(stream), static_cast<CUdeviceptr>(device_word), value, CU_STREAM_WAIT_VALUE_EQ) != CUDA_SUCCESS)
    return fail(error, "cuStreamWaitValue32 failed");
  return true;
}

bool stream_write_word(void* stream, std::uintptr_t device_word, std::uint32_t value, std::string* error) {
  static WriteValue32 write = driver_function<WriteValue32>("cuStreamWriteValue32");
  if (!write) return fail(error, "the driver has no cuStreamWriteValue32");
  if (write(static_cast<CUstream>(stream), static_cast<CUdeviceptr>(device_word), value, CU_STREAM_WRITE_VALUE_DEFAULT) != CUDA_SUCCESS)
    return fail(error, "cuStreamWriteValue32 failed");
  return true;
}

}  // namespace kbv::cuda
