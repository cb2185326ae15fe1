#pragma once
// Element-wise passes over outputs and inputs of many GiB in blocks of a bounded size. A whole-
// tensor expression allocates temporaries of the tensor's size (a bool mask is a quarter of a
// float32 output, and summing it makes an int64 copy: twice the output), so at KernelBench's
// sizes the judge's own checks ran the device out of memory that the problem and the candidate
// had not used. Block by block, a pass needs at most a block's worth beside what it reads.
#include <cstdint>
#include <functional>
#include <vector>

#include <ATen/ATen.h>

namespace kbv::judge {

// Elements in a block: 16 Mi, so an int64 temporary of a block is 128 MiB.
constexpr std::int64_t kBlockElements = std::int64_t{1} << 24;

// Calls `f` with matching blocks of `same_shaped` (tensors of one shape, any strides, views of
// another process's memory included), each block at most `max_elements` elements, together
// covering every element once. A tensor with no elements is one (empty) block.
void for_each_block(const std::vector<at::Tensor>& same_shaped,
                    const std::function<void(const std::vector<at::Tensor>&)>& f,
                    std::int64_t max_elements = kBlockElements);

// How many elements `mask_of(block)` is true for, over every block (`mask_of` returns a bool
// tensor of its block's shape). Summed on the device: one read back at the end.
std::int64_t count_blockwise(const std::vector<at::Tensor>& same_shaped,
                             const std::function<at::Tensor(const std::vector<at::Tensor>&)>& mask_of,
                             std::int64_t max_elements = kBlockElements);

// Element-wise "same value" of a and b (NaN equal to NaN): the number of elements that differ.
std::int64_t count_different(const at::Tensor& a, const at::Tensor& b, std::int64_t max_elements = kBlockElements);

}  // namespace kbv::judge
