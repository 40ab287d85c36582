#!/opt/inferd/models-venv/bin/python
"""Trains the small tokenizers genai/'s parity tests use, and writes their expected ids.

Each style is trained with Hugging Face `tokenizers` on the license texts Debian ships
(/usr/share/common-licenses), laid out as the published models lay theirs out:
  gpt2    ByteLevel pre-tokenizer (GPT-2 regex), BPE, ByteLevel decoder, <|endoftext|>
  llama3  Split (Llama 3 regex, lookahead) + ByteLevel(use_regex=False), BPE ignore_merges,
          <|begin_of_text|> added by a TemplateProcessing post-processor, special tokens
  qwen2   NFC normalizer, Split (Qwen2 regex: single digits), ByteLevel, ChatML specials
  llama2  Prepend/Replace normalizer (metaspace), BPE with byte_fallback, decoder
          Replace/ByteFallback/Fuse/Strip, <s> added by the post-processor
  mistral Metaspace pre-tokenizer (prepend_scheme first), BPE with byte_fallback
and one SentencePiece .model (BPE) made with Debian's spm_train, encoded with the
`sentencepiece` wheel when it is installed (else its ids are not written).

The outputs are committed under genai/testdata/tokenizers/ (each tokenizer.json is a few tens of
KB); run this again only to change them:
  tools/model_zoo/genai/make_tokenizers.py genai/testdata/tokenizers
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
from tokenizers import trainers, Regex

LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                  r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
                 r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

# The parity corpus: Unicode, emoji, CJK, whitespace runs, digits, special tokens.
CORPUS = [
    "Hello world",
    "Hello, world! This is a test of the GNU General Public License.",
    " leading space and trailing space ",
    "multiple   spaces\tand\ttabs\n\nand newlines\r\n\r\nend",
    "      ",
    "\n",
    "",
    "numbers 1234567890 and 3.14159, 42nd, 1,000,000 and 007",
    "It's, I'm, we'll, they've, she'd, you're, DON'T, It'S",
    "caf\u00e9 na\u00efve r\u00e9sum\u00e9 \u00c5ngstr\u00f6m",
    "cafe\u0301 (decomposed) vs caf\u00e9",
    "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8\u3068\u4e2d\u6587\u6587\u672c\uff0c\u8fd8\u6709\ud55c\uad6d\uc5b4",
    "emoji \U0001F600\U0001F44D\U0001F3FD \U0001F468\u200D\U0001F469\u200D\U0001F467 \u2764\ufe0f!",
    "\u0417\u0434\u0440\u0430\u0432\u0441\u0442\u0432\u0443\u0439, \u043c\u0438\u0440! "
    "\u0393\u03b5\u03b9\u03ac \u03c3\u03bf\u03c5 \u03ba\u03cc\u03c3\u03bc\u03b5 "
    "\u0645\u0631\u062d\u0628\u0627 \u05e9\u05dc\u05d5\u05dd",
    "symbols: @#$%^&*()_+-=[]{}|;':\",./<>?`~ \u00a9\u00ae\u2122 \u2026 \u2014",
    "code: def f(x):\n    return x**2  # square\n\tpass",
    "mixed\u00a0non-breaking\u2003em-space\u3000ideographic",
    "<|endoftext|>special<|endoftext|> in the middle",
    "<|begin_of_text|>Hi<|eot_id|><|start_header_id|>user<|end_header_id|>",
    "<|im_start|>user\nHow are you?<|im_end|>\n<|im_start|>assistant\n",
    "<s>[INST] Hello [/INST]</s>",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "\u0000\u0001\u007f control \u200b zero width",
    "The Free Software Foundation may publish revised and/or new versions of the License.",
]


def license_files():
    return sorted(f for f in glob.glob("/usr/share/common-licenses/*") if os.path.isfile(f))


def byte_level_trainer(vocab, specials):
    return trainers.BpeTrainer(vocab_size=vocab, special_tokens=specials, show_progress=False,
                               initial_alphabet=pre_tokenizers.ByteLevel.alphabet())


def gpt2():
    t = Tokenizer(models.BPE())
    t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    t.decoder = decoders.ByteLevel()
    t.post_processor = processors.ByteLevel(trim_offsets=False)
    t.train(license_files(), byte_level_trainer(1200, ["<|endoftext|>"]))
    return t


def llama3():
    t = Tokenizer(models.BPE(ignore_merges=True))
    t.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    t.decoder = decoders.ByteLevel()
    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
                "<|end_header_id|>", "<|eot_id|>"]
    t.train(license_files(), byte_level_trainer(1200, specials))
    bos = t.token_to_id("<|begin_of_text|>")
    t.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single="<|begin_of_text|> $A",
                                      pair="<|begin_of_text|> $A <|begin_of_text|> $B:1",
                                      special_tokens=[("<|begin_of_text|>", bos)])])
    return t


def qwen2():
    t = Tokenizer(models.BPE())
    t.normalizer = normalizers.NFC()
    t.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    t.decoder = decoders.ByteLevel()
    t.train(license_files(), byte_level_trainer(1200, ["<|endoftext|>", "<|im_start|>",
                                                       "<|im_end|>"]))
    return t


def metaspace_trainer(vocab):
    return trainers.BpeTrainer(vocab_size=vocab, special_tokens=["<unk>", "<s>", "</s>"],
                               show_progress=False,
                               initial_alphabet=[])


def bytes_in_vocab_only(t):
    # Llama 2's <0x00>..<0xFF> are vocabulary tokens for byte fallback, not added tokens: the
    # trainer adds them as specials (to have them in the vocabulary); drop that mark.
    d = json.loads(t.to_str())
    d["added_tokens"] = [a for a in d["added_tokens"] if not re.fullmatch(r"<0x[0-9A-F]{2}>",
                                                                         a["content"])]
    return Tokenizer.from_str(json.dumps(d))


def llama2():
    t = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    t.normalizer = normalizers.Sequence([normalizers.Prepend("\u2581"),
                                         normalizers.Replace(" ", "\u2581")])
    t.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(),
                                   decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    byte_tokens = ["<0x%02X>" % b for b in range(256)]
    trainer = trainers.BpeTrainer(vocab_size=1200, show_progress=False,
                                  special_tokens=["<unk>", "<s>", "</s>"] + byte_tokens)
    t.train(license_files(), trainer)
    t.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B:1", special_tokens=[("<s>", t.token_to_id("<s>"))])
    return bytes_in_vocab_only(t)


def mistral():
    t = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    t.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first",
                                               split=False)
    t.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="first", split=False)
    byte_tokens = ["<0x%02X>" % b for b in range(256)]
    trainer = trainers.BpeTrainer(vocab_size=1200, show_progress=False,
                                  special_tokens=["<unk>", "<s>", "</s>", "[INST]", "[/INST]"]
                                  + byte_tokens)
    t.train(license_files(), trainer)
    t.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B:1", special_tokens=[("<s>", t.token_to_id("<s>"))])
    return bytes_in_vocab_only(t)


def expected(t):
    cases = []
    for text in CORPUS:
        for add_special in (False, True):
            ids = t.encode(text, add_special_tokens=add_special).ids
            cases.append({"text": text, "add_special_tokens": add_special, "ids": ids,
                          "decoded": t.decode(ids, skip_special_tokens=False),
                          "decoded_skip_special": t.decode(ids, skip_special_tokens=True)})
    return cases


def sentencepiece(out):
    text = os.path.join(tempfile.mkdtemp(), "corpus.txt")
    with open(text, "w", encoding="utf-8") as f:
        for path in license_files():
            with open(path, encoding="utf-8", errors="replace") as src:
                f.write(src.read())
    prefix = os.path.join(out, "spm_bpe")
    subprocess.run(["spm_train", "--input=" + text, "--model_prefix=" + prefix,
                    "--vocab_size=1000", "--model_type=bpe", "--byte_fallback=true",
                    "--character_coverage=1.0", "--normalization_rule_name=identity",
                    "--minloglevel=2"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.remove(prefix + ".vocab")
    try:
        import sentencepiece as spm
    except ImportError:
        print("sentencepiece wheel missing: spm expected ids not written", file=sys.stderr)
        return
    sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
    cases = [{"text": s, "ids": sp.encode(s), "decoded": sp.decode(sp.encode(s))}
             for s in CORPUS]
    with open(os.path.join(out, "spm_bpe.expected.json"), "w", encoding="utf-8") as f:
        json.dump(cases, f, ensure_ascii=False, indent=0)


def main():
    out = sys.argv[1]
    for name, make in (("gpt2", gpt2), ("llama3", llama3), ("qwen2", qwen2), ("llama2", llama2),
                       ("mistral", mistral)):
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        t = make()
        t.save(os.path.join(d, "tokenizer.json"))
        with open(os.path.join(d, "expected.json"), "w", encoding="utf-8") as f:
            json.dump(expected(t), f, ensure_ascii=False, indent=0)
        print(name, t.get_vocab_size())
    sentencepiece(out)


if __name__ == "__main__":
    main()
