#!/opt/inferd/models-venv/bin/python
"""Makes small decoder LLMs in the Hugging Face export layout, with seeded random weights.

For each style (llama, gpt2, qwen2, phi3) it builds a transformers model from a config, saves the
checkpoint (safetensors + config.json + generation_config.json) and exports model.onnx with
torch.onnx.export (the TorchScript exporter, dynamo=False: optimum 2.x no longer ships the ONNX
exporter, and the TorchScript exporter keeps the /model/layers.N/... node names name-based
partition rules match). The ONNX graph is the layout optimum publishes:
  inputs   input_ids [batch, seq], attention_mask [batch, past+seq], position_ids [batch, seq]
           (not for gpt2's learned positions... it has them too), past_key_values.N.key/value
           [batch, kv_heads, past, head_dim]
  outputs  logits [batch, seq, vocab], present.N.key/value [batch, kv_heads, past+seq, head_dim]
The tokenizer is one trained by make_tokenizers.py in the model's family's style; the model's
vocabulary size is the tokenizer's.

Usage: export_hf.py OUT_DIR [--styles llama,gpt2] [--hidden 32] [--layers 2] [--opset 17]
"""
import argparse
import json
import os
import shutil

import torch
import transformers
from transformers import DynamicCache

HERE = os.path.dirname(os.path.abspath(__file__))
TOKENIZERS = os.path.join(HERE, "..", "..", "..", "genai", "testdata", "tokenizers")

STYLE_TOKENIZER = {"llama": "llama3", "gpt2": "gpt2", "qwen2": "qwen2", "phi3": "llama2"}


def make_config(style, vocab, hidden, layers, bos, eos, init_range):
    # A wide initializer (0.02 is transformers' default) gives random models whose greedy
    # answers vary token to token, so that parity tests compare something.
    common = dict(vocab_size=vocab, bos_token_id=bos, eos_token_id=eos,
                  initializer_range=init_range)
    if style == "llama":
        return transformers.LlamaConfig(hidden_size=hidden, intermediate_size=hidden * 3,
                                        num_hidden_layers=layers, num_attention_heads=4,
                                        num_key_value_heads=2, max_position_embeddings=512,
                                        tie_word_embeddings=True, **common)
    if style == "qwen2":
        return transformers.Qwen2Config(hidden_size=hidden, intermediate_size=hidden * 3,
                                        num_hidden_layers=layers, num_attention_heads=4,
                                        num_key_value_heads=2, max_position_embeddings=512,
                                        tie_word_embeddings=True, **common)
    if style == "phi3":
        return transformers.Phi3Config(hidden_size=hidden, intermediate_size=hidden * 3,
                                       num_hidden_layers=layers, num_attention_heads=4,
                                       num_key_value_heads=4, max_position_embeddings=512,
                                       tie_word_embeddings=True, pad_token_id=eos, **common)
    if style == "gpt2":
        return transformers.GPT2Config(n_embd=hidden, n_layer=layers, n_head=4, n_positions=512,
                                       **common)
    raise ValueError(style)


def model_class(style):
    return {"llama": transformers.LlamaForCausalLM, "qwen2": transformers.Qwen2ForCausalLM,
            "phi3": transformers.Phi3ForCausalLM, "gpt2": transformers.GPT2LMHeadModel}[style]


class WithFlatCache(torch.nn.Module):
    """forward(input_ids, attention_mask, position_ids, *past) -> logits, *present."""

    def __init__(self, model, layers):
        super().__init__()
        self.model = model
        self.layers = layers

    def forward(self, input_ids, attention_mask, position_ids, *past):
        cache = DynamicCache(config=self.model.config)
        for i in range(self.layers):
            layer = cache.layers[i]
            layer.lazy_initialization(past[2 * i], past[2 * i + 1])
            layer.keys, layer.values = past[2 * i], past[2 * i + 1]
        out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                         position_ids=position_ids, past_key_values=cache, use_cache=True)
        result = [out.logits]
        for i in range(self.layers):
            result += [out.past_key_values.layers[i].keys, out.past_key_values.layers[i].values]
        return tuple(result)


