"""A repository written for Triton, served unchanged, used by Triton's own clients.

The switching user's whole path, end to end: a Triton model repository (config.pbtxt with
platform, max_batch_size, dims without the batch dimension, dynamic_batching, a version policy
serving versions 1 and 2, a field inferd does not honour; and a second model with no config.pbtxt,
auto-completed) is served by `inferd --model-repository=DIR` with tritonserver's flags and no
YAML. Then, with tritonclient.grpc and tritonclient.http (pinned in /opt/inferd/venv, unchanged)
and curl:
  - readiness, model readiness per version, model config (the file's fields, completed);
  - 24 concurrent requests (gRPC, HTTP JSON and HTTP binary) of one row each, every answer equal
    to the same row run alone; the model's statistics show runs of more than one request
    (dynamic batching formed batches) and count every request;
  - the auto-completed model infers with the batch dimension Triton's backend gives it;
  - the unknown field is a warning in the log naming it, not a refusal.
Ends inferd with SIGTERM and expects exit 0.

usage: triton_repository_clients_test.py INFERD_BINARY MLP_DYNAMIC_ONNX CNN_DYNAMIC_ONNX
"""

import concurrent.futures
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

MLP_CONFIG = """
name: "mlp"
platform: "onnxruntime_onnx"
max_batch_size: 8
version_policy: { all { } }
input [ { name: "x" data_type: TYPE_FP32 dims: [ 64 ] } ]
output [
  { name: "probs" data_type: TYPE_FP32 dims: [ 10 ] },
  { name: "logits" data_type: TYPE_FP32 dims: [ 10 ] }
]
instance_group [ { count: 1 kind: KIND_CPU } ]
dynamic_batching {
  preferred_batch_size: [ 4, 8 ]
  max_queue_delay_microseconds: 5000
}
optimization { input_pinned_memory { enable: true } }
"""


def make_repository(repo, mlp_onnx, cnn_onnx):
    for version in ("1", "2"):
        os.makedirs(os.path.join(repo, "mlp", version))
        os.symlink(os.path.abspath(mlp_onnx), os.path.join(repo, "mlp", version, "model.onnx"))
    with open(os.path.join(repo, "mlp", "config.pbtxt"), "w") as f:
        f.write(MLP_CONFIG)
    os.makedirs(os.path.join(repo, "cnn", "1"))
    os.symlink(os.path.abspath(cnn_onnx), os.path.join(repo, "cnn", "1", "model.onnx"))


def start(inferd, work, mlp_onnx, cnn_onnx):
    repo = os.path.join(work, "models")
    make_repository(repo, mlp_onnx, cnn_onnx)
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


def check_config(http, grpc):
    for client in (http, grpc):
        assert client.is_server_ready()
        assert client.is_model_ready("mlp", "1") and client.is_model_ready("mlp", "2")
        assert client.is_model_ready("cnn")
    c = http.get_model_config("mlp")
    assert c["max_batch_size"] == 8, c
    assert c["input"][0]["dims"] == [64] and c["input"][0]["data_type"] == "TYPE_FP32", c
    assert c["dynamic_batching"]["preferred_batch_size"] == [4, 8], c
    g = grpc.get_model_config("mlp").config
    assert g.max_batch_size == 8 and list(g.dynamic_batching.preferred_batch_size) == [4, 8], g
    # No config.pbtxt: completed as Triton's ONNX Runtime backend does (every input and output
    # has a dynamic first dimension: max_batch_size 4, dynamic batching on).
    auto = http.get_model_config("cnn")
    assert auto["max_batch_size"] == 4 and "dynamic_batching" in auto, auto
    assert auto["input"][0]["dims"] == [3, 32, 32], auto


def grpc_infer(client, x, version):
    i = grpcclient.InferInput("x", list(x.shape), "FP32")
    i.set_data_from_numpy(x)
    return client.infer("mlp", [i], model_version=version).as_numpy("probs")


