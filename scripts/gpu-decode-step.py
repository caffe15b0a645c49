#!/usr/bin/env python3
"""Time a transformer's decode and prefill steps on one GPU, the GPU's own part of a serving step.

    python3 scripts/gpu-decode-step.py OUT_DIR

Writes OUT_DIR/decode-steps.json (format linkwise-decode-steps/1). A Qwen3 8B-shaped decoder (36 layers,
hidden 4096, 32 q / 8 kv heads of 128, gated FFN 12288, vocabulary 151936; random bf16 weights, no download)
written in plain PyTorch: RMSNorm (F.rms_norm), QKV, rotary on q and k, attention over a bf16 KV cache with
scaled_dot_product_attention, output projection, SiLU-gated FFN, final norm and LM head over the whole
vocabulary. Decode steps (one new token for each of B sequences holding C tokens of context each) are captured
in one CUDA graph and replayed, as serving engines replay theirs, so the figure is the GPU's time without host
launch costs. Prefill (one sequence of N prompt tokens, causal attention) is timed eager and as a CUDA graph.
Each figure: median of 20 replays after 3 warm-up. The figures are held against `linkwise serve`'s step model
in docs/VALIDATION.md; none is read by the model.
"""
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

DEV, BF16 = "cuda", torch.bfloat16
L, H, QH, KVH, D, FFN, V = 36, 4096, 32, 8, 128, 12288, 151936


def log(*a):
    print(*a, flush=True)


def timed(fn, reps=20, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    return ts[len(ts) // 2]


def make_weights():
    g = lambda *s: torch.randn(*s, device=DEV, dtype=BF16) * 0.02
    layers = [dict(ln1=torch.ones(H, device=DEV, dtype=BF16), qkv=g((QH + 2 * KVH) * D, H), o=g(H, QH * D),
                   ln2=torch.ones(H, device=DEV, dtype=BF16), gu=g(2 * FFN, H), down=g(H, FFN)) for _ in range(L)]
    return layers, torch.ones(H, device=DEV, dtype=BF16), g(V, H)


def rotary(x, cos, sin):
    x1, x2 = x[..., : D // 2], x[..., D // 2:]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


def forward(layers, lnf, head, x, kcache, vcache, pos, causal):
    """x: (B, T, H); caches: per layer (B, KVH, C, D) holding pos tokens; the T new tokens are written at pos."""
    b, t, _ = x.shape
    ang = torch.arange(t, device=DEV, dtype=torch.float32)[:, None] * 1e-3
    cos, sin = ang.cos().to(BF16), ang.sin().to(BF16)
    for i, w in enumerate(layers):
        h = F.rms_norm(x, (H,), w["ln1"])
        qkv = F.linear(h, w["qkv"]).view(b, t, QH + 2 * KVH, D).transpose(1, 2)
        q, k, v = qkv[:, :QH], qkv[:, QH:QH + KVH], qkv[:, QH + KVH:]
        q, k = rotary(q, cos, sin), rotary(k, cos, sin)
        kcache[i][:, :, pos:pos + t] = k
        vcache[i][:, :, pos:pos + t] = v
        kk, vv = kcache[i][:, :, : pos + t], vcache[i][:, :, : pos + t]
        a = F.scaled_dot_product_attention(q, kk, vv, is_causal=causal, enable_gqa=True)
        x = x + F.linear(a.transpose(1, 2).reshape(b, t, QH * D), w["o"])
        h = F.rms_norm(x, (H,), w["ln2"])
        gu = F.linear(h, w["gu"])
        x = x + F.linear(F.silu(gu[..., :FFN]) * gu[..., FFN:], w["down"])
    return F.linear(F.rms_norm(x[:, -1:], (H,), lnf), head)


def graphed(fn):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g.replay


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    layers, lnf, head = make_weights()
    wbytes = sum(t.numel() * 2 for w in layers for t in w.values()) + lnf.numel() * 2 + head.numel() * 2
    res = dict(format="linkwise-decode-steps/1", date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               device=torch.cuda.get_device_name(0), torch=torch.__version__,
               model=dict(layers=L, hidden=H, heads=QH, kv_heads=KVH, head_dim=D, ffn=FFN, vocab=V,
                          weight_bytes=wbytes),
               method="CUDA graph replay (decode; prefill also eager), median of 20 after 3 warm-up",
               decode=[], prefill=[])
    path = os.path.join(out, "decode-steps.json")

    def save():
        with open(path + ".tmp", "w") as f:
            json.dump(res, f, indent=1)
        os.replace(path + ".tmp", path)

    for ctx in (1024, 4096):
        for b in (1, 8, 32, 64, 128):
            if b * ctx > 128 * 4096:
                continue
            try:
                kc = [torch.zeros(b, KVH, ctx + 1, D, device=DEV, dtype=BF16) for _ in range(L)]
                vc = [torch.zeros(b, KVH, ctx + 1, D, device=DEV, dtype=BF16) for _ in range(L)]
                x = torch.randn(b, 1, H, device=DEV, dtype=BF16)
                with torch.no_grad():
                    step = graphed(lambda: forward(layers, lnf, head, x, kc, vc, ctx, False))
                    ms = timed(step)
                kvb = 2 * L * b * ctx * KVH * D * 2
                res["decode"].append(dict(batch=b, context=ctx, step_ms=ms, kv_bytes=kvb,
                                          bytes_per_s=(wbytes + kvb) / (ms * 1e-3)))
                log(f"decode B={b} ctx={ctx}: {ms:.3f} ms, weights+KV {(wbytes + kvb) / 1e9:.1f} GB at "
                    f"{(wbytes + kvb) / (ms * 1e-3) / 1e12:.2f} TB/s")
                del kc, vc, step
            except Exception as e:  # noqa: BLE001
                res["decode"].append(dict(batch=b, context=ctx, error=repr(e)[:300]))
                log(f"decode B={b} ctx={ctx}: {e!r}"[:300])
            torch.cuda.empty_cache()
            save()
    for n in (128, 233, 512, 1024, 2048, 8192):
        try:
            kc = [torch.zeros(1, KVH, n, D, device=DEV, dtype=BF16) for _ in range(L)]
            vc = [torch.zeros(1, KVH, n, D, device=DEV, dtype=BF16) for _ in range(L)]
            x = torch.randn(1, n, H, device=DEV, dtype=BF16)
            with torch.no_grad():
                f = lambda: forward(layers, lnf, head, x, kc, vc, 0, True)
                eager = timed(f)
                graph = timed(graphed(f))
            flops = 2.0 * n * (wbytes / 2 - head.numel()) + 2.0 * H * V + 2.0 * L * QH * D * n * n
            res["prefill"].append(dict(tokens=n, eager_ms=eager, graph_ms=graph,
                                       tflops_graph=flops / (graph * 1e-3) / 1e12))
            log(f"prefill {n} tokens: eager {eager:.2f} ms, graph {graph:.2f} ms "
                f"({flops / (graph * 1e-3) / 1e12:.0f} TFLOP/s)")
            del kc, vc
        except Exception as e:  # noqa: BLE001
            res["prefill"].append(dict(tokens=n, error=repr(e)[:300]))
            log(f"prefill {n}: {e!r}"[:300])
        torch.cuda.empty_cache()
        save()


if __name__ == "__main__":
    main()
