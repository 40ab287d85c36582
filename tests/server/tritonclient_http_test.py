"""Triton's own Python client (tritonclient.http, from the pinned /opt/inferd/venv) against the
real inferd over HTTP/REST: a Triton user's code runs unchanged. Starts inferd with the mlp model
on free ports, then: is_server_live / is_server_ready / is_model_ready, get_server_metadata,
get_model_metadata, get_model_config, infer with JSON and with binary tensor data (each output
compared to tritonclient.grpc's answer for the same input), get_inference_statistics, and the
error a Triton client sees for an unknown model. Ends inferd with SIGTERM and expects exit 0.

usage: tritonclient_http_test.py INFERD_BINARY MODEL_DIR
"""

import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException


def start(inferd, model_dir, work):
    os.makedirs(os.path.join(work, "models"))
    os.symlink(os.path.abspath(model_dir), os.path.join(work, "models", "mlp"))
    config = os.path.join(work, "inferd.yaml")
    with open(config, "w") as f:
        f.write("server:\n  http_address: 127.0.0.1:0\n  grpc_address: 127.0.0.1:0\n"
                "  admin_address: 127.0.0.1:0\n  metrics_address: 127.0.0.1:0\n"
                "  model_repository: models\n")
    port_file = os.path.join(work, "port")
    http_port_file = os.path.join(work, "http_port")
    log = open(os.path.join(work, "inferd.log"), "w")
    proc = subprocess.Popen([inferd, "--config", config, "--port-file", port_file,
                             "--http-port-file", http_port_file],
                            stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 60
    while not os.path.exists(port_file):
        assert proc.poll() is None, "inferd exited early: " + open(log.name).read()
        assert time.time() < deadline, "inferd not ready"
        time.sleep(0.02)
    return proc, int(open(http_port_file).read()), int(open(port_file).read())


def check(http, grpc):
    assert http.is_server_live()
    assert http.is_server_ready()
    assert http.is_model_ready("mlp")
    meta = http.get_server_metadata()
    assert meta["name"] == "inferd", meta
    assert "binary_tensor_data" in meta["extensions"], meta
    model = http.get_model_metadata("mlp")
    assert model["inputs"] == [{"name": "x", "datatype": "FP32", "shape": [4, 64]}], model
    assert [o["name"] for o in model["outputs"]] == ["probs", "logits"], model
    config = http.get_model_config("mlp")
    assert config["name"] == "mlp" and config["max_batch_size"] == 0, config
    assert config["input"][0]["dims"] == [4, 64], config
    assert config["input"][0]["data_type"] == "TYPE_FP32", config

    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 64)).astype(np.float32)
    gin = grpcclient.InferInput("x", [4, 64], "FP32")
    gin.set_data_from_numpy(x)
    want = grpc.infer("mlp", [gin])
    for binary in (False, True):
        hin = httpclient.InferInput("x", [4, 64], "FP32")
        hin.set_data_from_numpy(x, binary_data=binary)
        outs = [httpclient.InferRequestedOutput("probs", binary_data=binary),
                httpclient.InferRequestedOutput("logits", binary_data=not binary)]
        got = http.infer("mlp", [hin], outputs=outs, request_id="req-%d" % binary)
        assert got.get_response()["id"] == "req-%d" % binary
        for name in ("probs", "logits"):
            a, b = got.as_numpy(name), want.as_numpy(name)
            assert a.dtype == np.float32 and a.shape == (4, 10), (name, a.dtype, a.shape)
            assert np.array_equal(a, b), (name, binary, np.abs(a - b).max())

    stats = http.get_inference_statistics("mlp")["model_stats"][0]
    assert stats["name"] == "mlp" and stats["inference_count"] == 3, stats
    assert stats["inference_stats"]["success"]["count"] == 3, stats
    all_stats = http.get_inference_statistics()
    assert [s["name"] for s in all_stats["model_stats"]] == ["mlp"], all_stats

    try:
        http.get_model_metadata("nope")
        raise AssertionError("unknown model answered")
    except InferenceServerException as e:
        assert "unknown model 'nope'" in e.message(), e.message()
        assert e.status() == "404", e.status()


def main():
    inferd, model_dir = sys.argv[1:3]
    work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
    proc, http_port, grpc_port = start(inferd, model_dir, work)
    try:
        http = httpclient.InferenceServerClient("127.0.0.1:%d" % http_port)
        grpc = grpcclient.InferenceServerClient("127.0.0.1:%d" % grpc_port)
        check(http, grpc)
        http.close()
        grpc.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=30)
    assert rc == 0, "inferd exited with %d: %s" % (rc, open(os.path.join(work, "inferd.log")).read())
    print("tritonclient.http: OK")


if __name__ == "__main__":
    main()