def http_infer(client, x, version, binary):
    i = httpclient.InferInput("x", list(x.shape), "FP32")
    i.set_data_from_numpy(x, binary_data=binary)
    out = [httpclient.InferRequestedOutput("probs", binary_data=binary)]
    return client.infer("mlp", [i], outputs=out, model_version=version).as_numpy("probs")


def check_batched_inference(http_port, grpc_port):
    rng = np.random.default_rng(17)
    rows = [rng.standard_normal((1, 64)).astype(np.float32) for _ in range(24)]
    ref_client = grpcclient.InferenceServerClient("127.0.0.1:%d" % grpc_port)
    want = [grpc_infer(ref_client, x, "1") for x in rows]  # one at a time: batches of 1
    before = ref_client.get_inference_statistics("mlp", "2", as_json=True)["model_stats"][0]

    def one(i):  # a client per request, as 24 independent users
        x, version = rows[i], "2"
        if i % 3 == 0:
            c = grpcclient.InferenceServerClient("127.0.0.1:%d" % grpc_port)
            got = grpc_infer(c, x, version)
        else:
            c = httpclient.InferenceServerClient("127.0.0.1:%d" % http_port)
            got = http_infer(c, x, version, binary=(i % 3 == 1))
        c.close()
        return i, got

    with concurrent.futures.ThreadPoolExecutor(max_workers=24) as pool:
        for i, got in pool.map(one, range(24)):
            assert got.shape == (1, 10), got.shape
            np.testing.assert_allclose(got, want[i], rtol=1e-5, atol=1e-6)
    after = ref_client.get_inference_statistics("mlp", "2", as_json=True)["model_stats"][0]
    count = int(after.get("inference_count", 0)) - int(before.get("inference_count", 0))
    execs = int(after.get("execution_count", 0)) - int(before.get("execution_count", 0))
    sizes = [int(b["batch_size"]) for b in after.get("batch_stats", [])]
    assert count == 24, after
    assert execs < 24 and max(sizes) > 1, ("no batch formed", execs, sizes)
    print("mlp v2: 24 requests in %d runs, batch sizes %s" % (execs, sorted(sizes)))
    ref_client.close()


def check_auto_completed(http):
    x = np.zeros((2, 3, 32, 32), np.float32)
    i = httpclient.InferInput("image", [2, 3, 32, 32], "FP32")
    i.set_data_from_numpy(x, binary_data=True)
    probs = http.infer("cnn", [i]).as_numpy("probs")
    assert probs.shape == (2, 10), probs.shape


def check_curl(http_port):
    base = "http://127.0.0.1:%d" % http_port
    code = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}",
                           base + "/v2/health/ready"], capture_output=True, text=True).stdout
    assert code == "200", code
    body = subprocess.run(["curl", "-s", base + "/v2/models/mlp/versions/1"],
                          capture_output=True, text=True).stdout
    assert '"versions":["1"]' in body.replace(" ", ""), body


def main():
    inferd, mlp_onnx, cnn_onnx = sys.argv[1:4]
    work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
    proc, log_path, http_port, grpc_port = start(inferd, work, mlp_onnx, cnn_onnx)
    try:
        http = httpclient.InferenceServerClient("127.0.0.1:%d" % http_port)
        grpc = grpcclient.InferenceServerClient("127.0.0.1:%d" % grpc_port)
        check_config(http, grpc)
        check_batched_inference(http_port, grpc_port)
        check_auto_completed(http)
        check_curl(http_port)
        http.close()
        grpc.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=30)
    log = open(log_path).read()
    assert rc == 0, "inferd exited with %d: %s" % (rc, log)
    assert "optimization" in log and "ignored" in log, "no warning for the unknown field:\n" + log
    print("Triton repository, tritonclient gRPC + HTTP, curl: OK")


if __name__ == "__main__":
    main()
