#include "torch_host/shared_tensor.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <array>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAStream.h>

#include "cuda/driver_entry.hpp"
#include "ipc/message_fields.hpp"
#include "torch_host/memory.hpp"

namespace kbv::torch_host {
namespace {

using ipc::ProtocolError;

constexpr std::size_t kMaxRank = 16;
constexpr std::size_t kMaxOutputs = 64;
constexpr std::size_t kArenaAlignment = 256;

const std::array<std::pair<at::ScalarType, const char*>, 12> kDtypes{{
    {at::kFloat, "float32"},
    {at::kDouble, "float64"},
    {at::kHalf, "float16"},
    {at::kBFloat16, "bfloat16"},
    {at::kLong, "int64"},
    {at::kInt, "int32"},
    {at::kShort, "int16"},
    {at::kChar, "int8"},
    {at::kByte, "uint8"},
    {at::kBool, "bool"},
    {at::kComplexFloat, "complex64"},
    {at::kComplexDouble, "complex128"},
}};

std::string to_hex(const void* data, std::size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) {
    out += digits[p[i] >> 4];
    out += digits[p[i] & 15];
  }
  return out;
}

cudaIpcMemHandle_t handle_from_hex(const std::string& hex) {
  cudaIpcMemHandle_t h{};
  if (hex.size() != 2 * sizeof h.reserved) throw ProtocolError("an IPC handle must be " + std::to_string(2 * sizeof h.reserved) + " hex digits");
  for (std::size_t i = 0; i < sizeof h.reserved; ++i) {
    auto nib = [&](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      throw ProtocolError("an IPC handle has a non-hex digit");
    };
    h.reserved[i] = static_cast<char>(nib(hex[2 * i]) * 16 + nib(hex[2 * i + 1]));
  }
  return h;
}

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
  }
}

// The allocation that holds `ptr`: [base, base + bytes). Through the driver's entry point, so
// nothing links libcuda (CPU machines have none).
bool allocation_range(const void* ptr, std::uintptr_t& base, std::size_t& bytes) {
  using GetRange = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);
  static GetRange fn = cuda::driver_function<GetRange>("cuMemGetAddressRange");
  if (!fn) return false;
  CUdeviceptr b = 0;
  size_t n = 0;
  if (fn(&b, &n, reinterpret_cast<CUdeviceptr>(ptr)) != CUDA_SUCCESS) return false;
  base = static_cast<std::uintptr_t>(b);
  bytes = n;
  return true;
}

std::vector<std::int64_t> int_list(const nlohmann::json& j, const char* what) {
  if (!j.is_array() || j.size() > kMaxRank) throw ProtocolError(std::string(what) + ": not a list of at most 16 integers");
  std::vector<std::int64_t> out;
  for (const auto& v : j) {
    if (!v.is_number_integer()) throw ProtocolError(std::string(what) + ": not an integer");
    out.push_back(v.get<std::int64_t>());
  }
  return out;
}

struct ViewSpec {
  at::ScalarType dtype;
  std::vector<std::int64_t> sizes, strides;
  std::int64_t offset = 0;  // bytes into the buffer
  std::int64_t span = 0;    // bytes the view reaches from offset
};

ViewSpec parse_view(const ipc::Fields& d) {
  ViewSpec v;
  v.dtype = dtype_from_name(d.str("dtype", 32));
  v.sizes = int_list(d.array("sizes", kMaxRank), "sizes");
  v.strides = int_list(d.array("strides", kMaxRank), "strides");
  if (v.sizes.size() != v.strides.size()) throw ProtocolError("sizes and strides differ in length");
  v.offset = d.integer("offset", 0, std::numeric_limits<std::int64_t>::max() / 2);
  v.span = view_span_bytes(v.sizes, v.strides, static_cast<std::int64_t>(c10::elementSize(v.dtype)));
  // The span bounds the memory a view reaches, not its element count: a stride-0 view of a few
  // bytes may claim any count, and one whose product overflows is nothing torch can view.
  if (v.span > 0) {
    __int128 elements = 1;
    for (std::int64_t size : v.sizes)
      if ((elements *= size) > (static_cast<__int128>(1) << 62)) throw ProtocolError("a view of more elements than can be counted");
  }
  return v;
}

nlohmann::json view_json(const at::Tensor& t, std::int64_t byte_offset) {
  return {{"dtype", dtype_name(t.scalar_type())}, {"sizes", t.sizes().vec()}, {"strides", t.strides().vec()}, {"offset", byte_offset}};
}

}  // namespace

std::string dtype_name(at::ScalarType t) {
  for (const auto& [type, name] : kDtypes)
    if (type == t) return name;
  throw std::runtime_error(std::string("tensors of dtype ") + c10::toString(t) + " cannot cross the sandbox boundary");
}

