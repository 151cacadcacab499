// The CUDA reductions (Sum, Mean, Max, Min over any axes): the index arithmetic host code
// prepares and the launcher kernels.cpp calls. The algorithm itself is reduce_outputs.hpp.
// Internal to tapeflow::cuda.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/math/detail/scalar_math.hpp>  // TAPEFLOW_HOST_DEVICE

TAPEFLOW_BEGIN_NAMESPACE
namespace backend::cuda {

/// What a reduction computes (ops::ReduceKind, restated so this header stays light).
enum class ReduceOp { sum, mean, max, min };

/// An input's axes split into those kept (the output's, in order) and those reduced, each
/// with its element strides in the input. Adjacent axes of one kind are merged and axes of
/// size 1 dropped, so a [N, C] column sum is one kept axis of C and one reduced axis of N.
struct ReduceIndex {
  static constexpr int max_rank = 8;
  int kept_rank = 0;
  std::int64_t kept_dims[max_rank] = {};
  std::int64_t kept_strides[max_rank] = {};
  int reduced_rank = 0;
  std::int64_t reduced_dims[max_rank] = {};
  std::int64_t reduced_strides[max_rank] = {};
  std::int64_t reduced_count = 1;  ///< elements reduced into each output
  std::int64_t outputs = 1;
};

/// The index of reducing the axes flagged in `reduced` of an input of `dims` (row-major).
inline ReduceIndex make_reduce_index(std::span<const std::int64_t> dims,
                                     std::span<const bool> reduced) {
  ReduceIndex index;
  std::int64_t stride = 1;
  bool previous_reduced = false;
  bool have_previous = false;
  // Innermost first, so merging multiplies the dim of the axis just added.
  std::int64_t kept_dims[ReduceIndex::max_rank] = {};
  std::int64_t kept_strides[ReduceIndex::max_rank] = {};
  std::int64_t reduced_dims[ReduceIndex::max_rank] = {};
  std::int64_t reduced_strides[ReduceIndex::max_rank] = {};
  int kept = 0;
  int red = 0;
  for (std::size_t axis = dims.size(); axis-- > 0;) {
    std::int64_t const d = dims[axis];
    bool const r = reduced[axis];
    if (r) {
      index.reduced_count *= d;
    } else {
      index.outputs *= d;
    }
    if (d != 1) {
      if (have_previous && previous_reduced == r) {
        (r ? reduced_dims[red - 1] : kept_dims[kept - 1]) *= d;
      } else if (r) {
        reduced_dims[red] = d;
        reduced_strides[red++] = stride;
      } else {
        kept_dims[kept] = d;
        kept_strides[kept++] = stride;
      }
      previous_reduced = r;
      have_previous = true;
    }
    stride *= d;
  }
  // Stored outermost first (row-major order of the output and of the reduced elements).
  index.kept_rank = kept;
  for (int i = 0; i < kept; ++i) {
    index.kept_dims[i] = kept_dims[kept - 1 - i];
    index.kept_strides[i] = kept_strides[kept - 1 - i];
  }
  index.reduced_rank = red;
  for (int i = 0; i < red; ++i) {
    index.reduced_dims[i] = reduced_dims[red - 1 - i];
    index.reduced_strides[i] = reduced_strides[red - 1 - i];
  }
  return index;
}

/// The input offset of element `i` (row-major) of the axes `dims` with `strides`.
TAPEFLOW_HOST_DEVICE inline std::int64_t strided_offset(int rank, const std::int64_t* dims,
                                                        const std::int64_t* strides,
                                                        std::int64_t i) {
  std::int64_t offset = 0;
  for (int axis = rank - 1; axis >= 0; --axis) {
    offset += (i % dims[axis]) * strides[axis];
    i /= dims[axis];
  }
  return offset;
}

/// Stream-ordered device memory for a launch's temporaries: the device's allocator, seen
/// through two functions so the .cu file needs no allocator header.
struct ScratchMemory {
  void* (*allocate)(void* context, std::size_t bytes) = nullptr;
  void (*deallocate)(void* context, void* pointer, std::size_t bytes) = nullptr;
  void* context = nullptr;
};

/// Runs reduce_outputs (reduce_outputs.hpp) on a GPU, on `stream` (a cudaStream_t), its
/// partials in `scratch`; instantiated in reduce.cu.
template <ReduceOp Op, class T>
void launch_reduce(const T* in, T* out, const ReduceIndex& index, const ScratchMemory& scratch,
                   void* stream);

}  // namespace backend::cuda
TAPEFLOW_END_NAMESPACE
