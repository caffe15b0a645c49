#!/usr/bin/env python3
"""Three candidate appliances for one training job: step time and the link that limits each.

Runs as a plain script (or cell by cell in a notebook) with the linkwise Python module built
(docs/python.md) and matplotlib (Debian: python3-matplotlib):

    PYTHONPATH=build/python python3 examples/notebook.py [OUT.png]

It predicts the job's best plan on each candidate, prints a table, and saves a two-panel figure:
the step time of each candidate split into compute and what is not compute, and the busiest link
of each with the fraction of the step it is busy.
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

import linkwise  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# The job: a LoRA fine-tune of Llama 3 70B over a billion tokens.
JOB = dict(model="llama3-70b", mode="lora", tokens=1e9)
# The candidates: two presets and a chassis file.
CANDIDATES = ["training-appliance", "dgx-h100", os.path.join(HERE, "hgx-a100-4nic.yaml")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("png", nargs="?", default="notebook-step-time.png",
                    help="where to save the figure (default: ./notebook-step-time.png)")
    args = ap.parse_args()

    rows = []
    for source in CANDIDATES:
        box = linkwise.load_chassis(source)
        r = linkwise.train(box, **JOB)
        d = r.to_dict()
        busiest = d["links"][0] if d["links"] else {"link": "-", "busy_fraction": 0.0}
        rows.append({
            "chassis": box.name,
            "gpus": len(box.gpus),
            "plan": d["plan"],
            "step_time_s": d["step_time_s"],
            "compute_s": d["breakdown"]["compute_s"],
            "run_time_h": d["run_time_s"] / 3600,
            "link": busiest["link"],
            "busy": busiest["busy_fraction"],
            "bottleneck": d["bottleneck"],
        })

    print(f"{'chassis':<22}{'GPUs':>5}  {'plan':<28}{'step s':>9}{'run h':>9}  busiest link")
    for r in rows:
        print(f"{r['chassis']:<22}{r['gpus']:>5}  {r['plan']:<28}{r['step_time_s']:>9.3f}"
              f"{r['run_time_h']:>9.1f}  {r['link']} ({r['busy']:.0%} of the step)")

    for r in rows:
        print(f"{r['chassis']}: {r['bottleneck']}")

    names = [r["chassis"] for r in rows]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    compute = [r["compute_s"] for r in rows]
    rest = [max(r["step_time_s"] - r["compute_s"], 0.0) for r in rows]
    ax1.bar(names, compute, label="compute")
    ax1.bar(names, rest, bottom=compute, label="communication, bubbles, optimizer, I/O")
    ax1.set_ylabel("step time (s)")
    ax1.set_title(f"{JOB['model']} {JOB['mode']}: step time of the best plan")
    ax1.legend(fontsize=8)
    ax2.barh(names, [r["busy"] for r in rows], color="tab:red")
    for i, r in enumerate(rows):
        ax2.text(r["busy"] + 0.01, i, f"{r['link']} ({r['busy']:.0%})", va="center", fontsize=9)
    ax2.set_xlim(0, 1)
    ax2.set_xlabel("busiest link: fraction of the step it is busy")
    ax2.set_title("the link that limits each candidate")
    fig.tight_layout()
    out = os.path.abspath(args.png)
    fig.savefig(out, dpi=100)
    print(f"saved {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
