"""ModelStreamInfer end to end with tritonclient's streaming gRPC API.

A repository holding a generative model (a folder of genai/testdata/models: a Hugging Face
export, or llama_genai, onnxruntime-genai's builder layout; and a config.yaml with `generation`
settings) is served by `inferd --model-repository`. Then with tritonclient.grpc:
  - ModelConfig says decoupled; ModelInfer on the model is refused (use the stream);
  - one streamed request: one response per token (text_output, token_id,
    triton_final_response false), then a final one flagged true; the ids equal ONNX Runtime's
    greedy loop (expected.json) and the texts add up to the whole answer;
  - two requests at once on one stream, each with its own KV block, both equal the reference;
  - a request whose KV block does not fit the budget is refused before it starts (an error
    response, no token), while the others run; inferd_kv_cache_* are in the metrics;
  - stream=false: one final response with the whole text.
Ends inferd with SIGTERM and expects exit 0.

usage: stream_infer_test.py INFERD_BINARY MODEL_DIR
"""

import json
import os
import queue
import shutil
import socket
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

import numpy as np
import onnx
import tritonclient.grpc as grpcclient
from tritonclient.utils import InferenceServerException

CONFIG = """generation:
  max_length: 128
  max_sequences: 2
  kv_cache_budget: %d
"""


def kv_bytes_per_position(model_dir):
    """Sum over the cache inputs of kv_heads x head_dim x 4 bytes (float32)."""
    genai = os.path.join(model_dir, "genai_config.json")
    if os.path.exists(genai):
        dec = json.load(open(genai))["model"]["decoder"]
        return dec["num_hidden_layers"] * 2 * dec["num_key_value_heads"] * dec["head_size"] * 4
    m = onnx.load(os.path.join(model_dir, "model.onnx"), load_external_data=False)
    total = 0
    for i in m.graph.input:
        if i.name.startswith("past_key_values."):
            dims = i.type.tensor_type.shape.dim
            total += dims[1].dim_value * dims[3].dim_value * 4
    return total


def start(inferd, work, model_dir):
    repo = os.path.join(work, "models")
    os.makedirs(os.path.join(repo, "tiny"))
    for f in os.listdir(model_dir):
        if f != "expected.json":
            shutil.copy(os.path.join(model_dir, f), os.path.join(repo, "tiny", f))
    with open(os.path.join(repo, "tiny", "config.yaml"), "w") as f:
        # Budget: 120 positions.
        f.write(CONFIG % (kv_bytes_per_position(model_dir) * 120))
    port_file = os.path.join(work, "port")
    log_path = os.path.join(work, "inferd.log")
    with socket.socket() as s:  # a free port for the metrics (inferd has no metrics port file)
        s.bind(("127.0.0.1", 0))
        metrics = s.getsockname()[1]
    cmd = [inferd, "--model-repository=" + repo, "--grpc-port=0", "--http-port=0",
           "--metrics-port=%d" % metrics, "--admin-port=0", "--port-file", port_file]
    proc = subprocess.Popen(cmd, stdout=open(log_path, "w"), stderr=subprocess.STDOUT)
    deadline = time.time() + 60
    while not os.path.exists(port_file):
        assert proc.poll() is None, "inferd exited early: " + open(log_path).read()
        assert time.time() < deadline, "inferd not ready"
        time.sleep(0.02)
    return proc, log_path, int(open(port_file).read()), metrics


def text_inputs(prompt, max_tokens, stream=True):
    t = grpcclient.InferInput("text_input", [1], "BYTES")
    t.set_data_from_numpy(np.array([prompt.encode()], dtype=object))
    m = grpcclient.InferInput("max_tokens", [1], "INT32")
    m.set_data_from_numpy(np.array([max_tokens], dtype=np.int32))
    s = grpcclient.InferInput("stream", [1], "BOOL")
    s.set_data_from_numpy(np.array([stream], dtype=bool))
    return [t, m, s]


