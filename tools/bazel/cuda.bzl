"""cuda_library: .cu files compiled by the toolkit's nvcc into a static library that cc_library,
cc_binary and cc_test targets take as a dep. Targets that need CUDA build only with --config=cuda.

Each .cu file is compiled on its own (whole-program mode, no device link step) for sm_80 and sm_90
and embeds compute_90 PTX, which newer GPUs JIT-compile. The .cu files may include the rule's
`hdrs`, the headers of `deps` (cc targets, by their workspace-relative paths) and the toolkit's
headers; keep what they include to plain C++ and CUDA (launcher declarations), so nvcc never
sees absl or the engine.

Example:
    cuda_library(
        name = "binary_cu",
        srcs = ["binary.cu"],
        hdrs = ["binary_launch.h"],
    )
    cc_library(
        name = "binary",
        srcs = ["binary.cc"],
        target_compatible_with = CUDA_ONLY,
        deps = [":binary_cu", "@cuda//:cudart"],
    )
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")
load("@cuda//:defs.bzl", "NVCC")

# The GPUs we build for: Ampere (A100, sm_80) and Hopper (H100/H200, sm_90) as machine code, and
# compute_90 PTX for anything newer.
CUDA_ARCH_FLAGS = [
    "-gencode=arch=compute_80,code=sm_80",
    "-gencode=arch=compute_90,code=sm_90",
    "-gencode=arch=compute_90,code=compute_90",
]

NVCC_FLAGS = [
    "-std=c++17",
    "-O3",
    "-ccbin=/usr/bin/g++",
    "-Xcompiler=-fPIC",
    "-Xcompiler=-Wall",
    "--expt-relaxed-constexpr",
]

# target_compatible_with for every target that needs CUDA: without --config=cuda it asks for a
# constraint no platform has, so `bazel build //...` and `bazel test //...` skip the target.
CUDA_ONLY = select({
    "//tools/bazel:cuda_enabled": [],
    "//conditions:default": ["//tools/bazel:built_with_config_cuda"],
})

def _cuda_library_impl(ctx):
    cc_toolchain = find_cpp_toolchain(ctx)
    feature_configuration = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    dep_infos = [d[CcInfo] for d in ctx.attr.deps]
    dep_headers = depset(transitive = [i.compilation_context.headers for i in dep_infos])

    # Where the .cu files find the headers of deps: the workspace root, external repositories'
    # roots, and generated files' roots.
    include_dirs = depset(
        [".", ctx.bin_dir.path, ctx.genfiles_dir.path],
        transitive = [i.compilation_context.quote_includes for i in dep_infos] +
                     [i.compilation_context.includes for i in dep_infos] +
                     [i.compilation_context.system_includes for i in dep_infos],
    )

    # pass 1: one object per .cu file.
    objects = []
    for src in ctx.files.srcs:
        obj = ctx.actions.declare_file("_objs/{}/{}.o".format(ctx.label.name, src.basename[:-len(".cu")]))
        args = ctx.actions.args()
        args.add_all(NVCC_FLAGS)
        args.add_all(CUDA_ARCH_FLAGS)
        args.add_all(include_dirs, format_each = "-I%s")
        args.add_all(ctx.attr.copts)
        args.add("-c", src)
        args.add("-o", obj)
        ctx.actions.run(
            executable = NVCC,
            arguments = [args],
            inputs = depset([src] + ctx.files.hdrs, transitive = [dep_headers]),
            outputs = [obj],
            mnemonic = "NvccCompile",
            progress_message = "nvcc {}".format(src.short_path),
            use_default_shell_env = True,
        )
        objects.append(obj)

    # pass 2: the objects in one static library, archived by the C++ toolchain's ar.
    library = ctx.actions.declare_file("lib{}.a".format(ctx.label.name))
    ar_args = ctx.actions.args()
    ar_args.add("rcsD", library)
    ar_args.add_all(objects)
    ctx.actions.run(
        executable = cc_toolchain.ar_executable,
        arguments = [ar_args],
        inputs = depset(objects, transitive = [cc_toolchain.all_files]),
        outputs = [library],
        mnemonic = "NvccArchive",
        progress_message = "ar {}".format(library.short_path),
    )

    # pass 3: a CcInfo a C++ target can depend on: the library and the headers, and the deps'.
    library_to_link = cc_common.create_library_to_link(
        actions = ctx.actions,
        feature_configuration = feature_configuration,
        cc_toolchain = cc_toolchain,
        static_library = library,
        alwayslink = ctx.attr.alwayslink,
    )
    linker_input = cc_common.create_linker_input(
        owner = ctx.label,
        libraries = depset([library_to_link]),
    )
    own = CcInfo(
        compilation_context = cc_common.create_compilation_context(
            headers = depset(ctx.files.hdrs),
        ),
        linking_context = cc_common.create_linking_context(
            linker_inputs = depset([linker_input]),
        ),
    )
    return [
        DefaultInfo(files = depset([library])),
        cc_common.merge_cc_infos(direct_cc_infos = [own], cc_infos = dep_infos),
    ]

_cuda_library = rule(
    implementation = _cuda_library_impl,
    attrs = {
        "srcs": attr.label_list(allow_files = [".cu"]),
        "hdrs": attr.label_list(allow_files = [".h", ".cuh"]),
        "deps": attr.label_list(providers = [CcInfo]),
        "copts": attr.string_list(),
        "alwayslink": attr.bool(default = False),
        "_cc_toolchain": attr.label(
            default = Label("@bazel_tools//tools/cpp:current_cc_toolchain"),
        ),
    },
    fragments = ["cpp"],
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
)

def cuda_library(name, srcs, hdrs = [], deps = [], copts = [], alwayslink = False, **kwargs):
    """A static library of .cu files compiled by nvcc; built only with --config=cuda.

    Args:
      name: the target.
      srcs: .cu files, one object each.
      hdrs: headers the .cu files include and that dependents include (launcher declarations).
      deps: cc targets whose headers the .cu files include; they are linked into dependents too.
        @cuda//:cudart is always added.
      copts: extra nvcc flags.
      alwayslink: link every object even when nothing refers to it.
      **kwargs: visibility, testonly, tags.
    """
    _cuda_library(
        name = name,
        srcs = srcs,
        hdrs = hdrs,
        deps = deps + ["@cuda//:cudart"],
        copts = copts,
        alwayslink = alwayslink,
        target_compatible_with = CUDA_ONLY,
        **kwargs
    )
