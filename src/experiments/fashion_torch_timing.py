# SPDX-License-Identifier: MIT
# One-thread PyTorch epoch of the 784-100-10 network on FashionMNIST, the work
# src/experiments/fashion_timing.cpp does with models/mlp.hpp: per batch the minibatch potential
# (N/n) * sum cross-entropy + sum ||theta||^2 / 2, its gradient by autograd, and an SGD-with-
# momentum step. A benchmark: it prints times and decides nothing. Run by
# scripts/fashion-torch-timing with Debian's python3-torch (/usr/bin/python3).
import argparse
import gzip
import os
import statistics
import sys
import time

import numpy as np
import torch


def load(directory, kind, offset, shape):
    path = os.path.join(directory, "train-%s.gz" % kind)
    with gzip.open(path, "rb") as f:
        data = f.read()
    return np.frombuffer(data, dtype=np.uint8, offset=offset).reshape(shape)


def blas_libraries():
    """Shared libraries with 'blas' in their name mapped into this process."""
    found = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "blas" in os.path.basename(path).lower():
                found.add(os.path.realpath(path))
    return sorted(found)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--epochs", type=int, default=5, help="timed epochs; the median is reported")
    parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    parser.add_argument("--info", action="store_true", help="print torch and BLAS details, then stop")
    args = parser.parse_args()
    if args.batch < 1 or args.epochs < 1:
        sys.exit("fashion_torch_timing: --batch and --epochs must be positive")

    torch.set_num_threads(1)
    torch.manual_seed(20140601)
    pixels = load(args.data, "images-idx3-ubyte", 16, (-1, 784))
    labels = load(args.data, "labels-idx1-ubyte", 8, (-1,))
    x = torch.from_numpy(pixels.astype(np.float32) / 255.0)  # the data as torch users hold it
    y = torch.from_numpy(labels.astype(np.int64))
    n_rows = x.shape[0]
    steps = n_rows // args.batch  # one epoch: N/n batches, as the C++ program

    net = torch.nn.Sequential(torch.nn.Linear(784, 100), torch.nn.Sigmoid(), torch.nn.Linear(100, 10))
    with torch.no_grad():
        for p in net.parameters():
            p.normal_(0.0, 0.01)  # the SGHMC authors' init_sigma, as the C++ program
    optimiser = torch.optim.SGD(net.parameters(), lr=1e-6, momentum=0.9)
    scale = n_rows / args.batch

    if args.info:
        _ = net(x[:2])  # loads the BLAS
        print("torch %s, %d thread(s); BLAS libraries mapped: %s"
              % (torch.__version__, torch.get_num_threads(), ", ".join(blas_libraries()) or "none"))
        return

    seconds = []  # process CPU time, which other processes on a shared machine disturb less
    wall = []
    for epoch in range(args.epochs + 1):  # epoch 0 warms up, untimed
        start = time.perf_counter()
        cpu_start = time.process_time()
        order = torch.randperm(n_rows)
        for s in range(steps):
            rows = order[s * args.batch:(s + 1) * args.batch]
            optimiser.zero_grad(set_to_none=True)
            nll = torch.nn.functional.cross_entropy(net(x[rows]), y[rows], reduction="sum")
            prior = sum((p * p).sum() for p in net.parameters()) * 0.5
            (scale * nll + prior).backward()
            optimiser.step()
        if epoch > 0:
            seconds.append(time.process_time() - cpu_start)
            wall.append(time.perf_counter() - start)
    median = statistics.median(seconds)
    images = steps * args.batch
    print("torch batch %d: epoch %.4f s, %.0f ns/image (CPU time, median of %d; min %.4f s;"
          " wall %.4f s)" % (args.batch, median, median / images * 1e9, len(seconds), min(seconds),
                             statistics.median(wall)))


if __name__ == "__main__":
    main()
