#include "judge/l2_flush.hpp"

namespace kbv::judge {

L2Flush::L2Flush(const at::Device& device, std::int64_t l2_bytes) {
  if (!device.is_cuda() || l2_bytes <= 0) return;
  bytes_ = 2 * l2_bytes;  // 2 x L2 so the flush evicts every line, whatever the replacement policy
  buffer_ = at::empty({bytes_}, at::TensorOptions().dtype(at::kByte).device(device));
}

void L2Flush::flush() {
  if (!buffer_.defined()) return;
  // A different value each time keeps the write from being a no-op to any clever memory system.
  buffer_.fill_(static_cast<int64_t>(++value_));
}

}  // namespace kbv::judge
