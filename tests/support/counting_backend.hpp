// A second backend for tests: host memory, kernels that count their calls and run the op's
// CPU math. It proves a backend slots in through the Backend concept, a platform and
// registered kernels, without any op, the tape or the tracer knowing of it.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include <tapeflow/backend/backend_concepts.hpp>
#include <tapeflow/backend/cpu/cpu_backend.hpp>
#include <tapeflow/backend/platform.hpp>
#include <tapeflow/core/any_tensor.hpp>
#include <tapeflow/core/errors.hpp>
#include <tapeflow/ops/kernel_registry.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>

namespace counting {
namespace tf = tapeflow;

/// One logical device's runtime: the CPU's memory and copies, its own stream count.
class Backend {
 public:
  struct Stream {
    int synchronized = 0;
  };
  struct Event {
    bool recorded = false;
  };
  static constexpr std::string_view device_type = "COUNTING";

  void* allocate(std::size_t bytes) { return host_.allocate(bytes); }
  void deallocate(void* p, std::size_t bytes) noexcept { host_.deallocate(p, bytes); }
  void copy_host_to_device(void* d, const void* s, std::size_t n, Stream&) { copy(d, s, n); }
  void copy_device_to_host(void* d, const void* s, std::size_t n, Stream&) { copy(d, s, n); }
  void copy_device_to_device(void* d, const void* s, std::size_t n, Stream&) { copy(d, s, n); }
  Stream& default_stream() noexcept { return stream_; }
  void record(Event& e, Stream&) noexcept { e.recorded = true; }
  void wait(Stream&, Event& e) noexcept { (void)e; }
  void synchronize(Stream& s) noexcept { ++s.synchronized; }
  [[nodiscard]] tf::backend::MemoryInfo memory_info() const noexcept { return host_.memory_info(); }
  void reset_peak() noexcept { host_.reset_peak(); }

 private:
  void copy(void* d, const void* s, std::size_t n) {
    tf::backend::Cpu::Stream cpu_stream;
    host_.copy_device_to_device(d, s, n, cpu_stream);
  }
  tf::backend::Cpu host_;
  Stream stream_;
};
static_assert(tf::backend::Backend<Backend>);

/// Calls of each op's counting kernel.
template <class Op>
inline std::atomic<int> calls{0};

/// The backend's id, registering it, its platform (one device, "/physical_device:COUNTING:0")
/// and its kernels for Mul and AddV2 (float, same-rank operands up to rank 2) on first use.
inline tf::backend::BackendId install();

/// Runs a binary op's CPU math on float operands of its output's rank.
template <class Op>
void run_binary(const Op& op, tf::AnyTensor& out, std::span<const tf::AnyTensor> in) {
  ++calls<Op>;
  if (in.size() != 2 || out.dtype() != tf::DType::float32 || in[0].rank() != out.rank() ||
      in[1].rank() != out.rank()) {
    throw tf::unimplemented(std::string(Op::name) +
                            ": the counting backend runs float operands of equal rank only");
  }
  auto with_rank = [&]<std::size_t R>() {
    auto o = out.unchecked_as<float, R>();
    op.compute(o, in[0].as<float, R>(), in[1].as<float, R>());
  };
  switch (out.rank()) {
    case 0:
      return with_rank.template operator()<0>();
    case 1:
      return with_rank.template operator()<1>();
    case 2:
      return with_rank.template operator()<2>();
    default:
      throw tf::unimplemented("counting backend: rank above 2");
  }
}

}  // namespace counting

template <>
struct tapeflow::kernel<tapeflow::ops::Mul, counting::Backend> {
  static constexpr std::array dtypes{tapeflow::DType::float32};  // others run on CPU:0
  static void run(const ops::Mul& op, AnyTensor& out, std::span<const AnyTensor> in) {
    counting::run_binary(op, out, in);
  }
};
template <>
struct tapeflow::kernel<tapeflow::ops::Add, counting::Backend> {
  static constexpr std::array dtypes{tapeflow::DType::float32};  // others run on CPU:0
  static void run(const ops::Add& op, AnyTensor& out, std::span<const AnyTensor> in) {
    counting::run_binary(op, out, in);
  }
};

inline tapeflow::backend::BackendId counting::install() {
  static const tf::backend::BackendId id = [] {
    auto const backend = tf::backend::register_backend("COUNTING");
    tf::register_kernel<tf::ops::Mul, Backend>(backend);
    tf::register_kernel<tf::ops::Add, Backend>(backend);
    tf::backend::register_platform(
        {"COUNTING",
         [] {
           return std::vector<tf::backend::PlatformDevice>{{"counting", 0}};
         },
         backend, true});
    return backend;
  }();
  return id;
}
