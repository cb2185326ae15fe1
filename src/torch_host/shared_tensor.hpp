#pragma once
// Tensors that cross between the judge and the sandbox without their bytes travelling through
// the channel. A descriptor (JSON) says where the bytes are and how to view them:
//   {"dtype": "float32", "sizes": [...], "strides": [...], "offset": bytes into the buffer,
//    "where": "cuda_ipc" | "memfd" | "arena" | "input", ...}
// - Inputs and weights: the judge allocates each shared buffer on its own (a dedicated
//   cudaMalloc, or its own memfd), so sharing one never exposes other judge memory, and hands
//   the sandbox a legacy CUDA IPC handle (bench/RESULTS.md: opens across users and namespaces)
//   or the memfd.
// - Outputs: on the GPU the sandbox exports the allocation that holds each output and the judge
//   maps it read-only in spirit (it only reads it, after its own end-of-call event). CPU outputs
//   are copied by the sandbox into an arena the judge gave it. Either way the judge checks every
//   number of a descriptor against the memory it maps before it makes a view.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "ipc/shared_memory.hpp"
#include "ipc/unique_fd.hpp"

namespace kbv::torch_host {

std::string dtype_name(at::ScalarType t);          // "float32", ...; throws for unsupported types
at::ScalarType dtype_from_name(const std::string& name);  // throws ipc::ProtocolError

// The judge's side: one dedicated allocation (a cudaMalloc of its own, or a memfd) holding a set
// of tensors, each at a 256-byte aligned offset. One block per set (the weights, an input slot),
// so the sandbox opens one handle per set however many tensors it holds.
class SharedBlock {
 public:
  SharedBlock() = default;
  // Room for tensors shaped like `likes` (sizes, strides, dtype) on `device`; contents undefined.
  static SharedBlock allocate(const std::vector<at::Tensor>& likes, const at::Device& device);
  const std::vector<at::Tensor>& tensors() const { return tensors_; }
  // {"where": "cuda_ipc"|"memfd", "bytes", "handle"?, "views": [{dtype, sizes, strides, offset}]};
  // a memfd block's fd goes with the message (fd()).
  nlohmann::json descriptor() const;
  int fd() const { return memory_ ? memory_->fd() : -1; }
  std::int64_t bytes() const { return bytes_; }

 private:
  std::vector<at::Tensor> tensors_;
  nlohmann::json views_ = nlohmann::json::array();
  std::shared_ptr<ipc::SharedMemory> memory_;  // CPU
  std::shared_ptr<void> device_memory_;        // GPU: alive as long as the block, tensors or none
  std::string ipc_handle_hex_;                 // GPU
  std::int64_t bytes_ = 0;
};

// The sandbox's side: the tensors of a block (`fd` for a memfd one). The mapping lives as long as
// any of them.
std::vector<at::Tensor> import_block(const nlohmann::json& descriptor, ipc::UniqueFd fd, const at::Device& device);

// The sandbox's side of outputs: describes each output so the judge can read it.
class OutputExporter {
 public:
  OutputExporter(ipc::SharedMemory* arena, std::vector<at::Tensor> inputs)
      : arena_(arena), inputs_(std::move(inputs)) {}
  void set_inputs(std::vector<at::Tensor> inputs) { inputs_ = std::move(inputs); }
  // One call's outputs. CPU tensors are copied into the arena (from its start); CUDA tensors are
  // exported where they are, or copied into a fresh allocation first when their memory cannot be
  // exported (the copy runs on the current stream, inside the call). Throws std::runtime_error.
  nlohmann::json describe(const std::vector<at::Tensor>& outputs);

 private:
  ipc::SharedMemory* arena_;
  std::vector<at::Tensor> inputs_;
};

// The judge's side of outputs: views over what the sandbox described. Every descriptor is
// checked against the mapping it names (bounds, dtype, rank, strides); IPC mappings are opened
// once and kept until the reader is destroyed.
class OutputReader {
 public:
  OutputReader(const ipc::SharedMemory* arena, std::vector<at::Tensor> inputs, at::Device device)
      : arena_(arena), inputs_(std::move(inputs)), device_(device) {}
  ~OutputReader();
  OutputReader(const OutputReader&) = delete;
  OutputReader& operator=(const OutputReader&) = delete;
  void set_inputs(std::vector<at::Tensor> inputs) { inputs_ = std::move(inputs); }
  // Views (not copies) of the described outputs. Throws ipc::ProtocolError for anything off.
  std::vector<at::Tensor> view(const nlohmann::json& outputs);
  // Which outputs the sandbox said are views of an input (index per output; -1 when not).
  static std::vector<int> aliased_inputs(const nlohmann::json& outputs);

 private:
  struct Mapping {
    void* base = nullptr;
    std::int64_t bytes = 0;
    std::uint64_t last_use = 0;
  };
  std::uint64_t uses_ = 0;
  const ipc::SharedMemory* arena_;
  std::vector<at::Tensor> inputs_;
  at::Device device_;
  std::map<std::string, Mapping> opened_;  // IPC handle (hex) -> mapping
};

// Bytes a view with these sizes and strides reaches from its offset (0 when empty); throws
// ipc::ProtocolError for negative strides, huge ranks or overflow.
std::int64_t view_span_bytes(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides,
                             std::int64_t element_bytes);

}  // namespace kbv::torch_host
