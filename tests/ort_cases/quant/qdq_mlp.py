"""Writes gen.py's float MLP quantized by quantize_static in QDQ format (per tensor and per
channel, its nodes named) to OUT/mlp_qdq.onnx and OUT/mlp_qdq_perchannel.onnx, for qdq_gemm_fusion_test."""
import os
import sys

from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

import gen


def main(out):
    os.makedirs(out, exist_ok=True)
    model, shape = gen.float_mlp()
    for node, name in zip(model.graph.node, ("/fc1/MatMul", "/fc1/Add", "/relu", "/fc2/Gemm")):
        node.name = name  # as an exporter names them (the fused nodes keep the names)
    src = os.path.join(out, "mlp.onnx")
    gen.onnx.save(model, src)
    for name, per_channel in (("mlp_qdq", False), ("mlp_qdq_perchannel", True)):
        quantize_static(src, os.path.join(out, f"{name}.onnx"), gen.Reader(shape),
                        quant_format=QuantFormat.QDQ, per_channel=per_channel,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)


if __name__ == "__main__":
    main(sys.argv[1])
