#!/usr/bin/env python3
"""Generates the op instantiations of the optional compiled target tapeflow::instantiations.

MAINTAINERS.md, "tapeflow::instantiations": under TAPEFLOW_PRECOMPILED, headers flag the common
`execute<Op, In...>` specializations (`precompiled_v`, include/tapeflow/ops/detail/precompiled.hpp)
so that they call `execute_precompiled`, which the library's sources (src/instantiations/*.cpp)
define once. A program linking the target then compiles neither those ops' kernels nor their tape
nodes, graph nodes and gradients (the closure of ops a gradient calls is instantiated inside the
library).

Usage: tools/gen_instantiations.py            rewrite the generated files
       tools/gen_instantiations.py --check    exit 1 when they are out of date (a CTest test)
"""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
HEADER = ROOT / "include/tapeflow/ops/detail/precompiled.hpp"
SOURCES = ROOT / "src/instantiations"
NUM_SOURCES = 4  # split so `-j2` builds the library in parallel and no file is huge

# float32 is what models train in; double programs (gradient checks) compile their own.
FLOATS = ["float"]
INTS = ["std::int32_t", "std::int64_t"]
MAX_RANK = 4


def T(dtype, rank):
    return f"Tensor<{dtype}, {rank}>"


def combos():
    """Yields (op type, [input types]) for every specialization to precompile."""
    binary_rank_pairs = [(r, r) for r in range(MAX_RANK + 1)]
    binary_rank_pairs += [(r, 0) for r in range(1, MAX_RANK + 1)]
    binary_rank_pairs += [(0, r) for r in range(1, MAX_RANK + 1)]
    binary_rank_pairs += [(r, 1) for r in range(2, MAX_RANK + 1)]
    binary_rank_pairs += [(1, r) for r in range(2, MAX_RANK + 1)]
    for op in ["Add", "Sub", "Mul", "Div", "Maximum", "Minimum", "Pow"]:
        for t in FLOATS:
            for a, b in binary_rank_pairs:
                yield f"ops::{op}", [T(t, a), T(t, b)]
    for op in ["Add", "Sub", "Mul"]:
        for t in INTS:
            for a, b in [(r, r) for r in range(3)] + [(1, 0), (2, 0)]:
                yield f"ops::{op}", [T(t, a), T(t, b)]
    for op in ["Neg", "Exp", "Log", "Sqrt", "Square", "Sign", "Abs", "Tanh", "Sigmoid", "Relu"]:
        for t in FLOATS:
            for r in range(MAX_RANK + 1):
                yield f"ops::{op}", [T(t, r)]
    for kind in ["sum", "mean", "max", "min"]:
        for t in FLOATS:
            for r in range(1, MAX_RANK + 1):
                for out in range(r + 1):
                    yield f"ops::Reduce<ReduceKind::{kind}, {out}>", [T(t, r)]
    for t in FLOATS:
        for r in range(MAX_RANK + 1):
            yield "ops::AddN", [T(t, r), T(t, r)]  # the tape's gradient accumulation
        for r in range(MAX_RANK + 1):
            for out in range(MAX_RANK + 1):
                yield f"ops::Reshape<{out}>", [T(t, r)]
        for r in (2, 3):
            yield "ops::MatMul", [T(t, r), T(t, r)]
        for r in (1, 2, 3):
            yield "ops::Softmax", [T(t, r)]
            yield "ops::LogSoftmax", [T(t, r)]
        for i in INTS:
            yield "ops::SparseSoftmaxCrossEntropyWithLogits", [T(t, 2), T(i, 1)]
        yield "ops::SoftmaxCrossEntropyWithLogits", [T(t, 2), T(t, 2)]
        for r in (2, 3, 4):
            yield f"ops::Transpose<{r}>", [T(t, r)]
        yield "ops::Conv2D", [T(t, 4), T(t, 4)]
        yield "ops::MaxPool", [T(t, 4)]
        yield "ops::AvgPool", [T(t, 4)]
        # The layers of tf.keras.applications (MobileNetV2, ResNet50).
        yield "ops::DepthwiseConv2dNative", [T(t, 4), T(t, 4)]
        yield "ops::FusedBatchNormV3", [T(t, 4)] + [T(t, 1)] * 4
        yield "ops::FusedBatchNormGradV3", [T(t, 4)] * 2 + [T(t, 1)] * 3
        yield "ops::FusedBatchNormScaleGradV3", [T(t, 4)] * 2 + [T(t, 1)] * 3
        yield "ops::FusedBatchNormGradGivenSumsV3", [T(t, 4)] * 2 + [T(t, 1)] * 5
        for r in (2, 4):
            yield "ops::Relu6", [T(t, r)]
    # Variable reads and writes, and the optimizers' updates (every program with a Variable or
    # a Keras optimizer runs them).
    scalar = T("float", 0)
    for r in range(MAX_RANK + 1):
        yield f"ops::ReadVariableOp<float, {r}>", []
        for kind in ["assign", "add", "sub"]:
            yield f"ops::VariableUpdateOp<float, {r}, VariableUpdate::{kind}>", [T("float", r)]
        grad = T("float", r)
        yield "ops::ResourceApplyGradientDescent", [scalar, grad]
        yield "ops::ResourceApplyKerasMomentum", [scalar, grad, scalar]
        yield "ops::ResourceApplyAdam", [scalar] * 6 + [grad]
        yield "ops::ResourceApplyRMSProp", [scalar] * 3 + [grad]
    yield "ops::ReadVariableOp<std::int64_t, 0>", []  # the optimizers' iterations
    yield "ops::VariableUpdateOp<std::int64_t, 0, VariableUpdate::add>", [T("std::int64_t", 0)]


