#!/usr/bin/env python3
"""Measure what one GPU's compute runs at, by shape, as the training and serving models count it.

    python3 scripts/gpu-compute-shapes.py OUT_DIR [--sustained-s 45]

Writes OUT_DIR/compute-shapes.json (format linkwise-compute-shapes/1) and OUT_DIR/smi.csv (nvidia-smi
sampled every 100 ms through the whole run: SM and memory clocks, power, temperature, throttle reasons).

What is measured (each a median of timed repetitions after warm-up, CUDA events, random normal data
unless said otherwise):
  gemm      bf16 GEMMs of the layers of common models at several token counts: the forward (tokens x n x k,
            torch.nn.functional.linear), the activation gradient (tokens x k x n) and the weight gradient
            (n x k reducing over the tokens), plus square GEMMs, one of them on zeros (the power a GEMM draws
            depends on its data, and so does the clock it holds)
  decode    thin bf16 GEMMs (1..512 rows) of serving's decode steps: time and weight bytes read per second
  fp8       torch._scaled_mm (e4m3, per-tensor scales, bf16 out) at square and layer shapes
  attention torch's scaled_dot_product_attention, causal, bf16, head dim 128, flash and cuDNN back ends,
            forward and forward+backward, by sequence length
  eager     element-wise kernels as eager PyTorch runs them (norms, activations, dropout, softmax, cross
            entropy over a large vocabulary): bytes moved per second against the device-local copy
  sustained one 8192^3 bf16 GEMM repeated for --sustained-s seconds: TFLOP/s in one-second windows beside
            the sampled clocks and power
The figures are held against linkwise's compute model in docs/VALIDATION.md; none of them is read by the
model.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

DEV = "cuda"
BF16 = torch.bfloat16


def log(*a):
    print(*a, flush=True)


def timed(fn, reps, warmup=3):
    """Median milliseconds of one call of fn over reps calls, each timed with its own CUDA events."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2], times[0], times[-1]


def reps_for(flops, target_ms=60.0, peak=8e14):
    est_ms = max(flops / peak * 1e3, 0.005)
    return int(min(50, max(5, target_ms / est_ms)))


# Layers as the models define them: (name, hidden, qkv_out, attn_out_in, ffn_up_out, ffn_down_in).
# qkv_out = (heads + 2 kv_heads) x head_dim / tp; ffn_up_out counts gate and up of gated FFNs.
LAYERS = [
    ("llama3-8b", 4096, 6144, 4096, 28672, 14336),  # 32 q, 8 kv heads, ffn 14336 gated
    ("llama2-7b", 4096, 12288, 4096, 22016, 11008),  # 32 heads MHA, ffn 11008 gated
    ("mpt-7b", 4096, 12288, 4096, 16384, 16384),  # 32 heads MHA, ffn 4h GELU
    ("mpt-13b", 5120, 15360, 5120, 20480, 20480),  # 40 heads MHA, ffn 4h
    ("llama3-70b-tp2", 8192, 5120, 4096, 28672, 14336),  # 64 q, 8 kv heads, ffn 28672 gated, tp 2
    ("llama3-70b-tp8", 8192, 1280, 1024, 7168, 3584),
    ("gpt3-175b-tp8", 12288, 4608, 1536, 6144, 6144),  # 96 heads, ffn 4h, tp 8
]
TOKENS = [2048, 4096, 8192, 16384]


