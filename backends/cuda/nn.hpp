// Launchers of the CUDA kernels of the loss and its gradient's parts (backends/cuda/nn.cu):
// softmax and log-softmax along an axis, sparse softmax cross-entropy, one-hot. Internal to
// tapeflow::cuda.
#pragma once

#include <cstdint>

#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {

/// A tensor seen as [outer, n, inner] around the axis an op works along.
struct AxisSplit {
  std::int64_t outer = 1;
  std::int64_t n = 1;
  std::int64_t inner = 1;
};

/// y = softmax(x) (or log_softmax with `log`) along the middle axis of `split`.
template <class T>
void launch_softmax(const T* x, T* y, AxisSplit split, bool log, void* stream);

/// loss[r] = log(sum_j exp(x[r, j])) - x[r, labels[r]] over `rows` rows of `classes` logits;
/// labels must already be checked to lie in [0, classes).
template <class T, class I>
void launch_sparse_xent(const T* logits, const I* labels, T* loss, std::int64_t rows,
                        std::int64_t classes, void* stream);

/// out[o, d, i] = indices[o, i] == d ? on : off, for d in [0, depth) (`split.n` = depth).
template <class U, class I>
void launch_one_hot(const I* indices, U* out, AxisSplit split, U on, U off, void* stream);

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
