#!/opt/inferd/models-venv/bin/python
"""Trains a tiny Llama-style model on Debian's license texts, so the demo prints words.

A few minutes on two CPU cores: hidden 128, 4 layers, the Llama 3 style tokenizer of
make_tokenizers.py (1200 tokens), next-token loss on /usr/share/common-licenses, AdamW. Then
exports it like export_hf.py (Hugging Face layout, model.onnx + configs + tokenizer.json).
The output stays out of git (a few MB).

Usage: train_tiny.py OUT_DIR [--seconds 240] [--hidden 128] [--layers 4]
"""
import argparse
import glob
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_hf  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402


def corpus_ids(tokenizer_json):
    tok = Tokenizer.from_file(tokenizer_json)
    ids = []
    for path in sorted(glob.glob("/usr/share/common-licenses/*")):
        if os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                ids += tok.encode(f.read(), add_special_tokens=False).ids
    return torch.tensor(ids, dtype=torch.long)


def trainer(seconds, seq_len=128, batch=16, lr=3e-3):
    def train(model, tokenizer_json):
        data = corpus_ids(tokenizer_json)
        torch.set_num_threads(2)
        opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
        model.train()
        start, step = time.time(), 0
        while time.time() - start < seconds:
            starts = torch.randint(0, len(data) - seq_len - 1, (batch,))
            x = torch.stack([data[s:s + seq_len] for s in starts])
            loss = model(input_ids=x, labels=x).loss
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if step % 50 == 0:
                print("step %d loss %.3f (%.0f s)" % (step, loss.item(), time.time() - start),
                      flush=True)
    return train


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--seconds", type=float, default=240)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--layers", type=int, default=4)
    args = p.parse_args()
    export_hf.export("llama", args.out, args.hidden, args.layers, opset=17, seed=0,
                     init_range=0.02, train=trainer(args.seconds))


if __name__ == "__main__":
    main()
