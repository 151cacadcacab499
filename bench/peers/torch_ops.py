#!/usr/bin/env python3
"""PyTorch CPU peer numbers for the tapeflow benchmarks.

Prints, for 1 thread and for all cores:
  * torch.matmul GFLOP/s on float32 squares (same sizes as bench/matmul.bench.cpp),
  * the time of one small op (`a + b` on 1-element tensors), the framework's per-op overhead,
  * conv2d forward+backward time for the MNIST-style layers (NCHW, batch 50):
      conv1: 1x28x28 -> 5x5x32 'same';  2x2 max-pool -> 32x14x14;  conv2: 5x5x64 'same'.

Every number is the median of repeated measurements after a warm-up.

Install into a throwaway venv. The PyPI wheel is built for CUDA and its dependencies pull in GBs
of CUDA packages; the CPU wheel index (download.pytorch.org/whl/cpu) is not reachable from the
dev machine. What works there (it has a CUDA 13 runtime under /usr/local/cuda-13.0, and the four
nvidia packages add the libraries it lacks, so `import torch` succeeds; it runs on CPU only):
  python3 -m venv /tmp/torchvenv
  /tmp/torchvenv/bin/pip install --no-deps torch nvidia-cufile nvidia-cusparselt-cu13 \
      nvidia-nvshmem-cu13 nvidia-nccl-cu13
  /tmp/torchvenv/bin/pip install filelock typing-extensions sympy networkx jinja2 fsspec numpy
  /tmp/torchvenv/bin/python bench/peers/torch_ops.py
Where the CPU index is reachable, `pip install torch --index-url
https://download.pytorch.org/whl/cpu` is the simpler choice.
"""

import argparse
import os
import statistics
import time

import torch
import torch.nn.functional as F


def median_seconds(fn, reps, warmup=3):
    """Median wall time of fn() over `reps` runs, after `warmup` untimed runs."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench_matmul(sizes):
    for n in sizes:
        a = torch.randn(n, n, dtype=torch.float32)
        b = torch.randn(n, n, dtype=torch.float32)
        c = torch.empty(n, n, dtype=torch.float32)
        # About 0.2-0.5 s of work per size.
        reps = max(5, int(3e10 / (2.0 * n**3)))
        s = median_seconds(lambda: torch.matmul(a, b, out=c), reps)
        print(f"  matmul {n:5d}^2 float32: {2.0 * n**3 / s * 1e-9:8.1f} GFLOP/s "
              f"({s * 1e3:.3f} ms)")


def bench_small_op(calls_per_sample=2000, samples=51):
    a = torch.ones(1)
    b = torch.ones(1)

    def run():
        for _ in range(calls_per_sample):
            a + b

    s = median_seconds(run, samples)
    print(f"  a + b on 1-element tensors: {s / calls_per_sample * 1e9:8.0f} ns per op "
          f"(median of {samples} x {calls_per_sample} calls)")


def bench_conv(reps):
    torch.manual_seed(0)
    x = torch.randn(50, 1, 28, 28)
    w1 = torch.randn(32, 1, 5, 5, requires_grad=True)
    b1 = torch.zeros(32, requires_grad=True)
    w2 = torch.randn(64, 32, 5, 5, requires_grad=True)
    b2 = torch.zeros(64, requires_grad=True)
    h = torch.randn(50, 32, 14, 14, requires_grad=True)
    g1 = torch.randn(50, 32, 28, 28)
    g2 = torch.randn(50, 64, 14, 14)
    params = (w1, b1, w2, b2, h)

    def clear():
        for p in params:
            p.grad = None

    def conv1():  # the input is data: gradients for weights and bias only
        clear()
        F.conv2d(x, w1, b1, padding="same").backward(g1)

    def conv2():  # the input is an activation: gradients for it, the weights and the bias
        clear()
        F.conv2d(h, w2, b2, padding="same").backward(g2)

    def both():  # conv1 -> 2x2 max-pool -> conv2, forward and backward through all three
        clear()
        y = F.conv2d(F.max_pool2d(F.conv2d(x, w1, b1, padding="same"), 2), w2, b2,
                     padding="same")
        y.backward(g2)

    for name, fn in (("conv1 5x5x32 28x28x1 ", conv1), ("conv2 5x5x64 14x14x32", conv2),
                     ("conv1+pool+conv2     ", both)):
        s = median_seconds(fn, reps)
        print(f"  {name} fwd+bwd, batch 50: {s * 1e3:8.3f} ms")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 1024, 2048])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, os.cpu_count() or 1])
    parser.add_argument("--conv-reps", type=int, default=30)
    args = parser.parse_args()

    print(f"torch {torch.__version__}, CPU capability {torch.backends.cpu.get_cpu_capability()}")
    for threads in dict.fromkeys(args.threads):  # dedupe, keep order
        torch.set_num_threads(threads)
        print(f"threads = {torch.get_num_threads()}")
        with torch.no_grad():
            bench_matmul(args.sizes)
            bench_small_op()
        bench_conv(args.conv_reps)


if __name__ == "__main__":
    main()