def export(style, out, hidden, layers, opset, seed, init_range, train=None):
    """Builds (or, with `train(model, tokenizer_json)`, also trains) and exports one style."""
    tok_dir = os.path.join(TOKENIZERS, STYLE_TOKENIZER[style])
    with open(os.path.join(tok_dir, "tokenizer.json"), encoding="utf-8") as f:
        tok = json.load(f)
    vocab = max(max(tok["model"]["vocab"].values()),
                max(a["id"] for a in tok["added_tokens"])) + 1
    names = {a["content"]: a["id"] for a in tok["added_tokens"]}
    bos = names.get("<|begin_of_text|>", names.get("<s>", names.get("<|endoftext|>", 0)))
    eos = names.get("<|end_of_text|>", names.get("</s>", names.get("<|endoftext|>", 0)))
    torch.manual_seed(seed)
    config = make_config(style, vocab, hidden, layers, bos, eos, init_range)
    model = model_class(style)(config)
    if train is not None:
        train(model, os.path.join(tok_dir, "tokenizer.json"))
    model = model.eval()
    os.makedirs(out, exist_ok=True)
    model.save_pretrained(os.path.join(out, "checkpoint"))
    shutil.copy(os.path.join(tok_dir, "tokenizer.json"), out)
    shutil.copy(os.path.join(tok_dir, "tokenizer.json"), os.path.join(out, "checkpoint"))
    tok_config = {"bos_token": None, "eos_token": None, "add_bos_token": style != "gpt2",
                  "model_max_length": 512}
    for path in (out, os.path.join(out, "checkpoint")):
        with open(os.path.join(path, "tokenizer_config.json"), "w") as f:
            json.dump(tok_config, f, indent=1)
    config.save_pretrained(out)
    model.generation_config.save_pretrained(out)

    heads = config.num_attention_heads
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    head_dim = hidden // heads
    B, S, P = 1, 3, 2
    ids = torch.randint(0, vocab, (B, S))
    mask = torch.ones(B, P + S, dtype=torch.int64)
    pos = torch.arange(P, P + S).unsqueeze(0)
    past = [torch.randn(B, kv_heads, P, head_dim) for _ in range(2 * layers)]
    in_names = ["input_ids", "attention_mask", "position_ids"]
    out_names = ["logits"]
    dyn = {"input_ids": {0: "batch_size", 1: "sequence_length"},
           "attention_mask": {0: "batch_size", 1: "total_sequence_length"},
           "position_ids": {0: "batch_size", 1: "sequence_length"},
           "logits": {0: "batch_size", 1: "sequence_length"}}
    for i in range(layers):
        for kind in ("key", "value"):
            n = "past_key_values.%d.%s" % (i, kind)
            in_names.append(n)
            dyn[n] = {0: "batch_size", 2: "past_sequence_length"}
            p = "present.%d.%s" % (i, kind)
            out_names.append(p)
            dyn[p] = {0: "batch_size", 2: "total_sequence_length"}
    torch.onnx.export(WithFlatCache(model, layers), (ids, mask, pos, *past),
                      os.path.join(out, "model.onnx"), input_names=in_names,
                      output_names=out_names, dynamic_axes=dyn, opset_version=opset,
                      dynamo=False)
    print(style, "->", out, "vocab", vocab, "params", sum(p.numel() for p in model.parameters()))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--styles", default="llama,gpt2,qwen2,phi3")
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--opset", type=int, default=17)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--init-range", type=float, default=0.3)
    args = p.parse_args()
    for style in args.styles.split(","):
        export(style, os.path.join(args.out, style), args.hidden, args.layers, args.opset,
               args.seed, args.init_range)


if __name__ == "__main__":
    main()
