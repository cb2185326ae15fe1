#pragma once
// Stream-ordered signals between two processes' GPU streams through words of pinned host memory
// both have mapped (a memfd registered with CUDA on each side): one stream writes a value when it
// gets there, the other waits until the word reaches it. CUDA IPC events would be the textbook
// tool, but they do not open across users or namespaces (bench/RESULTS.md, 2026-12-01).
#include <cstddef>
#include <cstdint>
#include <string>

namespace kbv::cuda {

// Registers [host, host + bytes) with CUDA as mapped memory; the device address of `host`, or
// 0 with `error` set.
std::uintptr_t register_host_words(void* host, std::size_t bytes, std::string* error);
void unregister_host_words(void* host);

// Queues on `stream` (a cudaStream_t as void*): wait until the word at `device_word` reaches
// `value` (wrap-safe), or write `value` there. False with `error` set when CUDA refuses.
bool stream_wait_word(void* stream, std::uintptr_t device_word, std::uint32_t value, std::string* error);
bool stream_write_word(void* stream, std::uintptr_t device_word, std::uint32_t value, std::string* error);
// As stream_wait_word, but until the word equals `value` exactly.
bool stream_wait_word_equal(void* stream, std::uintptr_t device_word, std::uint32_t value, std::string* error);

}  // namespace kbv::cuda