def flag(op, inputs):
    args = ", ".join([op] + inputs)
    return f"template <> inline constexpr bool precompiled_v<{args}> = true;\n"


def instantiation(op, inputs):
    args = ", ".join([op] + inputs)
    params = ", ".join([f"const {op}&"] + [f"const {x}&" for x in inputs])
    return f"template execute_result_t<{args}>\nexecute_precompiled<{args}>({params});\n"


def header_text(items):
    body = "".join(flag(op, inputs) for op, inputs in items)
    return f"""// GENERATED by tools/gen_instantiations.py: do not edit.
// With TAPEFLOW_PRECOMPILED (set by linking tapeflow::instantiations), these specializations of
// detail::execute call detail::execute_precompiled, compiled once in the library instead of in
// every program (MAINTAINERS.md, "tapeflow::instantiations").
// IWYU pragma: private, include <tapeflow/ops.hpp>
#pragma once

#ifdef TAPEFLOW_PRECOMPILED
#include <cstdint>

#include <tapeflow/detail/macros.hpp>
#include <tapeflow/ops/array/reshape.hpp>
#include <tapeflow/ops/array/transpose.hpp>
#include <tapeflow/ops/detail/execute.hpp>
#include <tapeflow/ops/linalg/matmul.hpp>
#include <tapeflow/ops/math/add_n.hpp>
#include <tapeflow/ops/math/arithmetic.hpp>
#include <tapeflow/ops/math/unary.hpp>
#include <tapeflow/ops/nn/batch_norm.hpp>
#include <tapeflow/ops/nn/conv2d.hpp>
#include <tapeflow/ops/nn/cross_entropy.hpp>
#include <tapeflow/ops/nn/depthwise_conv2d.hpp>
#include <tapeflow/ops/nn/pooling.hpp>
#include <tapeflow/ops/nn/relu6.hpp>
#include <tapeflow/ops/nn/softmax.hpp>
#include <tapeflow/ops/reduce/reduce.hpp>
#include <tapeflow/ops/state/variable_ops.hpp>
#include <tapeflow/ops/training/resource_apply.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {{
using ops::ReduceKind;
// clang-format off
{body}// clang-format on
}}  // namespace detail
TAPEFLOW_END_NAMESPACE
#endif  // TAPEFLOW_PRECOMPILED
"""


def source_text(items, index):
    body = "".join(instantiation(op, inputs) for op, inputs in items)
    return f"""// GENERATED by tools/gen_instantiations.py: do not edit.
// Part {index + 1} of {NUM_SOURCES} of tapeflow::instantiations (MAINTAINERS.md).
#include <tapeflow/ops.hpp>

TAPEFLOW_BEGIN_NAMESPACE
namespace detail {{
using ops::ReduceKind;
// clang-format off
{body}// clang-format on
}}  // namespace detail
TAPEFLOW_END_NAMESPACE
"""


def main():
    items = list(combos())
    files = {HEADER: header_text(items)}
    for i in range(NUM_SOURCES):
        files[SOURCES / f"instantiations_{i}.cpp"] = source_text(items[i::NUM_SOURCES], i)
    check = "--check" in sys.argv[1:]
    stale = [p for p, text in files.items() if not p.exists() or p.read_text() != text]
    if check:
        for p in stale:
            print(f"out of date: {p.relative_to(ROOT)} (run tools/gen_instantiations.py)")
        return 1 if stale else 0
    for p in stale:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(files[p])
    print(f"{len(items)} specializations; wrote {len(stale)} file(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
