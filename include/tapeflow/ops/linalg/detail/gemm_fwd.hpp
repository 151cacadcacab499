// The CPU GEMM's declaration, for callers that only call it (MatMul's kernel). Its body,
// ops/linalg/detail/gemm.hpp, brings the micro-kernels and <immintrin.h>; header-only programs
// get it through matmul.hpp, while programs built with TAPEFLOW_PRECOMPILED link its
// specializations for every numeric element type from tapeflow::instantiations.
// IWYU pragma: private, include <tapeflow/ops/linalg/matmul.hpp>
#pragma once

#include <cstdint>

#include <tapeflow/backend/cpu/thread_pool.hpp>
#include <tapeflow/detail/macros.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {

/// Row-major C[m x n] = op(A) * op(B) (+ C when `accumulate`), op = transpose when the flag is
/// set. lda/ldb/ldc are row strides in elements of the matrices as stored. Runs on `pool`
/// (threads split C into tiles); problems too small to pay for threads run on the caller.
template <class T>
void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T const* a,
          std::int64_t lda, T const* b, std::int64_t ldb, T* c, std::int64_t ldc,
          bool accumulate = false,
          backend::cpu::ThreadPool& pool = backend::cpu::ThreadPool::global());

}  // namespace detail
TAPEFLOW_END_NAMESPACE
