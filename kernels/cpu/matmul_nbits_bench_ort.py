"""ONNX Runtime's side of matmul_nbits_bench: microseconds per run of one com.microsoft
MatMulNBits node (4096 x 4096, 4-bit, packed zero points) at M = 1 and 32, block 32 and 128,
1 and 2 intra-op threads, accuracy_level 0 (float32 compute, as inferd) and 4 (ORT's int8
path). Best of 5 batches of at least 0.1 s, clocked as the C++ harness does.

    /opt/inferd/venv/bin/python kernels/cpu/matmul_nbits_bench_ort.py
"""
import time

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def session(m, k, n, block, threads, level):
    rng = np.random.default_rng(7)
    blocks = (k + block - 1) // block
    b = rng.integers(0, 256, size=(n, blocks, block // 2), dtype=np.uint8)
    scales = rng.uniform(0.01, 0.1, size=(n * blocks,)).astype(np.float32)
    zp = rng.integers(0, 256, size=(n * ((blocks + 1) // 2),), dtype=np.uint8)
    node = helper.make_node("MatMulNBits", ["A", "B", "scales", "zp"], ["Y"],
                            domain="com.microsoft", K=k, N=n, bits=4, block_size=block,
                            accuracy_level=level)
    g = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("A", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(b, "B"), numpy_helper.from_array(scales, "scales"),
         numpy_helper.from_array(zp, "zp")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21),
                                                helper.make_opsetid("com.microsoft", 1)])
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    s = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return s, {"A": rng.standard_normal((m, k)).astype(np.float32)}


def seconds_per_call(fn, threads):
#One thread : the calling thread's CPU time (ORT computes on the caller with one intra-op
#thread), which other load barely disturbs; more : wall time.As the C++ harness.
    clock = time.thread_time if threads == 1 else time.perf_counter
    for _ in range(3):
        fn()
    best = float("inf")
    for _ in range(5):
        calls, start = 0, clock()
        while True:
            fn()
            calls += 1
            elapsed = clock() - start
            if elapsed >= 0.1:
                break
        best = min(best, elapsed / calls)
    return best


def main():
    print(f"{'ORT MatMulNBits (4-bit, zp)':<34} {'level0 1t':>11} {'level0 2t':>11} "
          f"{'level4 1t':>11} {'level4 2t':>11}")
    for m in (1, 32):
        for block in (32, 128):
            row = []
            for level in (0, 4):
                for threads in (1, 2):
                    s, feeds = session(m, 4096, 4096, block, threads, level)
                    row.append(seconds_per_call(lambda: s.run(None, feeds), threads) * 1e6)
            print(f"M={m:<3} K=4096 N=4096 block={block:<4}      " +
                  " ".join(f"{t:8.1f} us" for t in row))


if __name__ == "__main__":
    main()
