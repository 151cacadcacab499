// A device outside host memory, for tests without a GPU: its memory keeps every byte XOR-ed
// with a key, so host code that read device memory directly would see garbage. Its kernels
// (Mul, AddV2 on float tensors, and gradient descent's update of a variable in its memory, as
// the CUDA backend's optimizer kernels do it) work on that memory through
// AnyTensor::device_data and Variable::overwrite_device_data, so a correct result proves the
// executor copied inputs onto the device and read results back through the buffer's host copy
// (Note [Device memory] in MAINTAINERS.md).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <tapeflow/backend/device_memory.hpp>
#include <tapeflow/backend/memory_budget.hpp>
#include <tapeflow/backend/platform.hpp>
#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/ops/kernel_registry.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/training/detail/update_rules.hpp>
#include <tapeflow/ops/training/resource_apply.hpp>

#include "../../backends/cuda/elementwise.hpp"  // broadcasting index arithmetic

namespace scrambled {
namespace tf = tapeflow;

inline constexpr unsigned char key = 0x5a;

/// What crossed between host and device memory, over all XPU devices.
struct Traffic {
  std::atomic<int> to_host{0};
  std::atomic<int> from_host{0};
  std::atomic<int> on_device{0};
};
inline Traffic traffic;

inline void scramble(void* destination, const void* source, std::size_t bytes) {
  auto* to = static_cast<unsigned char*>(destination);
  auto const* from = static_cast<const unsigned char*>(source);
  for (std::size_t i = 0; i < bytes; ++i) {
    to[i] = static_cast<unsigned char>(from[i] ^ key);
  }
}

/// One logical XPU's memory: malloc'ed, scrambled, charged against its memory_limit.
class Memory final : public tf::backend::DeviceMemory {
 public:
  explicit Memory(const tf::backend::DeviceMemoryRequest& request)
      : budget_(request.device, request.limit_bytes) {}
  void* allocate(std::size_t bytes) override {
    if (!budget_.try_reserve(static_cast<std::int64_t>(bytes))) {
      throw tf::resource_exhausted(budget_.refusal(static_cast<std::int64_t>(bytes)));
    }
    return std::malloc(bytes);
  }
  void deallocate(void* pointer, std::size_t bytes) noexcept override {
    std::free(pointer);
    budget_.release(static_cast<std::int64_t>(bytes));
  }
  void copy_to_host(void* destination, const void* source, std::size_t bytes) override {
    ++traffic.to_host;
    scramble(destination, source, bytes);
  }
  void copy_from_host(void* destination, const void* source, std::size_t bytes) override {
    ++traffic.from_host;
    scramble(destination, source, bytes);
  }
  void copy_on_device(void* destination, const void* source, std::size_t bytes) override {
    ++traffic.on_device;
    std::memcpy(destination, source, bytes);
  }
  [[nodiscard]] tf::backend::MemoryInfo memory_info() const override {
    return {budget_.in_use(), budget_.peak()};
  }
  void reset_peak() override { budget_.reset_peak(); }

