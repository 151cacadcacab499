#!/usr/bin/env python3
"""PyTorch CPU peer of bench/keras_mnist.bench.cpp: training examples/s of the handbook's MNIST
MLP and CNN, batch 50, one step = forward + crossentropy + backward + Adam, eager, on random
in-memory inputs (NCHW). Install: see bench/peers/torch_ops.py.

  /tmp/torchvenv/bin/python bench/peers/keras_mnist_torch.py [--steps N]

Prints the median examples/s of 5 timed runs of N steps (after warm-up) per model, with
torch's default threading (all cores).
"""
import argparse
import statistics
import time

import torch
from torch import nn

BATCH = 50


def mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 100), nn.ReLU(), nn.Linear(100, 10))


def cnn():
    return nn.Sequential(
        nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(7 * 7 * 64, 1024), nn.ReLU(), nn.Linear(1024, 10))


def measure(model, steps):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(1)
    x = torch.rand(BATCH, 1, 28, 28, generator=gen)
    y = torch.randint(0, 10, (BATCH,), generator=gen)
    loss_fn = nn.CrossEntropyLoss()

    def step():
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    for _ in range(10):
        step().item()
    rates = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(steps):
            loss = step()
        loss.item()
        rates.append(steps * BATCH / (time.perf_counter() - start))
    return statistics.median(rates)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}")
    print(f"mlp examples/s: {measure(mlp(), args.steps * 10):.0f}")
    print(f"cnn examples/s: {measure(cnn(), args.steps):.0f}")


if __name__ == "__main__":
    main()
