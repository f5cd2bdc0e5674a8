#!/usr/bin/env python3
"""PyTorch reference for the one-GPU benchmark (issue 37, comparison only).

The one place the project uses Python: it runs only where PyTorch is (the
lent GPU machine), and nothing of Trident depends on it. It trains the same
model as scripts/gpu-bench.sh's program (a Hugging Face config.json:
GPT2LMHeadModel as bench/models/gpt-1b.json, LlamaForCausalLM as
bench/models/llama-1b.json), with the same global batch, sequence,
micro-batching (gradient accumulation) and Adam (lr 1e-3, betas 0.9 and
0.999, eps 1e-8, no weight decay), on one GPU, with fp32 parameters under
torch.autocast(bfloat16) -- PyTorch's usual bf16 mixed precision -- in
eager mode or under torch.compile. Attention is
torch.nn.functional.scaled_dot_product_attention (causal; its flash
backend on Hopper). It prints lines in scripts/gpu-bench.sh's format:

    model      NAME (P parameters), B x S tokens per step, micro-batch M, pytorch MODE bf16 autocast
    run        step N loss L time T s
    measured   step T s (median of steps 2..N, pytorch MODE), peak tensor memory G GB
    throughput X tokens/s

--describe prints the model's name and parameter count without importing
torch (the test holds it to `trident inspect`).

Usage: python3 bench/torch_reference.py --model bench/models/gpt-1b.json
           [--seq-len 2048] [--global-batch 8] [--micro-batch 1]
           [--steps 6] [--mode eager|compile] [--describe]
"""

import argparse
import json
import math
import os
import statistics
import sys
import time


class Shape:
    """The sizes the benchmark needs, read from a config.json."""

    def __init__(self, path):
        try:
            with open(path) as f:
                cfg = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit(f"torch_reference: {path}: {e}")
        self.name = os.path.splitext(os.path.basename(path))[0].replace("-", "_")
        kind = cfg.get("model_type")

        def need(key):
            if key not in cfg:
                sys.exit(f"torch_reference: {path}: '{key}' is missing")
            return cfg[key]

        if kind == "gpt2":
            self.kind = "gpt"
            self.hidden = need("n_embd")
            self.layers = need("n_layer")
            self.heads = need("n_head")
            self.kv_heads = self.heads
            self.ffn = cfg.get("n_inner") or 4 * self.hidden
            self.eps = cfg.get("layer_norm_epsilon", 1e-5)
            self.positions = need("n_positions")
            self.tied = cfg.get("tie_word_embeddings", True)
        elif kind == "llama":
            self.kind = "llama"
            self.hidden = need("hidden_size")
            self.layers = need("num_hidden_layers")
            self.heads = need("num_attention_heads")
            self.kv_heads = cfg.get("num_key_value_heads", self.heads)
            self.ffn = need("intermediate_size")
            self.eps = cfg.get("rms_norm_eps", 1e-6)
            self.theta = cfg.get("rope_theta", 10000.0)
            self.tied = cfg.get("tie_word_embeddings", False)
        else:
            sys.exit(f"torch_reference: {path}: model_type '{kind}' "
                     "(expected gpt2 or llama)")
        self.vocab = need("vocab_size")
        self.head_dim = self.hidden // self.heads

    def parameters(self):
        """The parameter count of the modules built below."""
        h, f, v = self.hidden, self.ffn, self.vocab
        kv = self.kv_heads * self.head_dim
        if self.kind == "gpt":
            block = (h * 3 * h + 3 * h) + (h * h + h) + (h * f + f) + \
                (f * h + h) + 4 * h
            extra = self.positions * h + 2 * h
        else:
            block = h * h + 2 * h * kv + h * h + 3 * h * f + 2 * h
            extra = h
        embed = v * h * (1 if self.tied else 2)
        return self.layers * block + extra + embed


