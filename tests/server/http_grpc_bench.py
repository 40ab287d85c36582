"""Latency of one mlp inference over HTTP/REST (JSON tensors, binary tensor data) and gRPC,
measured with Triton's own clients (tritonclient 2.51.0 from /opt/inferd/venv), one request at a
time. Prints a table (median, p90, p99 in microseconds).

usage: /opt/inferd/venv/bin/python tests/server/http_grpc_bench.py HTTP_PORT GRPC_PORT [N]
  (inferd serving tools/models mlp; e.g. bazel-bin/server/inferd --config ... --port-file P
   --http-port-file H)
"""

import sys
import time

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient


def measure(fn, n):
    for _ in range(max(20, n // 10)):  # warm up connections and arenas
        fn()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e6)
    return np.percentile(times, [50, 90, 99])


def main():
    http_port, grpc_port = int(sys.argv[1]), int(sys.argv[2])
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 500
    x = np.random.default_rng(1).standard_normal((4, 64)).astype(np.float32)
    h = httpclient.InferenceServerClient("127.0.0.1:%d" % http_port)
    g = grpcclient.InferenceServerClient("127.0.0.1:%d" % grpc_port)

    def http_infer(binary):
        i = httpclient.InferInput("x", [4, 64], "FP32")
        i.set_data_from_numpy(x, binary_data=binary)
        outs = [httpclient.InferRequestedOutput(o, binary_data=binary) for o in ("probs", "logits")]
        return lambda: h.infer("mlp", [i], outputs=outs)

    gi = grpcclient.InferInput("x", [4, 64], "FP32")
    gi.set_data_from_numpy(x)
    rows = [("HTTP JSON", http_infer(False)), ("HTTP binary", http_infer(True)),
            ("gRPC", lambda: g.infer("mlp", [gi]))]
    print("mlp [4,64] FP32 -> 2 x [4,10], %d sequential requests each" % n)
    print("%-12s %10s %10s %10s" % ("transport", "p50 us", "p90 us", "p99 us"))
    for name, fn in rows:
        p50, p90, p99 = measure(fn, n)
        print("%-12s %10.0f %10.0f %10.0f" % (name, p50, p90, p99))


if __name__ == "__main__":
    main()
