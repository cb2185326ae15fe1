#include "cuda/shared_memory_scrub.hpp"

#include "cuda/driver_entry.hpp"

namespace kbv::cuda {
namespace {

// One block per SM at the largest shared-memory size a block may opt into; its threads store
// the pattern into every word. Volatile stores: nothing reads them in this kernel.
constexpr const char* kScrubPtx = R"PTX(
.version 7.0
.target sm_70
.address_size 64

.extern .shared .align 16 .b8 kbv_scrub_words[];

.visible .entry kbv_scrub_shared(.param .u32 words, .param .u32 pattern)
{
  .reg .pred %p<2>;
  .reg .b32 %r<8>;
  ld.param.u32 %r1, [words];
  ld.param.u32 %r2, [pattern];
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, kbv_scrub_words;
$L_loop:
  setp.ge.u32 %p1, %r3, %r1;
  @%p1 bra $L_done;
  shl.b32 %r6, %r3, 2;
  add.s32 %r7, %r5, %r6;
  st.volatile.shared.u32 [%r7], %r2;
  add.s32 %r3, %r3, %r4;
  bra.uni $L_loop;
$L_done:
  ret;
}
)PTX";

constexpr unsigned kThreads = 1024;
constexpr unsigned kBlocksPerSm = 2;  // the block scheduler need not give every SM exactly one

using ModuleLoadData = CUresult (*)(CUmodule*, const void*);
using ModuleGetFunction = CUresult (*)(CUfunction*, CUmodule, const char*);
using FuncSetAttribute = CUresult (*)(CUfunction, CUfunction_attribute, int);
using GetErrorName = CUresult (*)(CUresult, const char**);
using LaunchKernel = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                  CUstream, void**, void**);

std::string named(CUresult r) {
  static auto name_of = driver_function<GetErrorName>("cuGetErrorName");
  const char* name = nullptr;
  if (name_of) name_of(r, &name);
  return name ? name : "CUresult " + std::to_string(static_cast<int>(r));
}

}  // namespace

std::uint32_t SharedMemoryScrub::pattern_for(std::uint32_t seq) {
  // NaN (also NaN in each fp16 half and fp8 byte), +-FLT_MAX, then +-65504 in each fp16 half
  // (+-2.7e36 as fp32): fmaxf/__hmax drop a NaN operand, so max and min reductions over fp16 or
  // fp32 slots need finite extremes to break.
  constexpr std::uint32_t kPatterns[] = {0x7fffffffu, 0x7f7fffffu, 0xff7fffffu, 0x7bff7bffu, 0xfbfffbffu};
  return kPatterns[seq % 5];
}

std::unique_ptr<SharedMemoryScrub> SharedMemoryScrub::load(std::string* error) {
  static auto load_data = driver_function<ModuleLoadData>("cuModuleLoadData");
  static auto get_function = driver_function<ModuleGetFunction>("cuModuleGetFunction");
  static auto set_attribute = driver_function<FuncSetAttribute>("cuFuncSetAttribute");
  if (!load_data || !get_function || !set_attribute) {
    fail(error, "the driver lacks the module functions");
    return nullptr;
  }
  int device = 0, sms = 0, optin = 0;
  if (cudaGetDevice(&device) != cudaSuccess || cudaFree(nullptr) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess) {
    fail(error, std::string("querying the device: ") + cudaGetErrorString(cudaGetLastError()));
    return nullptr;
  }
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  CUresult r = load_data(&module, kScrubPtx);
  if (r == CUDA_SUCCESS) r = get_function(&function, module, "kbv_scrub_shared");
  if (r != CUDA_SUCCESS) {
    fail(error, "the driver did not load the shared-memory scrub kernel: " + named(r));
    return nullptr;
  }
  r = set_attribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin);
  if (r == CUDA_SUCCESS) r = set_attribute(function, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100);
  if (r != CUDA_SUCCESS) {
    fail(error, "the driver refused the scrub kernel's shared-memory size: " + named(r));
    return nullptr;
  }
  std::unique_ptr<SharedMemoryScrub> scrub(new SharedMemoryScrub());
  scrub->function_ = function;
  scrub->device_ = device;
  scrub->blocks_ = static_cast<unsigned>(sms) * kBlocksPerSm;
  scrub->shared_bytes_ = static_cast<unsigned>(optin);
  return scrub;
}

bool SharedMemoryScrub::queue(void* stream, std::uint32_t pattern, std::string* error) const {
  static auto launch = driver_function<LaunchKernel>("cuLaunchKernel");
  if (!launch) return fail(error, "the driver has no cuLaunchKernel");
  // The function belongs to the job's device's context: a candidate that made another device
  // current runs its work there, where this kernel cannot go (and has nothing to scrub for it).
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess || current != device_) {
    cudaGetLastError();
    return true;
  }
  std::uint32_t words = shared_bytes_ / 4;
  void* params[] = {&words, &pattern};
  CUresult r = launch(static_cast<CUfunction>(function_), blocks_, 1, 1, kThreads, 1, 1, shared_bytes_, static_cast<CUstream>(stream),
                      params, nullptr);
  if (r != CUDA_SUCCESS) return fail(error, "launching kbv's shared-memory scrub failed: " + named(r));
  return true;
}

}  // namespace kbv::cuda