def gemm_section(res):
    out = []
    torch.manual_seed(0)

    def one(label, m, n, k, kind, data="randn"):
        # forward: X (m x k) . W^T (W n x k) = (m x n); dgrad: dY (m x n) . W (n x k) = (m x k);
        # wgrad: dY^T (n x m) . X (m x k) = (n x k).  All three are 2 m n k FLOPs.
        mk = (lambda *s: torch.zeros(*s, device=DEV, dtype=BF16)) if data == "zeros" else (
            lambda *s: torch.randn(*s, device=DEV, dtype=BF16))
        if kind == "fwd":
            x, w = mk(m, k), mk(n, k)
            fn = lambda: F.linear(x, w)
        elif kind == "dgrad":
            dy, w = mk(m, n), mk(n, k)
            fn = lambda: torch.matmul(dy, w)
        else:
            dy, x = mk(m, n), mk(m, k)
            fn = lambda: torch.matmul(dy.t(), x)
        flops = 2.0 * m * n * k
        med, lo, hi = timed(fn, reps_for(flops))
        r = dict(label=label, pass_=kind, m=m, n=n, k=k, data=data, time_ms=med, min_ms=lo, max_ms=hi,
                 tflops=flops / (med * 1e-3) / 1e12)
        out.append(r)
        return r

    for s in [1024, 2048, 4096, 8192, 16384]:
        r = one("square", s, s, s, "fwd")
        log(f"square {s}: {r['tflops']:.0f} TFLOP/s")
    r = one("square-zeros", 8192, 8192, 8192, "fwd", data="zeros")
    log(f"square 8192 zeros: {r['tflops']:.0f} TFLOP/s")
    for name, h, qkv, attn_in, up, down_in in LAYERS:
        toks = TOKENS if name in ("llama3-8b", "mpt-7b") else [4096, 16384]
        for t in toks:
            for gname, n, k in (("qkv", qkv, h), ("proj", h, attn_in), ("up", up, h), ("down", h, down_in)):
                for kind in ("fwd", "dgrad", "wgrad"):
                    one(f"{name}/{gname}", t, n, k, kind)
            fw = [x for x in out if x["label"].startswith(name + "/") and x["m"] == t and x["pass_"] == "fwd"]
            log(f"{name} tokens {t}: fwd " + ", ".join(f"{x['label'].split('/')[1]} {x['tflops']:.0f}" for x in fw))
        # the LM head at 8192 tokens (vocabulary from the model: 128256 Llama 3, 32000 Llama 2, 50368 MPT)
    for name, h, vocab in (("llama3-8b", 4096, 128256), ("mpt-7b", 4096, 50368), ("llama2-7b", 4096, 32000)):
        for kind in ("fwd", "dgrad", "wgrad"):
            one(f"{name}/lm_head", 8192, vocab, h, kind)
    res["gemm"] = out


def decode_section(res):
    out = []
    torch.manual_seed(1)
    for name, n, k in (("llama3-8b/qkv", 6144, 4096), ("llama3-8b/up", 28672, 4096), ("llama3-8b/down", 4096, 14336),
                       ("llama3-70b-tp2/qkv", 5120, 8192), ("llama3-70b-tp2/up", 28672, 8192),
                       ("llama3-70b-tp2/down", 8192, 14336), ("llama3-70b/up", 57344, 8192)):
        w = torch.randn(n, k, device=DEV, dtype=BF16)
        for m in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512):
            x = torch.randn(m, k, device=DEV, dtype=BF16)
            med, lo, hi = timed(lambda: F.linear(x, w), 30)
            wbytes = 2.0 * n * k
            out.append(dict(label=name, m=m, n=n, k=k, time_ms=med, min_ms=lo, max_ms=hi,
                            weight_GBps=wbytes / (med * 1e-3) / 1e9, tflops=2.0 * m * n * k / (med * 1e-3) / 1e12))
        row = [x for x in out if x["label"] == name]
        log(f"decode {name}: " + ", ".join(f"m{x['m']} {x['weight_GBps']:.0f}GB/s" for x in row))
    res["decode"] = out


def fp8_section(res):
    out = []
    if not hasattr(torch, "_scaled_mm"):
        res["fp8"] = {"error": "torch._scaled_mm not available"}
        return
    f8 = torch.float8_e4m3fn
    one_scale = torch.ones((), device=DEV, dtype=torch.float32)
    shapes = [("square", s, s, s) for s in (4096, 8192, 16384)]
    shapes += [("llama3-8b/" + g, 8192, n, k) for g, n, k in (("qkv", 6144, 4096), ("proj", 4096, 4096),
                                                              ("up", 28672, 4096), ("down", 4096, 14336))]
    shapes += [("llama3-70b-tp2/" + g, 8192, n, k) for g, n, k in (("qkv", 5120, 8192), ("up", 28672, 8192),
                                                                   ("down", 8192, 14336))]
    for label, m, n, k in shapes:
        try:
            a = (torch.randn(m, k, device=DEV) * 0.5).to(f8)
            b = (torch.randn(n, k, device=DEV) * 0.5).to(f8).t()  # k x n, column-major as cuBLASLt wants
            fn = lambda: torch._scaled_mm(a, b, scale_a=one_scale, scale_b=one_scale, out_dtype=BF16)
            flops = 2.0 * m * n * k
            med, lo, hi = timed(fn, reps_for(flops, peak=1.6e15))
            out.append(dict(label=label, m=m, n=n, k=k, time_ms=med, min_ms=lo, max_ms=hi,
                            tflops=flops / (med * 1e-3) / 1e12))
            log(f"fp8 {label} {m}x{n}x{k}: {out[-1]['tflops']:.0f} TFLOP/s")
        except Exception as e:  # noqa: BLE001 - recorded, the run goes on
            out.append(dict(label=label, m=m, n=n, k=k, error=repr(e)[:300]))
            log(f"fp8 {label}: {e!r}"[:300])
    res["fp8"] = out