at::ScalarType dtype_from_name(const std::string& name) {
  for (const auto& [type, n] : kDtypes)
    if (name == n) return type;
  throw ProtocolError("unknown dtype '" + name.substr(0, 32) + "'");
}

std::int64_t view_span_bytes(const std::vector<std::int64_t>& sizes, const std::vector<std::int64_t>& strides,
                             std::int64_t element_bytes) {
  if (sizes.size() != strides.size() || sizes.size() > kMaxRank) throw ProtocolError("bad rank");
  __int128 last = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0 || strides[i] < 0) throw ProtocolError("negative size or stride");
    if (sizes[i] == 0) return 0;
    last += static_cast<__int128>(sizes[i] - 1) * strides[i];
  }
  __int128 span = (last + 1) * element_bytes;
  if (span > (static_cast<__int128>(1) << 50)) throw ProtocolError("a view larger than 1 PiB");
  return static_cast<std::int64_t>(span);
}

// ------------------------------------------------------------------ judge: shared blocks

SharedBlock SharedBlock::allocate(const std::vector<at::Tensor>& likes, const at::Device& device) {
  SharedBlock b;
  std::vector<std::int64_t> offsets;
  std::int64_t end = 0;
  for (const auto& like : likes) {
    std::int64_t at_offset = (end + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
    offsets.push_back(at_offset);
    end = at_offset + view_span_bytes(like.sizes().vec(), like.strides().vec(), static_cast<std::int64_t>(like.element_size()));
  }
  b.bytes_ = std::max<std::int64_t>(end, 1);
  char* base = nullptr;
  if (device.is_cuda()) {
    // A dedicated allocation: exporting it exposes these bytes and nothing else of the judge.
    void* ptr = nullptr;
    cudaError_t malloc_error = cudaMalloc(&ptr, static_cast<std::size_t>(b.bytes_));
    if (malloc_error == cudaErrorMemoryAllocation) {
      // Outside the caching allocator: its free cache is given back first, as the allocator does
      // before it fails, and a failure is recorded as the allocator's are (blame_starvation weighs it).
      cudaGetLastError();
      c10::cuda::CUDACachingAllocator::emptyCache();
      malloc_error = cudaMalloc(&ptr, static_cast<std::size_t>(b.bytes_));
      if (malloc_error == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        record_out_of_memory(device, b.bytes_);
        throw std::runtime_error("cudaMalloc of a shared block: CUDA out of memory. Tried to allocate " + allocator_size_text(b.bytes_));
      }
    }
    cuda_check(malloc_error, "cudaMalloc of a shared block");
    cudaIpcMemHandle_t handle;
    if (cudaError_t e = cudaIpcGetMemHandle(&handle, ptr); e != cudaSuccess) {
      cudaFree(ptr);
      cuda_check(e, "cudaIpcGetMemHandle");
    }
    b.ipc_handle_hex_ = to_hex(handle.reserved, sizeof handle.reserved);
    base = static_cast<char*>(ptr);
    auto owner = std::shared_ptr<void>(ptr, [](void* p) { cudaFree(p); });
    b.device_memory_ = owner;
    for (std::size_t i = 0; i < likes.size(); ++i) {
      auto options = at::TensorOptions().dtype(likes[i].scalar_type()).device(device);
      b.tensors_.push_back(at::from_blob(base + offsets[i], likes[i].sizes(), likes[i].strides(), [owner](void*) {}, options));
    }
  } else {
    b.memory_ = std::make_shared<ipc::SharedMemory>(ipc::SharedMemory::create(static_cast<std::size_t>(b.bytes_), "kbv-block"));
    base = static_cast<char*>(b.memory_->data());
    auto owner = b.memory_;
    for (std::size_t i = 0; i < likes.size(); ++i) {
      auto options = at::TensorOptions().dtype(likes[i].scalar_type()).device(at::kCPU);
      b.tensors_.push_back(at::from_blob(base + offsets[i], likes[i].sizes(), likes[i].strides(), [owner](void*) {}, options));
    }
  }
  for (std::size_t i = 0; i < likes.size(); ++i) b.views_.push_back(view_json(b.tensors_[i], offsets[i]));
  return b;
}

nlohmann::json SharedBlock::descriptor() const {
  nlohmann::json d{{"bytes", bytes_}, {"views", views_}};
  if (memory_) {
    d["where"] = "memfd";
  } else {
    d["where"] = "cuda_ipc";
    d["handle"] = ipc_handle_hex_;
  }
  return d;
}

// ------------------------------------------------------------------ sandbox: import

std::vector<at::Tensor> import_block(const nlohmann::json& descriptor, ipc::UniqueFd fd, const at::Device& device) {
  ipc::Fields d(descriptor, "block");
  std::int64_t bytes = d.integer("bytes", 1, std::int64_t{1} << 50);
  const auto& views = d.array("views", 4096);
  std::string where = d.str("where", 16);
  char* base = nullptr;
  std::shared_ptr<void> owner;
  at::Device on = device;
  if (where == "cuda_ipc") {
    cudaIpcMemHandle_t h = handle_from_hex(d.str("handle", 256));
    void* ptr = nullptr;
    cuda_check(cudaIpcOpenMemHandle(&ptr, h, cudaIpcMemLazyEnablePeerAccess), "cudaIpcOpenMemHandle");
    owner = std::shared_ptr<void>(ptr, [](void* p) { cudaIpcCloseMemHandle(p); });
    base = static_cast<char*>(ptr);
  } else if (where == "memfd") {
    auto memory = std::make_shared<ipc::SharedMemory>(ipc::SharedMemory::attach(std::move(fd), static_cast<std::size_t>(bytes)));
    base = static_cast<char*>(memory->data());
    owner = memory;
    on = at::kCPU;
  } else {
    throw ProtocolError("unknown block kind '" + where.substr(0, 16) + "'");
  }
  std::vector<at::Tensor> out;
  for (std::size_t i = 0; i < views.size(); ++i) {
    ViewSpec v = parse_view(ipc::Fields(views[i], "block.views[" + std::to_string(i) + "]"));
    if (v.offset + v.span > bytes) throw ProtocolError("a view reaches past its block");
    out.push_back(at::from_blob(base + v.offset, v.sizes, v.strides, [owner](void*) {},
                                at::TensorOptions().dtype(v.dtype).device(on)));
  }
  return out;
}

// ------------------------------------------------------------------ sandbox: export outputs

nlohmann::json OutputExporter::describe(const std::vector<at::Tensor>& outputs) {
  if (outputs.size() > kMaxOutputs) throw std::runtime_error("forward returned more than 64 tensors");
  nlohmann::json out = nlohmann::json::array();
  std::size_t arena_used = 0;
  for (const at::Tensor& given : outputs) {
    at::Tensor t = given;
    if (!t.defined()) throw std::runtime_error("forward returned an undefined tensor");
    // The judge reads the memory, not torch's lazy conjugate and negative bits: an output that
    // carries one (`y.conj()`, a negative view) is made into the values it stands for first.
    if (t.is_conj() || t.is_neg()) t = t.resolve_conj().resolve_neg();
    // A view of an input the judge shared: say so (its memory is the judge's own).
    {
      const char* p = static_cast<const char*>(t.data_ptr());
      bool described = false;
      for (std::size_t i = 0; i < inputs_.size() && !described; ++i) {
        const at::Tensor& in = inputs_[i];
        if (!in.defined() || in.device() != t.device()) continue;
        const char* base = static_cast<const char*>(in.storage().data());
        std::size_t n = in.storage().nbytes();
        if (p >= base && p < base + n) {
          nlohmann::json d = view_json(t, p - base);
          d["where"] = "input";
          d["input"] = i;
          out.push_back(d);
          described = true;
        }
      }
      if (described) continue;
    }
    if (t.is_cuda()) {
      const char* p = static_cast<const char*>(t.data_ptr());
      // A handle every time, never a cached one: an allocation freed and another made at the
      // same address has a new handle, and the judge must map the new one.
      std::uintptr_t base = 0;
      std::size_t bytes = 0;
      cudaIpcMemHandle_t h;
      bool exportable = allocation_range(p, base, bytes) && cudaIpcGetMemHandle(&h, reinterpret_cast<void*>(base)) == cudaSuccess;
      cudaGetLastError();
      if (!exportable) {
        // Memory legacy IPC cannot share (cudaMallocAsync pools, cuMemCreate): a copy in
        // torch's own (cudaMalloc) memory, queued on the current stream inside the call.
        t = t.clone(at::MemoryFormat::Preserve);
        p = static_cast<const char*>(t.data_ptr());
        if (!allocation_range(p, base, bytes) || cudaIpcGetMemHandle(&h, reinterpret_cast<void*>(base)) != cudaSuccess) {
          cudaGetLastError();
          throw std::runtime_error("an output's memory cannot be shared with the judge");
        }
      }
      std::string hex = to_hex(h.reserved, sizeof h.reserved);
      nlohmann::json d = view_json(t, static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(p) - base));
      d["where"] = "cuda_ipc";
      d["handle"] = hex;
      out.push_back(d);
      continue;
    }
    // CPU: copied into the arena, packed.
    if (!arena_) throw std::runtime_error("no arena for CPU outputs");
    at::Tensor dense = t.contiguous();
    std::size_t n = dense.numel() * dense.element_size();
    std::size_t at_offset = (arena_used + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
    if (at_offset + n > arena_->size())
      throw std::runtime_error("outputs larger than the " + std::to_string(arena_->size()) + "-byte arena the judge sized from the reference");
    if (n) std::memcpy(static_cast<char*>(arena_->data()) + at_offset, dense.data_ptr(), n);
    arena_used = at_offset + n;
    nlohmann::json d = view_json(dense, static_cast<std::int64_t>(at_offset));
    d["where"] = "arena";
    out.push_back(d);
  }
  return out;
}

// ------------------------------------------------------------------ judge: read outputs

OutputReader::~OutputReader() {
  for (auto& [hex, m] : opened_)
    if (m.base) cudaIpcCloseMemHandle(m.base);
  cudaGetLastError();
}

std::vector<int> OutputReader::aliased_inputs(const nlohmann::json& outputs) {
  std::vector<int> out;
  if (!outputs.is_array()) return out;
  for (const auto& d : outputs)
    out.push_back(d.is_object() && d.value("where", "") == "input" && d.contains("input") && d["input"].is_number_integer()
                      ? d["input"].get<int>()
                      : -1);
  return out;
}

std::vector<at::Tensor> OutputReader::view(const nlohmann::json& outputs) {
  if (!outputs.is_array()) throw ProtocolError("outputs: not a list");
  if (outputs.size() > kMaxOutputs) throw ProtocolError("outputs: more than 64");
  std::vector<at::Tensor> views;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    ipc::Fields d(outputs[i], "outputs[" + std::to_string(i) + "]");
    ViewSpec v = parse_view(d);
    std::string where = d.str("where", 16);
    auto options = at::TensorOptions().dtype(v.dtype);
    if (where == "arena") {
      if (!arena_ || v.offset + v.span > static_cast<std::int64_t>(arena_->size()))
        throw ProtocolError("an output reaches past the arena");
      views.push_back(at::from_blob(static_cast<char*>(arena_->data()) + v.offset, v.sizes, v.strides, options.device(at::kCPU)));
    } else if (where == "input") {
      std::int64_t k = d.integer("input", 0, static_cast<std::int64_t>(inputs_.size()) - 1);
      const at::Tensor& in = inputs_[static_cast<std::size_t>(k)];
      if (!in.defined() || v.offset + v.span > static_cast<std::int64_t>(in.storage().nbytes()))
        throw ProtocolError("an output said to be a view of an input reaches past it");
      views.push_back(at::from_blob(static_cast<char*>(in.storage().mutable_data()) + v.offset, v.sizes, v.strides,
                                    options.device(in.device())));
    } else if (where == "cuda_ipc") {
      if (!device_.is_cuda()) throw ProtocolError("a CUDA output from a CPU evaluation");
      std::string hex = d.str("handle", 256);
      auto it = opened_.find(hex);
      if (it == opened_.end()) {
        // A candidate that empties its allocator's cache each call shows new allocations each
        // call: keep the 64 mappings used last, close the oldest.
        if (opened_.size() >= 64) {
          auto oldest = opened_.begin();
          for (auto o = opened_.begin(); o != opened_.end(); ++o)
            if (o->second.last_use < oldest->second.last_use) oldest = o;
          cudaIpcCloseMemHandle(oldest->second.base);
          cudaGetLastError();
          opened_.erase(oldest);
        }
        Mapping m;
        cudaError_t e = cudaIpcOpenMemHandle(&m.base, handle_from_hex(hex), cudaIpcMemLazyEnablePeerAccess);
        if (e != cudaSuccess) {
          cudaGetLastError();
          throw ProtocolError(std::string("the judge cannot open an output's memory: ") + cudaGetErrorString(e));
        }
        std::uintptr_t base = 0;
        std::size_t bytes = 0;
        if (!allocation_range(m.base, base, bytes)) {
          cudaIpcCloseMemHandle(m.base);
          throw ProtocolError("the judge cannot size an output's memory");
        }
        m.bytes = static_cast<std::int64_t>(bytes - (reinterpret_cast<std::uintptr_t>(m.base) - base));
        it = opened_.emplace(hex, m).first;
      }
      it->second.last_use = ++uses_;
      if (v.offset + v.span > it->second.bytes) throw ProtocolError("an output reaches past its allocation");
      views.push_back(at::from_blob(static_cast<char*>(it->second.base) + v.offset, v.sizes, v.strides, options.device(device_)));
    } else {
      throw ProtocolError("outputs[" + std::to_string(i) + "].where: unknown '" + where.substr(0, 16) + "'");
    }
  }
  return views;
}

}  // namespace kbv::torch_host