def collect(q, requests, timeout=60):
    """Responses by request id until each has its final one (or an error)."""
    out = {r: {"ids": [], "text": "", "finals": 0, "error": None, "final_text": None}
           for r in requests}
    pending = set(requests)
    deadline = time.time() + timeout
    while pending:
        result, error = q.get(timeout=max(1, deadline - time.time()))
        if error is not None:
            # Errors carry no id in tritonclient's callback: they go to the one request that
            # expects one (the test sends at most one failing request at a time).
            over = [r for r in pending if r.startswith("over")]
            assert over, "unexpected error response: %s" % error
            rid = over[0]
            out[rid]["error"] = str(error)
            pending.discard(rid)
            continue
        resp = result.get_response()
        rid = resp.id
        final = resp.parameters["triton_final_response"].bool_param
        ids = result.as_numpy("token_id")
        text = result.as_numpy("text_output")
        if ids is not None:
            assert not final, resp
            out[rid]["ids"].append(int(ids[0]))
            out[rid]["text"] += text[0].decode()
        elif final and text is not None:
            out[rid]["final_text"] = text[0].decode()
        if final:
            out[rid]["finals"] += 1
            pending.discard(rid)
    return out


def main():
    inferd, model_dir = sys.argv[1], sys.argv[2]
    expected = json.load(open(os.path.join(model_dir, "expected.json")))
    want = expected["greedy_ids"]
    work = tempfile.mkdtemp()
    proc, log_path, port, metrics_port = start(inferd, work, model_dir)
    try:
        client = grpcclient.InferenceServerClient("127.0.0.1:%d" % port)
        assert client.is_model_ready("tiny")
        config = client.get_model_config("tiny").config
        assert config.model_transaction_policy.decoupled, config
        try:
            client.infer("tiny", text_inputs("hi", 4))
            raise AssertionError("ModelInfer on a generative model must be refused")
        except InferenceServerException as e:
            assert "ModelStreamInfer" in str(e), e

        q = queue.Queue()
        client.start_stream(callback=lambda result, error: q.put((result, error)))
        # One request, then two at once: each equals ONNX Runtime's greedy loop.
        client.async_stream_infer("tiny", text_inputs(expected["prompt"], len(want)),
                                  request_id="a")
        got = collect(q, ["a"])["a"]
        assert got["ids"] == want, (got["ids"], want)
        assert got["finals"] == 1 and got["error"] is None, got
        for rid in ("b", "c"):
            client.async_stream_infer("tiny", text_inputs(expected["prompt"], len(want)),
                                      request_id=rid)
        both = collect(q, ["b", "c"])
        for rid in ("b", "c"):
            assert both[rid]["ids"] == want, (rid, both[rid]["ids"])
        # Budget: 120 positions. A 100-token answer fits alone; while it runs, a second one of
        # 100 (12 prompt + 100 > the 8 left) is refused before it starts, and no token of it
        # comes back.
        client.async_stream_infer("tiny", text_inputs(expected["prompt"], 100), request_id="long")
        client.async_stream_infer("tiny", text_inputs(expected["prompt"], 100), request_id="over")
        res = collect(q, ["long", "over"])
        assert len(res["long"]["ids"]) == 100 or res["long"]["finals"] == 1, res["long"]
        assert res["over"]["error"] is not None and "KV cache budget" in res["over"]["error"], res
        assert res["over"]["ids"] == [], res["over"]
        # stream = false: the whole text in the final response.
        client.async_stream_infer("tiny", text_inputs(expected["prompt"], len(want), False),
                                  request_id="whole")
        whole = collect(q, ["whole"])["whole"]
        assert whole["ids"] == [] and whole["final_text"] == got["text"], whole
        client.stop_stream()
        if metrics_port:
            body = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % metrics_port).read()
            body = body.decode()
            for family in ("inferd_kv_cache_bytes", "inferd_kv_cache_budget_bytes",
                           "inferd_kv_cache_refused_total"):
                assert family + '{model="tiny"}' in body, family
            assert 'inferd_kv_cache_refused_total{model="tiny"} 1' in body, body
            assert 'inferd_kv_cache_bytes{model="tiny"} 0' in body, body  # all released
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
    assert code == 0, "inferd exited %d: %s" % (code, open(log_path).read())
    print("stream_infer_test: OK")


if __name__ == "__main__":
    main()