def attention_section(res):
    out = []
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except Exception as e:  # noqa: BLE001
        res["attention"] = {"error": repr(e)}
        return
    backends = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]
    heads, d = 32, 128
    for seq in (1024, 2048, 4096, 8192, 16384, 32768):
        b = max(1, 16384 // seq)
        q = torch.randn(b, heads, seq, d, device=DEV, dtype=BF16, requires_grad=True)
        kk = torch.randn(b, heads, seq, d, device=DEV, dtype=BF16, requires_grad=True)
        v = torch.randn(b, heads, seq, d, device=DEV, dtype=BF16, requires_grad=True)
        # causal forward: QK^T and PV over the lower triangle, 2 x 2 b h s^2 d / 2 FLOPs; backward 2.5x that
        fwd_flops = 2.0 * b * heads * seq * seq * d
        for bname, be in backends:
            try:
                with sdpa_kernel(be):
                    f = lambda: F.scaled_dot_product_attention(q, kk, v, is_causal=True)
                    med, lo, hi = timed(f, reps_for(fwd_flops, peak=5e14))
                    o = F.scaled_dot_product_attention(q, kk, v, is_causal=True)
                    g = torch.randn_like(o)

                    def fb():
                        y = F.scaled_dot_product_attention(q, kk, v, is_causal=True)
                        torch.autograd.grad(y, (q, kk, v), g)

                    med2, lo2, hi2 = timed(fb, reps_for(3.5 * fwd_flops, peak=5e14))
                out.append(dict(backend=bname, batch=b, heads=heads, head_dim=d, seq=seq, causal=True,
                                fwd_ms=med, fwd_tflops=fwd_flops / (med * 1e-3) / 1e12, fwd_bwd_ms=med2,
                                fwd_bwd_tflops=3.5 * fwd_flops / (med2 * 1e-3) / 1e12))
                log(f"attention {bname} seq {seq} b {b}: fwd {out[-1]['fwd_tflops']:.0f}, "
                    f"fwd+bwd {out[-1]['fwd_bwd_tflops']:.0f} TFLOP/s")
            except Exception as e:  # noqa: BLE001
                out.append(dict(backend=bname, seq=seq, error=repr(e)[:300]))
                log(f"attention {bname} seq {seq}: {e!r}"[:300])
        del q, kk, v
    res["attention"] = out


def eager_section(res):
    out = []
    t, h = 8192, 4096
    x = torch.randn(t, h, device=DEV, dtype=BF16)
    y = torch.randn(t, h, device=DEV, dtype=BF16)
    up = torch.randn(t, 2 * 14336, device=DEV, dtype=BF16)
    w = torch.ones(h, device=DEV, dtype=BF16)
    bsz = lambda *ts: sum(z.numel() * z.element_size() for z in ts)
    big = torch.empty(512 * 2**20, device=DEV, dtype=torch.uint8)
    big2 = torch.empty_like(big)
    cases = [
        ("copy 512MiB", lambda: big2.copy_(big), 2 * big.numel()),
        ("add", lambda: x + y, 3 * bsz(x)),
        ("layer_norm", lambda: F.layer_norm(x, (h,), w, w), 2 * bsz(x)),
        ("rms_norm", lambda: F.rms_norm(x, (h,), w) if hasattr(F, "rms_norm") else x, 2 * bsz(x)),
        ("gelu", lambda: F.gelu(x), 2 * bsz(x)),
        ("swiglu eager (silu(gate) * up)", lambda: F.silu(up[:, :14336]) * up[:, 14336:], 0),
        ("dropout p=0.1", lambda: F.dropout(x, 0.1, training=True), 2 * bsz(x) + x.numel()),
        ("softmax fp32 over 32x2048x2048", None, 0),
        ("cross_entropy bf16 logits 8192x128256", None, 0),
    ]
    # swiglu eager: silu reads gate, writes a; multiply reads a and up, writes out: 5 x t x 14336 x 2 bytes
    cases[5] = (cases[5][0], cases[5][1], 5 * t * 14336 * 2)
    s = torch.randn(32, 2048, 2048, device=DEV, dtype=torch.float32)
    cases[7] = (cases[7][0], lambda: torch.softmax(s, dim=-1), 2 * bsz(s))
    logits = torch.randn(8192, 128256, device=DEV, dtype=BF16)
    labels = torch.randint(0, 128256, (8192,), device=DEV)
    # cross entropy forward: log_softmax reads bf16 logits, writes them fp32 (upcast) and reads them back
    cases[8] = (cases[8][0], lambda: F.cross_entropy(logits.float(), labels), 0)
    for name, fn, nbytes in cases:
        try:
            med, lo, hi = timed(fn, 20)
            r = dict(name=name, time_ms=med, min_ms=lo, max_ms=hi, bytes=nbytes)
            if nbytes:
                r["GBps"] = nbytes / (med * 1e-3) / 1e9
            out.append(r)
            log(f"eager {name}: {med:.3f} ms" + (f", {r['GBps']:.0f} GB/s" if nbytes else ""))
        except Exception as e:  # noqa: BLE001
            out.append(dict(name=name, error=repr(e)[:300]))
    res["eager"] = out


def sustained_section(res, seconds):
    torch.manual_seed(2)
    n = 8192
    a = torch.randn(n, n, device=DEV, dtype=BF16)
    b = torch.randn(n, n, device=DEV, dtype=BF16)
    flops = 2.0 * n**3
    windows = []
    t_end = time.time() + seconds
    while time.time() < t_end:
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        count = 0
        w0 = time.time()
        while time.time() - w0 < 1.0:
            for _ in range(20):
                torch.matmul(a, b)
            count += 20
            torch.cuda.synchronize()
        e.record()
        e.synchronize()
        ms = s.elapsed_time(e)
        windows.append(dict(t_s=round(time.time() - (t_end - seconds), 2), tflops=count * flops / (ms * 1e-3) / 1e12))
    res["sustained"] = dict(m=n, n=n, k=n, data="randn", seconds=seconds, windows=windows)
    log("sustained 8192^3: " + " ".join(f"{w['tflops']:.0f}" for w in windows))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--sustained-s", type=float, default=45)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    smi = subprocess.Popen(
        ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,"
         "clocks_throttle_reasons.active,utilization.gpu", "--format=csv", "-lms", "100"],
        stdout=open(os.path.join(args.out, "smi.csv"), "w"), stderr=subprocess.STDOUT)
    p = torch.cuda.get_device_properties(0)
    res = dict(format="linkwise-compute-shapes/1", date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               device=dict(name=p.name, sm_count=p.multi_processor_count, memory_bytes=p.total_memory),
               torch=torch.__version__, cuda=torch.version.cuda,
               cublas=getattr(torch.backends.cuda, "preferred_blas_library", lambda: "?")().__str__(),
               cudnn=torch.backends.cudnn.version(), python=sys.version.split()[0],
               method="median of timed repetitions after 3 warm-up calls, one CUDA event pair each")
    path = os.path.join(args.out, "compute-shapes.json")
    sections = [("gemm", gemm_section), ("decode", decode_section), ("fp8", fp8_section),
                ("attention", attention_section), ("eager", eager_section),
                ("sustained", lambda r: sustained_section(r, args.sustained_s))]
    for name, fn in sections:
        if args.only and name not in args.only.split(","):
            continue
        t0 = time.time()
        try:
            fn(res)
        except Exception as e:  # noqa: BLE001 - one section failing keeps the others
            res[name] = {"error": repr(e)[:500]}
            log(f"{name} FAILED: {e!r}"[:500])
        res.setdefault("section_s", {})[name] = round(time.time() - t0, 1)
        with open(path + ".tmp", "w") as f:
            json.dump(res, f, indent=1)
        os.replace(path + ".tmp", path)
        log(f"-- {name} done in {time.time() - t0:.1f} s")
        torch.cuda.empty_cache()
    smi.terminate()


if __name__ == "__main__":
    main()
