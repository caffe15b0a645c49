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
    fn()  # warm
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=10000)
    n = ap.parse_args().calls
    box = linkwise.load_chassis("dgx-h100")
    by_name = per_call_us(lambda: linkwise.collective("dgx-h100", minbytes="1M", maxbytes="1M"), n)
    loaded = per_call_us(lambda: linkwise.collective(box, minbytes="1M", maxbytes="1M"), n)
    print(f"{n} calls: by name {by_name:.1f} us/call ({by_name * n / 1e6:.2f} s), "
          f"loaded chassis {loaded:.1f} us/call ({loaded * n / 1e6:.2f} s)")


if __name__ == "__main__":
    main()