 private:
  tf::backend::MemoryBudget budget_;
};

/// The backend tag its kernels specialise on.
struct Backend {};

/// Calls of each op's XPU kernel.
template <class Op>
inline std::atomic<int> calls{0};

/// Registers the backend, its kernels and its platform ("XPU", two physical devices of
/// 4 MiB) on first use; tests call it before tf::config first looks at devices.
inline tf::backend::BackendId install();

inline float load(const unsigned char* device, std::int64_t i) {
  unsigned char plain[sizeof(float)];
  scramble(plain, device + i * static_cast<std::int64_t>(sizeof(float)), sizeof(float));
  float value = 0;
  std::memcpy(&value, plain, sizeof(float));
  return value;
}
inline void store(unsigned char* device, std::int64_t i, float value) {
  scramble(device + i * static_cast<std::int64_t>(sizeof(float)), &value, sizeof(float));
}

/// A binary op on float operands in device memory, broadcasting as NumPy does (with the CUDA
/// kernels' index arithmetic).
template <class Op>
void run_binary(const Op&, tf::AnyTensor& out, std::span<const tf::AnyTensor> in) {
  ++calls<Op>;
  if (in.size() != 2 || out.dtype() != tf::DType::float32) {
    throw tf::unimplemented(std::string(Op::name) + ": the XPU runs float operands only");
  }
  namespace cuda = tf::backend::cuda;
  if (out.rank() > static_cast<std::size_t>(cuda::Broadcast::max_rank)) {
    throw tf::unimplemented(std::string(Op::name) + ": the XPU broadcasts up to rank 8");
  }
  cuda::Broadcast index;
  index.rank = static_cast<int>(out.rank());
  std::copy(out.shape().dims().begin(), out.shape().dims().end(), index.out_dims);
  cuda::broadcast_strides(in[0].shape().dims(), out.shape().dims(), index.a_strides);
  cuda::broadcast_strides(in[1].shape().dims(), out.shape().dims(), index.b_strides);
  auto const* a = static_cast<const unsigned char*>(in[0].device_data());
  auto const* b = static_cast<const unsigned char*>(in[1].device_data());
  auto* o = static_cast<unsigned char*>(out.mutable_device_data());
  for (std::int64_t i = 0; i < out.num_elements(); ++i) {
    std::int64_t offset_a = 0;
    std::int64_t offset_b = 0;
    cuda::broadcast_offsets(index, i, offset_a, offset_b);
    store(o, i, Op::expr(load(a, offset_a), load(b, offset_b)));
  }
}

}  // namespace scrambled

template <>
struct tapeflow::kernel<tapeflow::ops::Mul, scrambled::Backend> {
  static void run(const ops::Mul& op, AnyTensor& out, std::span<const AnyTensor> in) {
    scrambled::run_binary(op, out, in);
  }
};
template <>
struct tapeflow::kernel<tapeflow::ops::Add, scrambled::Backend> {
  static void run(const ops::Add& op, AnyTensor& out, std::span<const AnyTensor> in) {
    scrambled::run_binary(op, out, in);
  }
};

// var -= lr * g in the variable's device memory (in place, or into a fresh buffer while a
// reader holds the old value), with the rule the CPU and CUDA kernels apply.
template <>
struct tapeflow::kernel<tapeflow::ops::ResourceApplyGradientDescent, scrambled::Backend> {
  static void run(const ops::ResourceApplyGradientDescent& op, AnyTensor& done,
                  std::span<const AnyTensor> in) {
    ++scrambled::calls<ops::ResourceApplyGradientDescent>;
    detail::update_rules::GradientDescent<float> const rule{
        *static_cast<const float*>(in[0].raw_data())};
    auto const* g = static_cast<const unsigned char*>(in[1].device_data());
    auto const [old_raw, out_raw] = op.var.overwrite_device_data();
    auto const* old = static_cast<const unsigned char*>(old_raw);
    auto* out = static_cast<unsigned char*>(out_raw);
    for (std::int64_t i = 0; i < in[1].num_elements(); ++i) {
      float value = 0;
      rule(value, scrambled::load(old, i), scrambled::load(g, i));
      scrambled::store(out, i, value);
    }
    bool const yes = true;
    scrambled::scramble(done.mutable_device_data(), &yes, sizeof(bool));
  }
};

inline tapeflow::backend::BackendId scrambled::install() {
  static const tf::backend::BackendId id = [] {
    auto const backend = tf::backend::register_backend("XPU");
    tf::register_kernel<tf::ops::Mul, Backend>(backend);
    tf::register_kernel<tf::ops::Add, Backend>(backend);
    tf::register_kernel<tf::ops::ResourceApplyGradientDescent, Backend>(backend);
    tf::backend::Platform platform{
        "XPU",
        [] {
          return std::vector<tf::backend::PlatformDevice>{{"xpu", 4 << 20}, {"xpu", 4 << 20}};
        },
        backend, false};
    platform.device_memory = [](const tf::backend::DeviceMemoryRequest& request) {
      return std::make_unique<Memory>(request);
    };
    tf::backend::register_platform(std::move(platform));
    return backend;
  }();
  return id;
}
