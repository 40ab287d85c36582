#!/opt/inferd/venv/bin/python
"""Triton's own gRPC client (tritonclient 2.51, unchanged) against the real inferd: ServerMetadata's
extensions, ModelConfig and ModelStatistics field by field after a known number of requests
(including a failing one), and system shared memory end to end (tritonclient.utils.shared_memory
regions for inputs and outputs; the output read from shared memory equals the socket's answer).

usage: triton_api_test.py INFERD_BINARY MLP_MODEL_DIR GEN_MODELS_PY [--bench MIB,...] [--reps N]
  --bench: instead of the checks, print the latency of the shared-memory path against the
           socket path for tensors of those sizes (FP32, the offset model: y = x + 1).
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.utils.shared_memory as shm
from tritonclient.utils import InferenceServerException


class Inferd:
    """inferd on free ports, serving `models` (name -> directory)."""

    def __init__(self, binary, models, work):
        os.makedirs(os.path.join(work, "models"))
        for name, path in models.items():
            os.symlink(os.path.abspath(path), os.path.join(work, "models", name))
        config = os.path.join(work, "inferd.yaml")
        with open(config, "w") as f:
            f.write("server:\n  grpc_address: 127.0.0.1:0\n  http_address: 127.0.0.1:0\n"
                    "  admin_address: 127.0.0.1:0\n  metrics_address: 127.0.0.1:0\n"
                    "  model_repository: models\n  max_message_bytes: 512MiB\n"
                    "  load_all_models: true\n")
        port_file = os.path.join(work, "port")
        self.log = open(os.path.join(work, "inferd.log"), "w")
        self.proc = subprocess.Popen([binary, "--config", config, "--port-file", port_file],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while not os.path.exists(port_file) or not open(port_file).read().strip():
            assert self.proc.poll() is None, "inferd exited early: " + self.text()
            assert time.time() < deadline, "inferd not ready: " + self.text()
            time.sleep(0.02)
        self.url = "127.0.0.1:%d" % int(open(port_file).read())

    def text(self):
        self.log.flush()
        return open(self.log.name).read()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        status = self.proc.wait(timeout=60)
        self.log.close()
        assert status == 0, "inferd exit status %d: %s" % (status, self.text())


def expect_error(fn, code, fragment=""):
    try:
        fn()
    except InferenceServerException as e:
        assert e.status() == "StatusCode." + code, (e.status(), e.message())
        assert fragment in e.message(), e.message()
        return
    raise AssertionError("expected %s" % code)


def mlp_input(client):
    x = np.random.default_rng(1).standard_normal([4, 64]).astype(np.float32)
    inp = grpcclient.InferInput("x", [4, 64], "FP32")
    inp.set_data_from_numpy(x)
    return inp


def check_config(client):
    meta = client.get_server_metadata()
    for e in ("model_repository", "model_configuration", "statistics", "system_shared_memory"):
        assert e in meta.extensions, meta
    c = client.get_model_config("mlp").config
    assert c.name == "mlp" and c.platform == "onnxruntime_onnx" and c.backend == "onnxruntime", c
    assert c.max_batch_size == 0, c
    assert c.version_policy.latest.num_versions == 1, c
    assert [(i.name, i.data_type, list(i.dims)) for i in c.input] == [("x", 11, [4, 64])], c.input
    assert [o.name for o in c.output] == ["probs", "logits"], c.output
    assert all(o.data_type == 11 and list(o.dims) == [4, 10] for o in c.output), c.output
    assert len(c.instance_group) == 1 and c.instance_group[0].count >= 1, c.instance_group
    assert c.instance_group[0].kind == 2, c.instance_group  # KIND_CPU
    assert c.instance_group[0].name == "mlp_0", c.instance_group  # Triton's default name
    assert c.default_model_filename == "model.onnx", c
    # A variable dim is -1, as Triton.
    offset = client.get_model_config("offset").config
    assert list(offset.input[0].dims) == [-1], offset
    expect_error(lambda: client.get_model_config("nope"), "NOT_FOUND", "nope")
    expect_error(lambda: client.get_model_config("mlp", "9"), "NOT_FOUND", "version")


def one_stat(client, name, version=""):
    stats = client.get_inference_statistics(name, version).model_stats
    assert len(stats) == 1, stats
    return stats[0]


def check_statistics(client):
    before = one_stat(client, "mlp")
    assert before.inference_count == 0 and before.execution_count == 0, before
    assert before.last_inference == 0, before
    started_ms = int(time.time() * 1000)
    n = 3
    for _ in range(n):
        client.infer("mlp", [mlp_input(client)])
    # A request refused before it reaches the model (wrong shape): not in the model's counts.
    bad = grpcclient.InferInput("x", [4, 63], "FP32")
    bad.set_data_from_numpy(np.zeros([4, 63], dtype=np.float32))
    expect_error(lambda: client.infer("mlp", [bad]), "INVALID_ARGUMENT", "expected shape")
    s = one_stat(client, "mlp", "1")
    assert s.name == "mlp" and s.version == "1", s
    assert s.inference_count == n and s.execution_count == n, s
    st = s.inference_stats
    assert st.success.count == n and st.success.ns > 0, st
    assert st.fail.count == 0 and st.fail.ns == 0, st
    for part in (st.queue, st.compute_input, st.compute_infer, st.compute_output):
        assert part.count == n, st
    assert st.compute_infer.ns > 0 and st.compute_output.ns > 0, st
    # The request's whole time covers its parts (they do not overlap).
    parts = st.queue.ns + st.compute_input.ns + st.compute_infer.ns + st.compute_output.ns
    assert st.success.ns >= parts, (st.success.ns, parts)
    assert started_ms - 1000 <= s.last_inference <= int(time.time() * 1000) + 1000, s
    assert [b.batch_size for b in s.batch_stats] == [1], s.batch_stats
    b = s.batch_stats[0]
    assert b.compute_infer.count == n and b.compute_input.count == n, b
    assert b.compute_output.count == n, b
    assert 0 < b.compute_infer.ns <= st.compute_infer.ns, (b, st)
    assert len(s.memory_usage) >= 1 and s.memory_usage[0].type == "CPU", s.memory_usage
    assert s.memory_usage[0].byte_size > 0, s.memory_usage

    # A request that reaches the model and fails in its run: fail, nothing else.
    a = grpcclient.InferInput("a", [3], "FP32")
    a.set_data_from_numpy(np.ones([3], dtype=np.float32))
    b5 = grpcclient.InferInput("b", [5], "FP32")
    b5.set_data_from_numpy(np.ones([5], dtype=np.float32))
    try:
        client.infer("pair", [a, b5])
        raise AssertionError("a [3] + [5] run succeeded")
    except InferenceServerException:
        pass
    p = one_stat(client, "pair")
    assert p.inference_stats.fail.count == 1 and p.inference_stats.fail.ns > 0, p
    assert p.inference_stats.success.count == 0, p
    assert p.inference_count == 0 and p.execution_count == 0 and p.last_inference == 0, p
    assert list(p.batch_stats) == [], p

    every = client.get_inference_statistics().model_stats
    assert {m.name for m in every} >= {"mlp", "pair", "offset"}, every
    expect_error(lambda: client.get_inference_statistics("mlp", "9"), "NOT_FOUND")
    expect_error(lambda: client.get_inference_statistics("nope"), "NOT_FOUND")


class Regions:
    """Input and output regions of `nbytes` in POSIX shared memory, registered with inferd."""

    def __init__(self, client, tag, nbytes):
        self.client = client
        self.names = ["%s_in" % tag, "%s_out" % tag]
        self.handles = []
        for name in self.names:
            key = "/inferd_%s_%d" % (name, os.getpid())
            self.handles.append(shm.create_shared_memory_region(name, key, nbytes))
            client.register_system_shared_memory(name, key, nbytes)

    def close(self):
        for name, h in zip(self.names, self.handles):
            self.client.unregister_system_shared_memory(name)
            shm.destroy_shared_memory_region(h)


def infer_shm(client, regions, x):
    nbytes = x.nbytes
    shm.set_shared_memory_region(regions.handles[0], [x])
    inp = grpcclient.InferInput("x", list(x.shape), "FP32")
    inp.set_shared_memory(regions.names[0], nbytes)
    out = grpcclient.InferRequestedOutput("y")
    out.set_shared_memory(regions.names[1], nbytes)
    result = client.infer("offset", [inp], outputs=[out])
    y = shm.get_contents_as_numpy(regions.handles[1], np.float32, list(x.shape))
    return result, y


def infer_socket(client, x):
    inp = grpcclient.InferInput("x", list(x.shape), "FP32")
    inp.set_data_from_numpy(x)
    return client.infer("offset", [inp]).as_numpy("y")


def check_shared_memory(client):
    n = 1 << 20  # 4 MiB of FP32
    x = np.random.default_rng(2).standard_normal([n]).astype(np.float32)
    regions = Regions(client, "check", x.nbytes)
    status = client.get_system_shared_memory_status()
    got = {r.name: (r.key, r.offset, r.byte_size) for r in status.regions.values()}
    assert got["check_in"] == ("/inferd_check_in_%d" % os.getpid(), 0, x.nbytes), got

    # Registering a name twice: ALREADY_EXISTS, as Triton.
    expect_error(lambda: client.register_system_shared_memory(
        "check_in", "/inferd_check_in_%d" % os.getpid(), x.nbytes), "ALREADY_EXISTS")
    expect_error(lambda: client.register_system_shared_memory(
        "bad", "/inferd_no_such_key", 16), "NOT_FOUND")
    expect_error(lambda: client.register_system_shared_memory(
        "big", "/inferd_check_in_%d" % os.getpid(), x.nbytes + 1), "INVALID_ARGUMENT", "fit")

    result, y = infer_shm(client, regions, x)
    socket_y = infer_socket(client, x)
    assert np.array_equal(y, socket_y), "shared-memory output differs from the socket's"
    assert np.allclose(y, x + 1), "wrong output"
    response = result.get_response()
    assert len(response.raw_output_contents) == 0, "output bytes sent through the socket"
    params = result.get_output("y").parameters
    assert params["shared_memory_region"].string_param == "check_out", params
    assert params["shared_memory_byte_size"].int64_param == x.nbytes, params

    # An output region too small, an input range past the region, an unknown region.
    inp = grpcclient.InferInput("x", [n], "FP32")
    inp.set_shared_memory("check_in", x.nbytes)
    small = grpcclient.InferRequestedOutput("y")
    small.set_shared_memory("check_out", x.nbytes - 4)
    expect_error(lambda: client.infer("offset", [inp], outputs=[small]), "INVALID_ARGUMENT",
                 "too small")
    past = grpcclient.InferInput("x", [n], "FP32")
    past.set_shared_memory("check_in", x.nbytes, offset=4)
    expect_error(lambda: client.infer("offset", [past]), "INVALID_ARGUMENT", "do not fit")
    unknown = grpcclient.InferInput("x", [n], "FP32")
    unknown.set_shared_memory("nope", x.nbytes)
    expect_error(lambda: client.infer("offset", [unknown]), "INVALID_ARGUMENT", "nope")

    # Unregister every region (empty name); Status of a gone one: NOT_FOUND.
    client.unregister_system_shared_memory()
    assert len(client.get_system_shared_memory_status().regions) == 0
    expect_error(lambda: client.get_system_shared_memory_status("check_in"), "NOT_FOUND")
    for h in regions.handles:
        shm.destroy_shared_memory_region(h)


def bench(client, sizes_mib, reps):
    print("latency, offset model (y = x + 1, FP32), %d runs each after 2 warm-up runs" % reps)
    print("%8s %14s %14s %14s %14s" % ("MiB", "socket p50 ms", "shm p50 ms", "socket min ms",
                                       "shm min ms"))
    for mib in sizes_mib:
        x = np.random.default_rng(3).standard_normal([mib << 18]).astype(np.float32)
        regions = Regions(client, "bench%d" % mib, x.nbytes)
        times = {"socket": [], "shm": []}
        for i in range(reps + 2):
            t = time.perf_counter()
            infer_socket(client, x)
            socket_s = time.perf_counter() - t
            t = time.perf_counter()
            infer_shm(client, regions, x)  # includes writing x into and reading y out of shm
            shm_s = time.perf_counter() - t
            if i >= 2:
                times["socket"].append(socket_s * 1e3)
                times["shm"].append(shm_s * 1e3)
        regions.close()
        print("%8d %14.2f %14.2f %14.2f %14.2f" % (
            mib, np.median(times["socket"]), np.median(times["shm"]), min(times["socket"]),
            min(times["shm"])))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("inferd")
    p.add_argument("mlp")
    p.add_argument("gen_models")
    p.add_argument("--bench", default="")
    p.add_argument("--reps", type=int, default=20)
    args = p.parse_args()
    work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
    gen = os.path.join(work, "gen")
    subprocess.run(["/usr/bin/python3", args.gen_models, gen], check=True)
    server = Inferd(args.inferd, {"mlp": args.mlp, "offset": os.path.join(gen, "offset"),
                                  "pair": os.path.join(gen, "pair")}, work)
    try:
        client = grpcclient.InferenceServerClient(server.url)
        assert client.is_server_ready()
        if args.bench:
            bench(client, [int(m) for m in args.bench.split(",")], args.reps)
        else:
            check_config(client)
            check_statistics(client)
            check_shared_memory(client)
        client.close()
    except BaseException:
        print(server.text(), file=sys.stderr)
        raise
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    print("triton api ok")


if __name__ == "__main__":
    main()
