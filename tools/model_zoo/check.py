#!/opt/inferd/venv/bin/python
"""Checks every model of the zoo in inferd against ONNX Runtime: does it load, do its outputs
match, how fast is it at 1 and 2 threads, how much memory does each engine take.

Usage: tools/model_zoo/check.py [--zoo DIR] [--inferctl PATH] [--only A,B] [--skip A,B]
                                [--threads "1 2"] [--rounds 3] [--budget-s 1.0]
                                [--json FILE] [--markdown FILE]

Models come from ~/.cache/inferd/zoo (tools/model_zoo/make_zoo.py makes them). For each:
  1. one run in each engine with its outputs written (inferd: `inferctl run --output-dir`;
     ORT: tools/ort_compare/ort_bench.py, onnxruntime from the test venv), compared output by
     output within the model kind's tolerance (TOLERANCES below);
  2. `--rounds` rounds of timing; in each round, per thread count, inferd then ORT (ORT first in
     odd rounds), each in a fresh process doing W warm-up and N timed runs, N chosen so that one
     measurement takes about --budget-s (3 to 200 runs); the table shows the lowest round p50
     (the round least disturbed by other load; every round is in --json) and the peak resident
     memory (VmHWM) of each engine's processes.
A model that was not made, does not load or does not match is listed with the reason (every
reason inferd's loader gives). Runs under the test venv (numpy); needs //tools/inferctl:inferctl
built.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools", "ort_compare"))
import engines  # noqa: E402
import models as zoo_models  # noqa: E402

DEFAULT_ZOO = os.path.expanduser("~/.cache/inferd/zoo")

# kind -> (atol as a fraction of the output's largest magnitude (at least 1), rtol): an element
# matches when |inferd - ort| <= atol * max(1, max|ort|) + rtol * |ort|. Integer outputs must be
# equal (quantized models: within one step).
TOLERANCES = {"fp32": (1e-4, 1e-3), "fp16": (1e-2, 1e-2), "int8": (2e-2, 2e-2)}


def compare(ref, got, kind):
    """-> (matches, max abs error, max error relative to max|ref|, note)."""
    if got.shape != ref.shape:
        return False, None, None, "shape %s, ORT %s" % (list(got.shape), list(ref.shape))
    note = "" if got.dtype == ref.dtype else "dtype %s, ORT %s" % (got.dtype, ref.dtype)
    if ref.size == 0:
        return not note, 0.0, 0.0, note
    r, g = ref.astype(np.float64), got.astype(np.float64)
    if ref.dtype.kind in "biu":
        d = np.abs(g - r)
        ok = d.max() <= (1 if kind == "int8" else 0)
        return ok and not note, float(d.max()), float(d.max() / max(np.abs(r).max(), 1)), note
    nan_r, nan_g = np.isnan(r), np.isnan(g)
    if (nan_r != nan_g).any():
        return False, float("nan"), float("nan"), "NaN where ORT has none (or the reverse)"
    fin = ~nan_r
    r, g = r[fin], g[fin]
    if r.size == 0:
        return not note, 0.0, 0.0, note
    atol, rtol = TOLERANCES[kind]
    scale = max(1.0, float(np.abs(r).max()))
    d = np.abs(g - r)
    ok = bool((d <= atol * scale + rtol * np.abs(r)).all()) and not np.isinf(d).any()
    return ok and not note, float(d.max()), float(d.max() / max(float(np.abs(r).max()), 1e-30)), note


def compare_outputs(meta, ort_dir, inferd_dir):
    """-> (matches, max abs, max rel, note) over every output."""
    worst_abs, worst_rel, notes, ok = 0.0, 0.0, [], True
    for name in meta["outputs"]:
        ref_path, got_path = (engines.output_file(d, name) for d in (ort_dir, inferd_dir))
        if not os.path.exists(got_path):
            return False, None, None, "inferd wrote no output '%s'" % name
        m, a, r, note = compare(np.load(ref_path), np.load(got_path), meta["kind"])
        ok &= m
        if a is None:
            return False, None, None, "output '%s': %s" % (name, note)
        worst_abs, worst_rel = max(worst_abs, a), max(worst_rel, r)
        if note:
            notes.append("output '%s': %s" % (name, note))
    return ok, worst_abs, worst_rel, "; ".join(notes)


def strip_load_prefix(error):
    """"inferctl run: cannot load 'PATH': MESSAGE" -> MESSAGE (the refusal itself), with a chain
    of "subgraph 'B' of node 'N': " prefixes (a node inside If/Loop bodies) shortened to
    "in subgraphs of 'N1' > 'N2': "."""
    msg = re.sub(r"^inferctl run: (cannot load '[^']*': )?", "", error)
    chain = re.match(r"^((?:subgraph '[^']*' of node '[^']*': )+)(.*)$", msg)
    if chain:
        nodes = re.findall(r"of node '([^']*)'", chain.group(1))
        msg = "in subgraphs of %s: %s" % (" > ".join("'%s'" % n for n in nodes), chain.group(2))
    return msg


def check_model(m, args, work):
    meta_path = os.path.join(args.zoo, m.name, "meta.json")
    row = {"model": m.name, "source": zoo_models.source_text(m), "kind": m.kind, "what": m.what}
    if not os.path.exists(meta_path):
        row.update(status="not made", error="no %s: run make_zoo.py" % meta_path)
        return row
    with open(meta_path) as f:
        meta = json.load(f)
    row["opset"] = meta.get("opset")
    if meta["status"] != "ok":
        row.update(status="not made", error=meta.get("error", "?"))
        return row
    model = os.path.join(args.zoo, m.name, "model.onnx")
    feeds = [(i["name"], os.path.join(args.zoo, m.name, i["file"])) for i in meta["inputs"]]
    out = os.path.join(work, m.name)
    shutil.rmtree(out, ignore_errors=True)

    # 1. outputs
    ort = engines.run_ort(model, feeds, runs=3, warmup=1, output_dir=os.path.join(out, "ort"))
    inferd = engines.run_inferd(args.inferctl, model, feeds, runs=1, warmup=1,
                                output_dir=os.path.join(out, "inferd"))
    if not ort.ok:
        row.update(status="ORT failed", error=ort.error)
        return row
    if inferd.ok:
        row["loads"] = True
        ok, a, r, note = compare_outputs(meta, os.path.join(out, "ort"),
                                         os.path.join(out, "inferd"))
        row.update(matches=ok, max_abs=a, max_rel=r, status="ok" if ok else "wrong results")
        if note:
            row["error"] = note
    else:
        refused = "cannot load" in inferd.error or inferd.error.startswith("timed out")
        row.update(loads=not refused, matches=False,
                   status="refused" if refused else "run failed",
                   error=strip_load_prefix(inferd.error), reasons=inferd.reasons)

    # 2. timing, engines alternated round by round
    runs = max(3, min(200, int(args.budget_s / max(ort.p50_ms, 1e-3) * 1e3)))
    warmup = max(1, min(10, runs // 10))
    row.update(runs=runs, warmup=warmup, rounds={})
    engines_to_time = ["inferd", "ort"] if row.get("loads") and row["status"] != "run failed" \
        else ["ort"]
    rounds = {e: {t: [] for t in args.threads} for e in engines_to_time}
    rss = {e: 0.0 for e in engines_to_time}
    for k in range(args.rounds if "inferd" in engines_to_time else 1):
        for t in args.threads:
            order = engines_to_time if k % 2 == 0 else engines_to_time[::-1]
            for e in order:
                if e == "inferd":
                    res = engines.run_inferd(args.inferctl, model, feeds, threads=t, runs=runs,
                                             warmup=warmup)
                else:
                    res = engines.run_ort(model, feeds, threads=t, runs=runs, warmup=warmup)
                if not res.ok:
                    row.setdefault("timing_errors", []).append("%s, %d threads: %s" % (
                        e, t, res.error))
                    continue
                rounds[e][t].append(res.p50_ms)
                rss[e] = max(rss[e], res.peak_rss_mib)
    for e in engines_to_time:
        row["rounds"][e] = {str(t): v for t, v in rounds[e].items()}
        row[e + "_ms"] = {str(t): min(v) for t, v in rounds[e].items() if v}
        row[e + "_rss_mib"] = rss[e] or None
    if "inferd_ms" in row:
        row["ratio"] = {t: row["inferd_ms"][t] / row["ort_ms"][t] for t in row["inferd_ms"]
                        if t in row.get("ort_ms", {})}
    return row


# --- the table ---------------------------------------------------------------------------------


def fmt_ms(v):
    return "-" if v is None else ("%.2f" % v if v < 10 else "%.1f" % v)


def cell_match(r):
    if r["status"] in ("not made", "ORT failed"):
        return "-"
    if not r.get("loads") or r["status"] == "run failed":
        return "-"
    return "%s (%.1e / %.1e)" % ("yes" if r["matches"] else "**NO**", r["max_abs"] or 0,
                                 r["max_rel"] or 0) if r.get("max_abs") is not None else "**NO**"


def markdown(rows, threads):
    head = ["model", "source", "opset", "loads", "matches (max abs / rel)"]
    for t in threads:
        head += ["%dT inferd ms" % t, "%dT ORT ms" % t, "%dT ratio" % t]
    head += ["peak RSS MiB inferd / ORT", "inferd's message"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        loads = {"not made": "not made", "ORT failed": "ORT failed"}.get(
            r["status"], "yes" if r.get("loads") else "**no**")
        if r["status"] == "run failed":
            loads = "yes, run fails"
        cells = [r["model"], r["source"], str(r.get("opset", "-")), loads, cell_match(r)]
        for t in threads:
            i = r.get("inferd_ms", {}).get(str(t))
            o = r.get("ort_ms", {}).get(str(t))
            ratio = r.get("ratio", {}).get(str(t))
            cells += [fmt_ms(i), fmt_ms(o), "-" if ratio is None else "%.2f" % ratio]
        ri, ro = r.get("inferd_rss_mib"), r.get("ort_rss_mib")
        cells.append("%s / %s" % ("-" if ri is None else "%.0f" % ri,
                                  "-" if ro is None else "%.0f" % ro))
        message = r.get("error") or ""
        if r.get("reasons"):
            message = "%s: %s" % (message.rstrip(":"), "; ".join(
                short_reason(x) for x in r["reasons"]))
        cells.append(message.replace("|", "\\|")[:400])
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


CAUSES = [
    (r"operator (\S+) \(opset (\d+)\) is not supported by inferd \(([^)]*)\)",
     lambda m: "no kernel: %s (%s)" % (m.group(1), m.group(3))),
    (r"operator (\S+) \(opset \d+\) does not support element type (\S+) \(supported: ([^)]*)\)",
     lambda m: "no %s kernel: %s (has %s)" % (m.group(2), m.group(1), m.group(3))),
    (r"imports opset (\d+) of the default ONNX domain", lambda m: "opset %s refused by the "
     "loader (supports 1 to 17)" % m.group(1)),
    (r"imports opset (\d+) of domain '([^']*)'", lambda m: "domain %s opset %s refused" % (
        m.group(2), m.group(1))),
    (r"IR version (\d+)", lambda m: "IR version %s refused" % m.group(1)),
]


def short_reason(reason):
    for pattern, name in CAUSES:
        m = re.search(pattern, reason)
        if m:
            return name(m)
    return reason


def cause_of(r):
    """A short, node-independent name for why a model failed (rows are grouped by it)."""
    if r["status"] == "not made":
        return "not made: " + r["error"][:120]
    if r["status"] == "ORT failed":
        return "ORT failed: " + re.sub(r"^ort_bench.py: (cannot load '[^']*': )?", "",
                                       r["error"])[:140]
    if r["status"] == "wrong results":
        return "loads, outputs differ from ORT beyond the %s tolerance" % r["kind"]
    msg = r.get("error", "")
    for pattern, name in CAUSES:
        m = re.search(pattern, msg)
        if m:
            return name(m)
    generic = re.sub(r"'[^']*'", "'*'", msg)
    generic = re.sub(r"\[[0-9,]*\]", "[..]", generic)
    return ("run fails: " if r["status"] == "run failed" else "refused: ") + generic[:160]


def failure_groups(rows):
    """cause -> models; a model whose refusal lists several reasons counts under each."""
    groups = {}
    for r in rows:
        if r["status"] == "ok":
            continue
        causes = [cause_of(dict(r, error=reason)) for reason in r.get("reasons", [])]
        for cause in sorted(set(causes or [cause_of(r)])):
            groups.setdefault(cause, []).append(r["model"])
    lines = []
    for cause, names in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        lines.append("- **%s** (%d): %s" % (cause, len(names), ", ".join(names)))
    return "\n".join(lines)


def summary(rows, threads):
    n = len(rows)
    made = [r for r in rows if r["status"] != "not made"]
    loads = [r for r in made if r.get("loads") and r["status"] != "run failed"]
    ok = [r for r in rows if r["status"] == "ok"]
    text = ["%d models: %d made, %d load and run in inferd, %d match ONNX Runtime (%.0f%%)." % (
        n, len(made), len(loads), len(ok), 100.0 * len(ok) / max(1, n))]
    for t in threads:
        ratios = [r["ratio"][str(t)] for r in ok if str(t) in r.get("ratio", {})]
        big = [r["ratio"][str(t)] for r in ok if str(t) in r.get("ratio", {})
               and r["ort_ms"][str(t)] > 1.0]
        if ratios:
            text.append("%d thread(s): median inferd/ORT %.2f over the %d matching models "
                        "(%.2f over the %d where ORT takes > 1 ms); %d of them at most 0.9." % (
                            t, statistics.median(ratios), len(ratios),
                            statistics.median(big) if big else float("nan"), len(big),
                            sum(1 for x in big if x <= 0.9)))
    mem = [r["inferd_rss_mib"] / r["ort_rss_mib"] for r in ok
           if r.get("inferd_rss_mib") and r.get("ort_rss_mib")]
    if mem:
        text.append("peak RSS inferd/ORT: median %.2f over the matching models (ORT's figure "
                    "includes the Python harness, see below)." % statistics.median(mem))
    return " ".join(text)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--zoo", default=DEFAULT_ZOO)
    p.add_argument("--inferctl", default=os.path.join(ROOT, "bazel-bin/tools/inferctl/inferctl"))
    p.add_argument("--only", default="")
    p.add_argument("--skip", default="")
    p.add_argument("--threads", default="1 2")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--budget-s", type=float, default=1.0,
                   help="about how long one timed measurement (N runs) takes")
    p.add_argument("--json", help="also write every figure as JSON here")
    p.add_argument("--markdown", help="also write the report here")
    args = p.parse_args()
    args.threads = [int(t) for t in args.threads.split()]
    only = [n for n in args.only.split(",") if n]
    skip = set(n for n in args.skip.split(",") if n)
    for n in only + list(skip):
        if n not in zoo_models.BY_NAME:
            sys.exit("check.py: no model '%s' in models.py" % n)
    if not os.access(args.inferctl, os.X_OK):
        sys.exit("check.py: %s not built: bazel build //tools/inferctl:inferctl" % args.inferctl)
    work = tempfile.mkdtemp(prefix="inferd-zoo-check.")
    inferctl = os.path.join(work, "inferctl")  # a copy: a later bazel build cannot swap it
    shutil.copy2(args.inferctl, inferctl)
    args.inferctl = inferctl

    todo = [m for m in zoo_models.MODELS if (not only or m.name in only) and m.name not in skip]
    load_before, t0 = os.getloadavg()[0], time.time()
    rows = []
    for k, m in enumerate(todo):
        t1 = time.time()
        r = check_model(m, args, work)
        rows.append(r)
        print("check.py: [%d/%d] %-26s %-14s %5.0f s  %s" % (
            k + 1, len(todo), m.name, r["status"], time.time() - t1,
            (r.get("error") or "")[:110]), file=sys.stderr, flush=True)
    load_after = os.getloadavg()[0]
    baseline = engines.ort_baseline_rss_mib()
    report = [
        markdown(rows, args.threads), "",
        summary(rows, args.threads), "",
        "Failures by cause (inferd's refusal; a model listed under each reason it gives):", "",
        failure_groups(rows) or "(none)", "",
        "ONNX Runtime %s (%s), intra-op threads as the column says, inter-op 1, sequential, "
        "optimizations 'all'. ms: the lowest of %d rounds' p50s (engines alternated); "
        "runs per measurement chosen for about %.1f s. Peak RSS: VmHWM of each engine's "
        "processes; the ORT harness alone (Python, numpy, onnxruntime imported, no model) "
        "peaks at %.0f MiB. %d CPUs, load average %.2f before, %.2f after; %.0f s in all." % (
            engines.ort_version(), engines.ORT_PYTHON, args.rounds, args.budget_s, baseline,
            os.cpu_count(), load_before, load_after, time.time() - t0)]
    text = "\n".join(report)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "ort_baseline_rss_mib": baseline,
                       "threads": args.threads, "rounds": args.rounds,
                       "load_average": [load_before, load_after]}, f, indent=1)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
