#!/usr/bin/env python3
"""Times one optimizer step on one GPU, as the PyTorch training stacks run it.

Usage: python3 scripts/gpu-optimizer-step.py OUT [--params 800000000] [--tensors 33]

A sharded model of --params fp32 parameters in --tensors flat tensors (FSDP1 keeps one flat
parameter per wrapped block), fp32 gradients. Timed, each after warm-up, median of repeats:
  composer_adamw   Composer's DecoupledAdamW.adamw loop (weight_decay 0: no param.mul_)
  clip_norm        clipping by norm: per-tensor vector_norm, the total, then grad.mul_
  foreach_adamw    torch.optim.AdamW(foreach=True), weight_decay 0.1
  fused_adamw      torch.optim.AdamW(fused=True)
  copy             one device-to-device copy of all parameters (4 bytes read, 4 written)
Writes OUT/optimizer-step.json.
"""
import argparse, json, math, os, statistics, time
import torch

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--params", type=int, default=800_000_000)
ap.add_argument("--tensors", type=int, default=33)
ap.add_argument("--repeats", type=int, default=10)
a = ap.parse_args()
os.makedirs(a.out, exist_ok=True)
dev = torch.device("cuda")
n = a.params // a.tensors
params = [torch.randn(n, device=dev) for _ in range(a.tensors)]
grads = [torch.randn(n, device=dev) * 1e-3 for _ in range(a.tensors)]
m = [torch.zeros(n, device=dev) for _ in range(a.tensors)]
v = [torch.zeros(n, device=dev) for _ in range(a.tensors)]
total = n * a.tensors


def timed(fn):
    for _ in range(2):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(a.repeats):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize()
        ts.append(s.elapsed_time(e) / 1e3)
    return statistics.median(ts)


step = [0]
def composer_adamw(lr=1e-4, b1=0.9, b2=0.95, eps=1e-8):
    step[0] += 1
    bc1, bc2 = 1 - b1 ** step[0], 1 - b2 ** step[0]
    for p, g, ea, es in zip(params, grads, m, v):
        ea.mul_(b1).add_(g, alpha=1 - b1)
        es.mul_(b2).addcmul_(g, g, value=1 - b2)
        denom = (es.sqrt() / math.sqrt(bc2)).add_(eps)
        p.addcdiv_(ea, denom, value=-lr / bc1)


def clip_norm(max_norm=1.0):
    norms = torch.stack([torch.linalg.vector_norm(g) for g in grads])
    coef = torch.clamp(max_norm / (torch.linalg.vector_norm(norms) + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef)


res = {"format": "linkwise-optimizer-step/1", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
       "device": torch.cuda.get_device_name(), "torch": torch.__version__, "params": total,
       "tensors": a.tensors, "method": "median of %d CUDA-event timings after 2 warm-up calls" % a.repeats}
res["composer_adamw_s"] = timed(composer_adamw)
res["clip_norm_s"] = timed(clip_norm)
dst = [torch.empty_like(p) for p in params]
res["copy_s"] = timed(lambda: [d.copy_(p) for d, p in zip(dst, params)])
del dst
for name, kw in (("foreach_adamw_s", {"foreach": True}), ("fused_adamw_s", {"fused": True})):
    ps = [torch.nn.Parameter(p) for p in params]
    for p, g in zip(ps, grads):
        p.grad = g
    opt = torch.optim.AdamW(ps, lr=1e-4, betas=(0.9, 0.95), weight_decay=0.1, **kw)
    res[name] = timed(opt.step)
    del opt, ps
torch.cuda.empty_cache()
copy_Bps = 8 * total / res["copy_s"]
res["copy_bytes_per_s"] = copy_Bps
for k in ("composer_adamw_s", "clip_norm_s", "foreach_adamw_s", "fused_adamw_s"):
    res[k.replace("_s", "_bytes_per_param_at_copy_rate")] = res[k] * copy_Bps / total
json.dump(res, open(os.path.join(a.out, "optimizer-step.json"), "w"), indent=1)
print(json.dumps(res, indent=1))
