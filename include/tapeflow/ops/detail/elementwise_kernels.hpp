// The Eigen bodies of the elementwise runs declared in ops/detail/elementwise.hpp. Header-only
// programs get them through that header; with TAPEFLOW_PRECOMPILED they are compiled once in
// tapeflow::instantiations (src/instantiations/kernels.cpp) and programs skip Eigen's parse.
// IWYU pragma: private, include <tapeflow/ops.hpp>
#pragma once

#include <algorithm>
#include <cstdint>

#include <tapeflow/core/eigen.hpp>
#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/detail/elementwise.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

template <class T>
using VecMap = Eigen::TensorMap<Eigen::Tensor<T, 1, Eigen::RowMajor, Eigen::Index>>;
template <class T>
using ConstVecMap = Eigen::TensorMap<Eigen::Tensor<const T, 1, Eigen::RowMajor, Eigen::Index>>;

// Flattened: the whole Eigen expression is inlined, so an op's packet math (tanh's rational
// polynomial) interleaves across the unrolled packets instead of being one call per packet.
// A run of at least one packet whose length is no multiple of it ends with one packet over a
// copy of its last `packet` inputs, not Eigen's scalar loop: a transcendental op's scalar path
// costs about a packet's time per element. So every element of such a run takes the packet
// path, wherever the run is split (threads, fused chunks: Note [Fusion] keeps their runs at
// least 16 long); a run shorter than a packet (a single value) stays scalar, as TensorFlow's: a
// scalar's exp is std::exp's. The copy is taken first, so `out` may be `x` (in place).
template <class U, class T, class Rule>
TAPEFLOW_FLATTEN void unary_run(U* out, const T* x, std::int64_t n) {
  constexpr std::int64_t packet = Eigen::internal::packet_traits<T>::size;
  const std::int64_t body = n / packet * packet;
  if (packet == 1 || body == n || body == 0) {
    VecMap<U>(out, n) = Rule{}(ConstVecMap<T>(x, n));
    return;
  }
  alignas(64) T last_in[packet];
  alignas(64) U last_out[packet];
  std::copy_n(x + (n - packet), packet, last_in);
  VecMap<U>(out, body) = Rule{}(ConstVecMap<T>(x, body));
  VecMap<U>(last_out, packet) = Rule{}(ConstVecMap<T>(last_in, packet));
  std::copy_n(last_out + (body + packet - n), n - body, out + body);
}

// A broadcast value is copied into a small buffer so every case evaluates the same (map, map)
// expression: one kernel per op and dtype instead of one per broadcast pattern.
template <class U, class T, class Rule>
void binary_run(U* out, const T* a, bool a_contiguous, const T* b, bool b_contiguous,
                std::int64_t len) {
  const Rule rule{};
  if (a_contiguous && b_contiguous) {
    VecMap<U>(out, len) = rule(ConstVecMap<T>(a, len), ConstVecMap<T>(b, len));
    return;
  }
  constexpr std::int64_t chunk = 512;
  alignas(64) T fill[chunk];
  const T value = a_contiguous ? *b : *a;
  std::fill_n(fill, std::min(chunk, len), value);
  for (std::int64_t s = 0; s < len; s += chunk) {
    const std::int64_t n = std::min(chunk, len - s);
    ConstVecMap<T> xa(a_contiguous ? a + s : fill, n);
    ConstVecMap<T> xb(b_contiguous ? b + s : fill, n);
    VecMap<U>(out + s, n) = rule(xa, xb);
  }
}

}  // namespace detail
TAPEFLOW_END_NAMESPACE
