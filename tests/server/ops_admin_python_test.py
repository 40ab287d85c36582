#!/usr/bin/python3
"""The admin API from Python (Debian's python3-grpcio, stubs generated from proto/admin.proto):
starts inferd with the mlp model and an admin token, runs one inference, then calls
GetMemoryStats with `authorization: Bearer <token>` and checks one entry per (device, arena) with
the counters an inference leaves; without the token the call is UNAUTHENTICATED.

usage: ops_admin_python_test.py INFERD_BINARY STUB_DIR MODEL_DIR
"""

import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    inferd, stub_dir, model_dir = sys.argv[1:4]
    sys.path.insert(0, stub_dir)
    import grpc  # noqa: E402
    import admin_pb2  # noqa: E402
    import admin_pb2_grpc  # noqa: E402
    import inference_pb2  # noqa: E402
    import inference_pb2_grpc  # noqa: E402

    token = secrets.token_hex(16)
    work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
    os.makedirs(os.path.join(work, "models"))
    os.symlink(os.path.abspath(model_dir), os.path.join(work, "models", "mlp"))
    admin_port = free_port()
    config = os.path.join(work, "inferd.yaml")
    with open(config, "w") as f:
        f.write("server:\n  http_address: 127.0.0.1:0\n  grpc_address: 127.0.0.1:0\n"
                "  admin_address: 127.0.0.1:%d\n  metrics_address: 127.0.0.1:0\n"
                "  admin_token_env: OPS_PY_TOKEN\n  model_repository: models\n" % admin_port)
    port_file = os.path.join(work, "port")
    log = open(os.path.join(work, "inferd.log"), "w")
    env = dict(os.environ, OPS_PY_TOKEN=token)
    proc = subprocess.Popen([inferd, "--config", config, "--port-file", port_file],
                            stdout=log, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.time() + 60
        while not os.path.exists(port_file):
            assert proc.poll() is None, "inferd exited early: " + open(log.name).read()
            assert time.time() < deadline, "inferd not ready"
            time.sleep(0.02)
        port = int(open(port_file).read())

        # One inference, so the IO arena has counted something.
        t = onnx.TensorProto()
        with open(os.path.join(model_dir, "test_data_set_0", "input_0.pb"), "rb") as f:
            t.ParseFromString(f.read())
        x = numpy_helper.to_array(t).astype(np.float32)
        infer = inference_pb2_grpc.GRPCInferenceServiceStub(
            grpc.insecure_channel("127.0.0.1:%d" % port))
        req = inference_pb2.ModelInferRequest(model_name="mlp")
        req.inputs.add(name=t.name, datatype="FP32", shape=list(x.shape))
        req.raw_input_contents.append(x.tobytes())
        infer.ModelInfer(req)

        admin = admin_pb2_grpc.AdminStub(grpc.insecure_channel("127.0.0.1:%d" % admin_port))
        try:
            admin.GetMemoryStats(admin_pb2.GetMemoryStatsRequest())
            raise AssertionError("GetMemoryStats without a token succeeded")
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.UNAUTHENTICATED, e

        auth = (("authorization", "Bearer " + token),)
        stats = admin.GetMemoryStats(admin_pb2.GetMemoryStatsRequest(), metadata=auth)
        keys = [(a.model, a.device, a.arena) for a in stats.arenas]
        assert keys == [("mlp", "cpu:0", "execution"), ("mlp", "cpu:0", "io")], keys
        io = stats.arenas[1]
        assert io.allocations > 0 and io.system_allocations > 0, io
        assert io.unbounded and io.retention_cap_bytes == 0, io

        only_io = admin.GetMemoryStats(admin_pb2.GetMemoryStatsRequest(model="mlp", arena="io"),
                                       metadata=auth)
        assert len(only_io.arenas) == 1 and only_io.arenas[0].arena == "io", only_io
        try:
            admin.GetMemoryStats(admin_pb2.GetMemoryStatsRequest(model="nope"), metadata=auth)
            raise AssertionError("unknown model accepted")
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.NOT_FOUND, e
            assert "mlp" in e.details(), e.details()
        print("ok: %d arenas, io allocations %d" % (len(stats.arenas), io.allocations))
    finally:
        proc.terminate()
        rc = proc.wait(timeout=30)
        if rc != 0:
            print(open(log.name).read())
        assert rc == 0, "inferd exit status %d" % rc


if __name__ == "__main__":
    main()
