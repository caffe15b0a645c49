#!/usr/bin/env python3
"""Time training steps of small models on one GPU with Hugging Face transformers in eager PyTorch.

    python3 scripts/gpu-train-step.py OUT_DIR

Writes OUT_DIR/train-steps.json (format linkwise-train-steps/1). Each case builds the model from its
configuration (random weights: no download), trains it as the Hugging Face Trainer does with bf16=True
(fp32 weights, torch.autocast to bf16, SDPA attention, AdamW fused, loss over the whole vocabulary) and
times forward, backward and optimizer step with CUDA events: the median of 8 steps after 3 warm-up steps.
LoRA cases freeze a bf16 base and add rank-r adapters (fp32, as PEFT keeps them) to q, k, v, o, gate, up
and down. The figures are held against `linkwise train` in docs/VALIDATION.md; none is read by the model.
"""
import json
import math
import os
import sys
import time

import torch
import torch.nn as nn

DEV = "cuda"


def log(*a):
    print(*a, flush=True)


class LoRALinear(nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        self.base = base
        self.a = nn.Parameter(torch.empty(r, base.in_features, device=base.weight.device, dtype=torch.float32))
        self.b = nn.Parameter(torch.zeros(base.out_features, r, device=base.weight.device, dtype=torch.float32))
        nn.init.kaiming_uniform_(self.a, a=math.sqrt(5))
        self.scale = alpha / r

    def forward(self, x):
        return self.base(x) + (x @ self.a.t() @ self.b.t()) * self.scale


def add_lora(model, r, alpha, targets=("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")):
    for p in model.parameters():
        p.requires_grad_(False)
    for name, mod in list(model.named_modules()):
        for t in targets:
            child = getattr(mod, t, None)
            if isinstance(child, nn.Linear):
                setattr(mod, t, LoRALinear(child, r, alpha))


def build(kind, cfg):
    import transformers as tf

    if kind == "qwen3":
        c = tf.Qwen3Config(**cfg)
        return tf.Qwen3ForCausalLM(c)
    c = tf.LlamaConfig(**cfg)
    return tf.LlamaForCausalLM(c)


CASES = [
    # Qwen3 0.6B (Qwen/Qwen3-0.6B config.json): 28 layers, hidden 1024, 16 q / 8 kv heads of 128, ffn 3072,
    # vocabulary 151936, tied embeddings.
    dict(name="qwen3-0.6b full seq2048 mb8", kind="qwen3", seq=2048, mb=8, lora=0,
         cfg=dict(vocab_size=151936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
                  num_attention_heads=16, num_key_value_heads=8, head_dim=128, tie_word_embeddings=True,
                  max_position_embeddings=40960)),
    dict(name="qwen3-0.6b full seq2048 mb2", kind="qwen3", seq=2048, mb=2, lora=0,
         cfg=dict(vocab_size=151936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=28,
                  num_attention_heads=16, num_key_value_heads=8, head_dim=128, tie_word_embeddings=True,
                  max_position_embeddings=40960)),
    # Llama 3.2 3B (meta-llama/Llama-3.2-3B config.json): 28 layers, hidden 3072, 24 q / 8 kv heads, ffn 8192,
    # vocabulary 128256, tied embeddings.
    dict(name="llama3.2-3b full seq2048 mb4", kind="llama", seq=2048, mb=4, lora=0,
         cfg=dict(vocab_size=128256, hidden_size=3072, intermediate_size=8192, num_hidden_layers=28,
                  num_attention_heads=24, num_key_value_heads=8, tie_word_embeddings=True,
                  max_position_embeddings=131072, rope_theta=500000.0)),
    # Llama 3 8B (meta-llama/Meta-Llama-3-8B config.json), LoRA rank 16 on all seven matrices, bf16 base.
    dict(name="llama3-8b lora r16 seq2048 mb4", kind="llama", seq=2048, mb=4, lora=16,
         cfg=dict(vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                  num_attention_heads=32, num_key_value_heads=8, tie_word_embeddings=False,
                  max_position_embeddings=8192, rope_theta=500000.0)),
    dict(name="llama3-8b lora r16 seq4096 mb1", kind="llama", seq=4096, mb=1, lora=16,
         cfg=dict(vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                  num_attention_heads=32, num_key_value_heads=8, tie_word_embeddings=False,
                  max_position_embeddings=8192, rope_theta=500000.0)),
]


def run_case(case):
    torch.manual_seed(0)
    with torch.device(DEV):
        model = build(case["kind"], dict(case["cfg"], attn_implementation="sdpa"))
    if case["lora"]:
        model.to(torch.bfloat16)
        add_lora(model, case["lora"], 2 * case["lora"])
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-5, fused=True)
    b, s = case["mb"], case["seq"]
    ids = torch.randint(0, case["cfg"]["vocab_size"], (b, s), device=DEV)
    torch.cuda.reset_peak_memory_stats()
    fwd, bwd, ops, tot = [], [], [], []
    for i in range(11):
        e = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
        e[0].record()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
        e[1].record()
        loss.backward()
        e[2].record()
        opt.step()
        opt.zero_grad(set_to_none=True)
        e[3].record()
        e[3].synchronize()
        if i >= 3:
            fwd.append(e[0].elapsed_time(e[1]))
            bwd.append(e[1].elapsed_time(e[2]))
            ops.append(e[2].elapsed_time(e[3]))
            tot.append(e[0].elapsed_time(e[3]))
    med = lambda v: sorted(v)[len(v) // 2]
    n_all = sum(p.numel() for p in model.parameters())
    n_train = sum(p.numel() for p in params)
    r = dict(case, params=n_all, trainable=n_train, step_ms=med(tot), forward_ms=med(fwd), backward_ms=med(bwd),
             optimizer_ms=med(ops), step_ms_all=tot, tokens_per_s=b * s / (med(tot) * 1e-3),
             peak_memory_GiB=torch.cuda.max_memory_allocated() / 2**30)
    del model, opt, params, loss
    torch.cuda.empty_cache()
    return r


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    import transformers

    res = dict(format="linkwise-train-steps/1", date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               device=torch.cuda.get_device_name(0), torch=torch.__version__, transformers=transformers.__version__,
               cudnn=torch.backends.cudnn.version(),
               method="median of 8 steps after 3 warm-up; fp32 weights + autocast bf16 (full), bf16 base + fp32 "
                      "adapters (LoRA); SDPA attention; AdamW fused; CUDA events around forward, backward, step",
               cases=[])
    path = os.path.join(out_dir, "train-steps.json")
    for case in CASES:
        t0 = time.time()
        try:
            r = run_case(case)
            log(f"{case['name']}: step {r['step_ms']:.1f} ms (fwd {r['forward_ms']:.1f}, bwd {r['backward_ms']:.1f}, "
                f"opt {r['optimizer_ms']:.1f}), {r['tokens_per_s']:.0f} tokens/s, peak {r['peak_memory_GiB']:.1f} GiB, "
                f"{r['params'] / 1e9:.2f} B params ({time.time() - t0:.0f} s)")
        except Exception as e:  # noqa: BLE001 - recorded, the run goes on
            r = dict(case, error=repr(e)[:500])
            log(f"{case['name']}: FAILED {e!r}"[:500])
            torch.cuda.empty_cache()
        res["cases"].append(r)
        with open(path + ".tmp", "w") as f:
            json.dump(res, f, indent=1)
        os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
