"""cuda_toolkit: a repository of the CUDA toolkit installed on this machine (nothing is downloaded).

Where the toolkit is ($CUDA_PATH, else /usr/local/cuda) and has bin/nvcc, the repository links its
include/ folder, says where nvcc is (@cuda//:defs.bzl, NVCC) and defines one cc_library per
library we use: @cuda//:cudart (the runtime), @cuda//:cublas (cuBLAS and cuBLASLt),
@cuda//:cudnn, @cuda//:cccl (CUB, Thrust).
Where it has none, the same targets exist but are incompatible with every platform, so a target
that needs them is skipped instead of failing the build.
"""

_FOUND = """\
# The CUDA toolkit at {path} (written by //tools/bazel:cuda_toolkit.bzl).
package(default_visibility = ["//visibility:public"])

# The runtime's and the libraries' headers; CCCL (CUB, Thrust, libcu++) is its own target.
cc_library(
    name = "headers",
    hdrs = glob(
        ["include/**/*.h", "include/**/*.hpp"],
        exclude = [
            "include/cccl/**",
            "include/Openacc/**",
            "include/Openmp/**",
            "include/nccl_device/**",
        ],
    ),
    includes = ["include"],
)

cc_library(
    name = "cccl",
    hdrs = glob(["include/cccl/**"]),
    includes = ["include/cccl"],
    deps = [":headers"],
)

# The runtime, linked as a shared library: Bazel links tests against one shared object per
# cc_library, and a static runtime would not be visible from them.
cc_library(
    name = "cudart",
    linkopts = [
        "-L{path}/lib64",
        "-Wl,-rpath,{path}/lib64",
        "-lcudart",
    ],
    deps = [":headers"],
)

cc_library(
    name = "cublas",
    linkopts = [
        "-L{path}/lib64",
        "-Wl,-rpath,{path}/lib64",
        "-lcublasLt",
        "-lcublas",
    ],
    deps = [":cudart"],
)

cc_library(
    name = "cudnn",
    linkopts = [
        "-L{path}/lib64",
        "-Wl,-rpath,{path}/lib64",
        "-lcudnn",
    ],
    deps = [":cudart"],
)
"""

_MISSING = """\
# No CUDA toolkit was found at {path} (no bin/nvcc): every target here is incompatible, so the
# targets that need CUDA are skipped (written by //tools/bazel:cuda_toolkit.bzl).
package(default_visibility = ["//visibility:public"])

constraint_setting(name = "toolkit")

constraint_value(
    name = "toolkit_missing",
    constraint_setting = ":toolkit",
)

[cc_library(
    name = name,
    target_compatible_with = [":toolkit_missing"],
) for name in ["headers", "cccl", "cudart", "cublas", "cudnn"]]
"""

_DEFS = """\
# Where nvcc is ("" when no toolkit was found); read by //tools/bazel:cuda.bzl.
NVCC = "{nvcc}"
"""

def _cuda_toolkit_impl(rctx):
    path = rctx.os.environ.get("CUDA_PATH", rctx.attr.path)
    if rctx.path(path + "/bin/nvcc").exists:
        rctx.symlink(path + "/include", "include")
        rctx.file("BUILD.bazel", _FOUND.format(path = path))
        rctx.file("defs.bzl", _DEFS.format(nvcc = path + "/bin/nvcc"))
    else:
        rctx.file("BUILD.bazel", _MISSING.format(path = path))
        rctx.file("defs.bzl", _DEFS.format(nvcc = ""))

cuda_toolkit = repository_rule(
    implementation = _cuda_toolkit_impl,
    attrs = {"path": attr.string(default = "/usr/local/cuda")},
    environ = ["CUDA_PATH"],
    local = True,
)
