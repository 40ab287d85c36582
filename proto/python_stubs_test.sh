#!/bin/bash
# The generated Python stubs load with Debian's python3 (grpcio + protobuf) and put
# raw_output_contents on the wire as field 6 (tag 0x32): what a Python KServe client relies on.
set -euo pipefail
stub_dir="$(dirname "$1")"
PYTHONPATH="${stub_dir}" /usr/bin/python3 - <<'PY'
import admin_pb2
import admin_pb2_grpc
import inference_pb2
import inference_pb2_grpc

resp = inference_pb2.ModelInferResponse(raw_output_contents=[b"xyz"])
assert resp.SerializeToString() == b"\x32\x03xyz", resp.SerializeToString()
req = inference_pb2.ModelInferRequest(model_name="m", raw_input_contents=[b"ab"])
parsed = inference_pb2.ModelInferRequest.FromString(req.SerializeToString())
assert parsed.raw_input_contents == [b"ab"]
assert hasattr(inference_pb2_grpc, "GRPCInferenceServiceStub")
assert hasattr(admin_pb2_grpc, "AdminStub")
stats = admin_pb2.ArenaMemoryStats(model="m", device="cpu:0", arena="io", live_bytes=5)
assert admin_pb2.ArenaMemoryStats.FromString(stats.SerializeToString()).live_bytes == 5
print("python stubs ok")
PY
