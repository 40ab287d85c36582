#!/usr/bin/python3
"""Checks that #include lines follow the folders' dependency arrows.

Bazel's visibility lists refuse a dependency that runs the wrong way, but a header that reaches a
target transitively can still be included without any dependency being declared (gcc has no
layering check). This check closes that gap: every quoted #include of one of our folders must
be allowed by the table below, which is the README's layout and the BUILD files' visibility
lists written as arrows. Test files, benchmarks and testing/ helpers may also include their folder's and
the allowed folders' testing/ headers.

Usage: check_arrows.py [REPO_ROOT]   (exit 1 and one line per violation when any)
"""
import os
import re
import subprocess
import sys

# folder -> what its sources may include: a folder ("engine/") or one header ("engine/graph.h").
# A folder may always include itself.
ENGINE_FOR_PARTITION = ["engine/graph.h", "engine/workspace_estimate.h", "engine/tensor.h",
                        "engine/shape.h", "engine/data_type.h", "engine/domain.h"]
PARTITION_PUBLIC = ["partition/partitioner.h", "partition/plan_report.h",
                    "partition/budget_recheck.h", "partition/boundary_copies.h",
                    "partition/device.h", "partition/activation_plan.h"]
KERNEL_API = ["engine/kernel.h", "engine/kernel_registry.h", "engine/thread_pool.h",
              "engine/tensor.h", "engine/shape.h", "engine/data_type.h", "engine/domain.h",
              "engine/copy.h", "engine/cuda_kernel_context.h", "engine/cuda_stream.h",
              "engine/device_runtime.h", "engine/float8.h"]
ALLOWED = {
    "base/": [],
    "memory/": ["base/"],
    # The activation plan charges a device what its arena will allocate: the planner and the
    # arena's size classes.
    "partition/": ["base/", "memory/memory_planner.h", "memory/size_classes.h"]
    + ENGINE_FOR_PARTITION,
    "engine/": ["base/", "memory/"] + PARTITION_PUBLIC,
    # kernels/build_kernels picks the build's device runtimes beside its kernels.
    "kernels/": ["base/", "memory/"] + KERNEL_API + ["engine/cuda_device_runtime.h"],
    "genai/": ["base/", "memory/", "engine/", "partition/"],
    "proto/": [],
    "server/": ["base/", "memory/", "engine/", "partition/", "kernels/", "proto/", "genai/"],
    "loadtest/": ["base/", "proto/"],
    "tools/": ["base/", "memory/", "engine/", "partition/", "kernels/", "proto/", "server/",
               "genai/"],
    "deploy/": ["base/", "proto/"],
    "tests/": None,  # cross-cutting suites: anything
}
OURS = [f for f in ALLOWED if f != "tests/"] + ["tests/"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def is_test_file(path):
    # Benchmark programs are test programs too: they drive kernels through the test harness.
    return path.endswith(("_test.cc", "_bench.cc")) or "/testing/" in path


def allowed(src, header):
    folder = next(f for f in ALLOWED if src.startswith(f))
    rules = ALLOWED[folder]
    if rules is None or header.startswith(folder):
        return True
    for rule in rules:
        if header == rule or (rule.endswith("/") and header.startswith(rule)):
            return True
    # Tests and testing/ helpers may also use any folder's testing/ helpers, the cross-cutting
    # suites' harnesses (tests/) and memory's fake allocator.
    if is_test_file(src) and "/testing/" in header:
        return True
    if is_test_file(src) and (header.startswith("tests/") or
                              header == "memory/fake_system_allocator.h"):
        return True
    return False


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()
    files = subprocess.run(["git", "-C", root, "ls-files", "*.cc", "*.h", "*.cu", "*.cuh"],
                           check=True, capture_output=True, text=True).stdout.split()
    bad = []
    for src in files:
        if not any(src.startswith(f) for f in ALLOWED):
            continue
        with open(os.path.join(root, src), encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                header = m.group(1)
                if not any(header.startswith(f) for f in OURS):
                    continue  # a library's header (absl/, onnx/, ...)
                if not allowed(src, header):
                    bad.append(f"{src}:{n}: includes {header}, against the arrows of {src.split('/')[0]}/")
    for b in bad:
        print(b)
    print(f"arrows: {len(files)} files, {len(bad)} includes against the arrows")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
