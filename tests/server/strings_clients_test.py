"""String (BYTES) tensors end to end, through Triton's own clients (docs/strings.md).

Builds a model with onnx.helper: text [-1] (string) -> StringNormalizer (LOWER, stopword "the")
-> normalized, and -> StringConcat(text, "!") -> shouted; serves it with
`inferd --model-repository=DIR` (a config.pbtxt with TYPE_STRING), then with tritonclient.grpc
(raw_input_contents, the 4-byte length-prefixed form, and a second request with
contents.bytes_contents) and tritonclient.http (JSON and binary data) checks the outputs, which
come back as BYTES. A malformed BYTES input (a length prefix past the end) is INVALID_ARGUMENT.
Ends inferd with SIGTERM and expects exit 0.

usage: strings_clients_test.py INFERD_BINARY
"""

import os
import signal
import subprocess
import sys
import tempfile
import time

import grpc as grpcio
import numpy as np
import onnx
from onnx import TensorProto, helper
import tritonclient.grpc as grpcclient
from tritonclient.grpc import service_pb2
import tritonclient.http as httpclient

CONFIG = """
name: "text"
platform: "onnxruntime_onnx"
max_batch_size: 0
input [ { name: "text" data_type: TYPE_STRING dims: [ -1 ] } ]
output [
  { name: "normalized" data_type: TYPE_STRING dims: [ -1 ] },
  { name: "shouted" data_type: TYPE_STRING dims: [ -1 ] }
]
"""


def make_model(path):
    bang = helper.make_tensor("bang", TensorProto.STRING, [1], [b"!"])
    nodes = [
        helper.make_node("StringNormalizer", ["text"], ["normalized"],
                         case_change_action="LOWER", stopwords=["the"]),
        helper.make_node("StringConcat", ["text", "bang"], ["shouted"]),
    ]
    graph = helper.make_graph(
        nodes, "text",
        [helper.make_tensor_value_info("text", TensorProto.STRING, ["n"])],
        [helper.make_tensor_value_info("normalized", TensorProto.STRING, ["m"]),
         helper.make_tensor_value_info("shouted", TensorProto.STRING, ["n"])],
        initializer=[bang])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    onnx.checker.check_model(model)
    onnx.save(model, path)


def start(inferd, work):
    repo = os.path.join(work, "models")
    os.makedirs(os.path.join(repo, "text", "1"))
    make_model(os.path.join(repo, "text", "1", "model.onnx"))
    with open(os.path.join(repo, "text", "config.pbtxt"), "w") as f:
        f.write(CONFIG)
    port_file = os.path.join(work, "port")
    http_port_file = os.path.join(work, "http_port")
    log_path = os.path.join(work, "inferd.log")
    cmd = [inferd, "--model-repository=" + repo, "--grpc-port=0", "--http-port=0",
           "--metrics-port=0", "--admin-port=0", "--port-file", port_file, "--http-port-file",
           http_port_file]
    proc = subprocess.Popen(cmd, stdout=open(log_path, "w"), stderr=subprocess.STDOUT)
    deadline = time.time() + 60
    while not os.path.exists(port_file):
        assert proc.poll() is None, "inferd exited early: " + open(log_path).read()
        assert time.time() < deadline, "inferd not ready"
        time.sleep(0.02)
    return proc, log_path, int(open(http_port_file).read()), int(open(port_file).read())


TEXT = ["The", "Quick", "brown", "THE", "Fox", "Ünïcode"]
NORMALIZED = [b"quick", b"brown", b"fox", "ünïcode".encode()]
SHOUTED = [(t + "!").encode() for t in TEXT]


def check(result):
    normalized = result.as_numpy("normalized")
    shouted = result.as_numpy("shouted")
    assert list(normalized) == NORMALIZED, normalized
    assert list(shouted) == SHOUTED, shouted


def check_grpc(port):
    client = grpcclient.InferenceServerClient("127.0.0.1:%d" % port)
    i = grpcclient.InferInput("text", [len(TEXT)], "BYTES")
    i.set_data_from_numpy(np.array([t.encode() for t in TEXT], dtype=np.object_))
    check(client.infer("text", [i]))
    # contents.bytes_contents instead of raw_input_contents, through the raw stub.
    channel = grpcio.insecure_channel("127.0.0.1:%d" % port)
    stub = service_pb2_grpc().GRPCInferenceServiceStub(channel)
    req = service_pb2.ModelInferRequest(model_name="text")
    t = req.inputs.add(name="text", datatype="BYTES", shape=[len(TEXT)])
    t.contents.bytes_contents.extend([s.encode() for s in TEXT])
    resp = stub.ModelInfer(req)
    names = [o.name for o in resp.outputs]
    raw = resp.raw_output_contents[names.index("normalized")]
    got, at = [], 0
    while at < len(raw):
        n = int.from_bytes(raw[at:at + 4], "little")
        got.append(raw[at + 4:at + 4 + n])
        at += 4 + n
    assert got == NORMALIZED, got
    # A length prefix that runs past the end of the data.
    bad = service_pb2.ModelInferRequest(model_name="text")
    bad.inputs.add(name="text", datatype="BYTES", shape=[1])
    bad.raw_input_contents.append((100).to_bytes(4, "little") + b"abc")
    try:
        stub.ModelInfer(bad)
        raise AssertionError("a malformed BYTES input was accepted")
    except grpcio.RpcError as e:
        assert e.code() == grpcio.StatusCode.INVALID_ARGUMENT, e
        assert "100 bytes" in e.details(), e.details()
    channel.close()
    client.close()


def service_pb2_grpc():
    from tritonclient.grpc import service_pb2_grpc as m
    return m


def check_http(port):
    client = httpclient.InferenceServerClient("127.0.0.1:%d" % port)
    for binary in (False, True):
        i = httpclient.InferInput("text", [len(TEXT)], "BYTES")
        i.set_data_from_numpy(np.array([t.encode() for t in TEXT], dtype=np.object_),
                              binary_data=binary)
        outs = [httpclient.InferRequestedOutput(n, binary_data=binary)
                for n in ("normalized", "shouted")]
        result = client.infer("text", [i], outputs=outs)
        normalized = [v if isinstance(v, bytes) else v.encode()
                      for v in result.as_numpy("normalized")]
        shouted = [v if isinstance(v, bytes) else v.encode() for v in result.as_numpy("shouted")]
        assert normalized == NORMALIZED, (binary, normalized)
        assert shouted == SHOUTED, (binary, shouted)
    client.close()


def main():
    inferd = sys.argv[1]
    work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
    proc, log_path, http_port, grpc_port = start(inferd, work)
    try:
        check_grpc(grpc_port)
        check_http(http_port)
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=30)
    log = open(log_path).read()
    assert rc == 0, "inferd exited with %d: %s" % (rc, log)
    print("BYTES through tritonclient gRPC (raw, bytes_contents) and HTTP (JSON, binary): OK")


if __name__ == "__main__":
    main()
