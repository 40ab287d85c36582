"""ort_case_test: kernels checked against ONNX Runtime on generated models (see ort_case.py)."""

def ort_case_test(name, generator, suite, size = "small", **kwargs):
    """A test that runs `generator` (a gen.py using ort_case.CaseWriter for `suite`) and then
    the conformance runner over what it wrote, requiring every case to pass."""
    native.sh_test(
        name = name,
        size = size,
        srcs = ["//tests/ort_cases:run_cases.sh"],
        args = [
            "$(rootpath //tests/conformance:runner)",
            "$(rootpath //tests/ort_cases:ort_case.py)",
            "$(rootpath %s)" % generator,
            suite,
        ],
        data = [
            generator,
            "//tests/conformance:runner",
            "//tests/ort_cases:ort_case.py",
        ],
        **kwargs
    )
