#!/usr/bin/python3
"""A KServe v2 client in Python against the real inferd: proves a client in another language
works unchanged. Starts inferd on a free port with the mlp model, then calls ServerLive,
ServerMetadata, ModelMetadata and ModelInfer (raw_input_contents, as tritonclient sends them)
through the stubs generated from proto/inference.proto, and checks the outputs against the
model's numpy reference. Ends inferd with SIGTERM and expects exit status 0.

usage: python_client.py INFERD_BINARY STUB_DIR MODEL_DIR
"""

import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper


def load_tensor(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, numpy_helper.to_array(t)


def main():
    inferd, stub_dir, model_dir = sys.argv[1:4]
    sys.path.insert(0, stub_dir)
    import grpc  # noqa: E402
    import inference_pb2  # noqa: E402
    import inference_pb2_grpc  # noqa: E402

    work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
    os.makedirs(os.path.join(work, "models"))
    os.symlink(os.path.abspath(model_dir), os.path.join(work, "models", "mlp"))
    config = os.path.join(work, "inferd.yaml")
    with open(config, "w") as f:
        f.write("server:\n  http_address: 127.0.0.1:0\n  grpc_address: 127.0.0.1:0\n  admin_address: 127.0.0.1:0\n"
                "  metrics_address: 127.0.0.1:0\n  model_repository: models\n")
    port_file = os.path.join(work, "port")
    log = open(os.path.join(work, "inferd.log"), "w")
    proc = subprocess.Popen([inferd, "--config", config, "--port-file", port_file],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 60
        while not os.path.exists(port_file):
            assert proc.poll() is None, "inferd exited early: " + open(log.name).read()
            assert time.time() < deadline, "inferd not ready"
            time.sleep(0.02)
        port = int(open(port_file).read())
        channel = grpc.insecure_channel("127.0.0.1:%d" % port)
        stub = inference_pb2_grpc.GRPCInferenceServiceStub(channel)

        assert stub.ServerLive(inference_pb2.ServerLiveRequest()).live
        assert stub.ServerReady(inference_pb2.ServerReadyRequest()).ready
        meta = stub.ServerMetadata(inference_pb2.ServerMetadataRequest())
        assert meta.name == "inferd", meta

        model = stub.ModelMetadata(inference_pb2.ModelMetadataRequest(name="mlp"))
        assert [i.name for i in model.inputs] == ["x"], model
        assert model.inputs[0].datatype == "FP32"
        assert list(model.inputs[0].shape) == [4, 64]
        assert [o.name for o in model.outputs] == ["probs", "logits"]

        data = os.path.join(model_dir, "test_data_set_0")
        name, x = load_tensor(os.path.join(data, "input_0.pb"))
        expected = dict(load_tensor(os.path.join(data, "output_%d.pb" % i)) for i in range(2))
        request = inference_pb2.ModelInferRequest(model_name="mlp", id="py-1")
        tensor = request.inputs.add()
        tensor.name = name
        tensor.datatype = "FP32"
        tensor.shape.extend(x.shape)
        request.raw_input_contents.append(x.astype("<f4").tobytes())
        response = stub.ModelInfer(request)
        assert response.model_name == "mlp" and response.id == "py-1", response
        assert len(response.raw_output_contents) == len(response.outputs) == 2
        for out, raw in zip(response.outputs, response.raw_output_contents):
            assert out.datatype == "FP32", out
            got = np.frombuffer(raw, dtype="<f4").reshape(list(out.shape))
            want = expected[out.name]
            assert got.shape == want.shape, (out.name, got.shape, want.shape)
            assert np.allclose(got, want, rtol=1e-3, atol=1e-5), out.name

        try:
            bad = inference_pb2.ModelInferRequest(model_name="mlp")
            bad.inputs.add(name="x", datatype="FP32", shape=[4, 64])
            bad.raw_input_contents.append(b"\0" * 1020)
            stub.ModelInfer(bad)
            raise AssertionError("a short input was accepted")
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, e
            assert "expected FP32 [4,64] (1024 bytes), got 1020 bytes" in e.details(), e.details()
        channel.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        status = proc.wait(timeout=60)
        log.close()
    assert status == 0, "inferd exit status %d: %s" % (status, open(log.name).read())
    print("python client ok")


if __name__ == "__main__":
    main()