def build(shape, torch):
    nn = torch.nn
    F = torch.nn.functional

    class Attention(nn.Module):
        def __init__(self, bias):
            super().__init__()
            s = shape
            self.q = nn.Linear(s.hidden, s.hidden, bias=bias)
            self.kv = nn.Linear(s.hidden, 2 * s.kv_heads * s.head_dim, bias=bias)
            self.o = nn.Linear(s.hidden, s.hidden, bias=bias)

        def forward(self, x, rope):
            b, t, _ = x.shape
            s = shape
            q = self.q(x).view(b, t, s.heads, s.head_dim).transpose(1, 2)
            k, v = self.kv(x).view(b, t, 2, s.kv_heads, s.head_dim).unbind(2)
            k, v = k.transpose(1, 2), v.transpose(1, 2)
            if rope is not None:
                q, k = rope(q), rope(k)
            if s.kv_heads != s.heads:
                rep = s.heads // s.kv_heads
                k = k.repeat_interleave(rep, dim=1)
                v = v.repeat_interleave(rep, dim=1)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.o(y.transpose(1, 2).reshape(b, t, s.hidden))

    class GptBlock(nn.Module):
        def __init__(self):
            super().__init__()
            s = shape
            self.ln1 = nn.LayerNorm(s.hidden, eps=s.eps)
            self.attn = Attention(True)
            self.ln2 = nn.LayerNorm(s.hidden, eps=s.eps)
            self.fc1 = nn.Linear(s.hidden, s.ffn)
            self.fc2 = nn.Linear(s.ffn, s.hidden)

        def forward(self, x, rope):
            x = x + self.attn(self.ln1(x), None)
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))

    class LlamaBlock(nn.Module):
        def __init__(self):
            super().__init__()
            s = shape
            self.n1 = nn.RMSNorm(s.hidden, eps=s.eps)
            self.attn = Attention(False)
            self.n2 = nn.RMSNorm(s.hidden, eps=s.eps)
            self.gate_up = nn.Linear(s.hidden, 2 * s.ffn, bias=False)
            self.down = nn.Linear(s.ffn, s.hidden, bias=False)

        def forward(self, x, rope):
            x = x + self.attn(self.n1(x), rope)
            g, u = self.gate_up(self.n2(x)).chunk(2, dim=-1)
            return x + self.down(F.silu(g) * u)

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            s = shape
            self.embed = nn.Embedding(s.vocab, s.hidden)
            if s.kind == "gpt":
                self.pos = nn.Embedding(s.positions, s.hidden)
                self.norm = nn.LayerNorm(s.hidden, eps=s.eps)
                block = GptBlock
            else:
                self.norm = nn.RMSNorm(s.hidden, eps=s.eps)
                block = LlamaBlock
            self.blocks = nn.ModuleList(block() for _ in range(s.layers))
            self.head = nn.Linear(s.hidden, s.vocab, bias=False)
            if s.tied:
                self.head.weight = self.embed.weight
            self.rope_cache = None

        def rope(self, t, device):
            # RoFormer's rotary embedding, "rotate half" pairing (Llama).
            s = shape
            if self.rope_cache is None or self.rope_cache[0].shape[0] != t:
                inv = 1.0 / (s.theta ** (torch.arange(0, s.head_dim, 2,
                                                      device=device,
                                                      dtype=torch.float32)
                                         / s.head_dim))
                ang = torch.outer(torch.arange(t, device=device,
                                               dtype=torch.float32), inv)
                ang = torch.cat([ang, ang], dim=-1)
                self.rope_cache = (ang.cos(), ang.sin())
            cos, sin = self.rope_cache

            def apply(x):
                x1, x2 = x.chunk(2, dim=-1)
                rot = torch.cat([-x2, x1], dim=-1)
                return (x * cos + rot * sin).to(x.dtype)
            return apply

        def forward(self, ids):
            t = ids.shape[1]
            x = self.embed(ids)
            rope = None
            if shape.kind == "gpt":
                x = x + self.pos(torch.arange(t, device=ids.device))
            else:
                rope = self.rope(t, ids.device)
            for b in self.blocks:
                x = b(x, rope)
            return self.head(self.norm(x))

    return Model()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--seq-len", type=int, default=2048)
    ap.add_argument("--global-batch", type=int, default=8)
    ap.add_argument("--micro-batch", type=int, default=1)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--mode", choices=["eager", "compile"], default="eager")
    ap.add_argument("--describe", action="store_true")
    a = ap.parse_args()
    for flag in ("seq_len", "global_batch", "micro_batch", "steps"):
        if getattr(a, flag) < 1:
            sys.exit(f"torch_reference: --{flag.replace('_', '-')} must be positive")
    if a.global_batch % a.micro_batch:
        sys.exit("torch_reference: --micro-batch must divide --global-batch")
    if a.steps < 2:
        sys.exit("torch_reference: --steps must be at least 2 (step 1 is a warm-up)")
    shape = Shape(a.model)
    if shape.kind == "gpt" and a.seq_len > shape.positions:
        sys.exit(f"torch_reference: --seq-len {a.seq_len} exceeds n_positions "
                 f"{shape.positions}")
    if a.describe:
        print(f"model      {shape.name} parameters {shape.parameters()}")
        return

    try:
        import torch  # only here: --describe needs none
    except ImportError:
        sys.exit("torch_reference: PyTorch is not installed here (it is on "
                 "the lent GPU machine; --describe needs none)")
    if not torch.cuda.is_available():
        sys.exit("torch_reference: no CUDA device")
    dev = torch.device("cuda")
    torch.manual_seed(1234)
    model = build(shape, torch).to(dev)
    n = sum(p.numel() for p in model.parameters())
    if n != shape.parameters():
        sys.exit(f"torch_reference: built {n} parameters, expected "
                 f"{shape.parameters()}")
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999),
                           eps=1e-8, weight_decay=0.0, fused=True)
    step_fn = model if a.mode == "eager" else torch.compile(model)
    loss_fn = torch.nn.functional.cross_entropy
    micro = a.global_batch // a.micro_batch
    gen = torch.Generator(device=dev).manual_seed(42)
    print(f"model      {shape.name} ({n / 1e9:.2f} B parameters), "
          f"{a.global_batch} x {a.seq_len} tokens per step, micro-batch "
          f"{a.micro_batch}, pytorch {a.mode} bf16 autocast")
    times = []
    torch.cuda.reset_peak_memory_stats()
    for step in range(1, a.steps + 1):
        ids = torch.randint(0, shape.vocab, (micro, a.micro_batch, a.seq_len + 1),
                            device=dev, generator=gen)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        total = 0.0
        for i in range(micro):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = step_fn(ids[i, :, :-1])
            loss = loss_fn(logits.float().view(-1, shape.vocab),
                           ids[i, :, 1:].reshape(-1)) / micro
            loss.backward()
            total += loss.detach()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        times.append(dt)
        value = float(total)
        if not math.isfinite(value):
            sys.exit(f"torch_reference: step {step}: loss {value}")
        print(f"run        step {step} loss {value:.6f} time {dt:.4f} s")
    median = statistics.median(times[1:])
    peak = torch.cuda.max_memory_allocated() / 1e9
    print(f"measured   step {median:.4f} s (median of steps 2..{a.steps}, "
          f"pytorch {a.mode}), peak tensor memory {peak:.3f} GB")
    print(f"throughput {a.global_batch * a.seq_len / median:.0f} tokens/s")


if __name__ == "__main__":
    main()
