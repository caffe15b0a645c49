#!/usr/bin/env python3
"""Times N `collective` calls from Python, the loop bench/api_bench.cc times in C++
(docs/PERFORMANCE.md): one all-reduce size (1 MiB) on dgx-h100, by preset name and on a chassis
loaded once.

    PYTHONPATH=build/python python3 bench/python_collective.py [--calls 10000]
"""
import argparse
import time

import linkwise


def per_call_us(fn, calls):
    """(wall, CPU) microseconds per call: Google Benchmark's Time and CPU columns."""
    fn()  # warm
    w0, c0 = time.perf_counter(), time.process_time()
    for _ in range(calls):
        fn()
    return ((time.perf_counter() - w0) / calls * 1e6, (time.process_time() - c0) / calls * 1e6)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=10000)
    n = ap.parse_args().calls
    box = linkwise.load_chassis("dgx-h100")
    cases = {
        "by name": lambda: linkwise.collective("dgx-h100", minbytes="1M", maxbytes="1M"),
        "loaded chassis": lambda: linkwise.collective(box, minbytes="1M", maxbytes="1M"),
    }
    for name, fn in cases.items():
        wall, cpu = per_call_us(fn, n)
        print(f"{n} calls, {name}: {wall:.0f} us/call wall ({wall * n / 1e6:.2f} s), "
              f"{cpu:.0f} us/call CPU ({cpu * n / 1e6:.2f} s)")


if __name__ == "__main__":
    main()
