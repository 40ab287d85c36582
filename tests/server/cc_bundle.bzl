"""cc_bundle: what a compiler outside Bazel needs to build against Bazel-built C++ libraries.

Bazel's toolchain here is gcc; libFuzzer needs clang. A cc_bundle puts in its runfiles the
headers of `header_deps` and the static archives of `link_deps` (with their transitive deps),
and writes `<name>.args`: one link argument per line (archive paths relative to the runfiles
root, alwayslink archives wrapped in --whole-archive, then the libraries' link flags) and
`<name>.copts` (the -D defines the headers need), so a
test script can compile its own sources with clang and link them against the gcc-built code.
"""

def _archive(lib):
    for f in [lib.pic_static_library, lib.static_library, lib.dynamic_library]:
        if f != None:
            return f
    return None

def _cc_bundle_impl(ctx):
    headers = depset(transitive = [
        d[CcInfo].compilation_context.headers
        for d in ctx.attr.header_deps + ctx.attr.link_deps
    ])
    archives = []
    args = []
    flags = []
    seen = {}
    for d in ctx.attr.link_deps:
        for li in d[CcInfo].linking_context.linker_inputs.to_list():
            for lib in li.libraries:
                f = _archive(lib)
                if f == None or f.short_path in seen:
                    continue
                seen[f.short_path] = True
                archives.append(f)
                if lib.alwayslink:
                    args.extend(["-Wl,--whole-archive", f.short_path, "-Wl,--no-whole-archive"])
                else:
                    args.append(f.short_path)
            for flag in li.user_link_flags:
                if flag not in flags:
                    flags.append(flag)
    out = ctx.actions.declare_file(ctx.label.name + ".args")
    ctx.actions.write(out, "\n".join(["-Wl,--start-group"] + args + ["-Wl,--end-group"] + flags) + "\n")
    defines = depset(transitive = [
        d[CcInfo].compilation_context.defines
        for d in ctx.attr.header_deps + ctx.attr.link_deps
    ])
    copts = ctx.actions.declare_file(ctx.label.name + ".copts")
    ctx.actions.write(copts, "".join(["-D%s\n" % x for x in defines.to_list()]))
    files = depset([out, copts] + archives, transitive = [headers])
    return [DefaultInfo(files = files, runfiles = ctx.runfiles(transitive_files = files))]

cc_bundle = rule(
    implementation = _cc_bundle_impl,
    attrs = {
        "header_deps": attr.label_list(providers = [CcInfo]),
        "link_deps": attr.label_list(providers = [CcInfo]),
    },
)
