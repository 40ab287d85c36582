#!/usr/bin/python3
"""Checks that the Grafana dashboard and the Prometheus rules read metrics inferd exports.

  dashboard_metrics.py static METRICS_CC DASHBOARD_JSON ALERTS_YML
      The dashboard is valid Grafana JSON (unique panel ids, a layout, a query per panel, the
      template variables it uses); every inferd_* name in its queries and in the rules is a
      series server/metrics.cc exports (histograms as _bucket / _sum / _count); the inferd:*
      recording rules it reads are defined; the panels the operators need are there.

  dashboard_metrics.py live PROMETHEUS_URL DASHBOARD_JSON ALERTS_YML MODEL
      Against a real Prometheus that scrapes a real inferd (tests/deploy/prometheus_e2e_test.sh):
      every metric name used exists in its TSDB, and every dashboard query and alert expression
      (template variables filled in with MODEL) evaluates without error through /api/v1/query;
      every dashboard query returns data, except the few that need events a short test does not
      produce (errors, evictions with no cap hit, ...), which are listed.

Python standard library only (Debian's /usr/bin/python3): JSON is parsed with `json`, and the
rules file is scanned as text (its expressions are found by `expr:` keys).
"""
import json
import re
import sys
import urllib.parse
import urllib.request

NAME = re.compile(r"\binferd_[a-z0-9_]+\b")
RECORDED = re.compile(r"\binferd:[a-z0-9_:]+\b")


def exported_series(metrics_cc):
    """Series names server/metrics.cc exports: families, and _bucket/_sum/_count of histograms."""
    text = open(metrics_cc).read()
    families = {}
    for m in re.finditer(r'"(inferd_[a-z0-9_]+)",.*?MetricType::(\w+)', text, re.S):
        families[m.group(1)] = m.group(2)
    series = set()
    for name, kind in families.items():
        if kind == "Histogram":
            series.update(name + s for s in ("_bucket", "_sum", "_count"))
        else:
            series.add(name)
    return families, series


def panels_of(dashboard):
    """Every panel, rows' nested panels included."""
    for p in dashboard.get("panels", []):
        yield p
        for q in p.get("panels", []):
            yield q


def dashboard_exprs(dashboard):
    exprs = []
    for p in panels_of(dashboard):
        for t in p.get("targets", []):
            exprs.append((p.get("title", "?"), t.get("expr", "")))
    return exprs


def variable_queries(dashboard):
    out = []
    for v in dashboard.get("templating", {}).get("list", []):
        q = v.get("query")
        if isinstance(q, dict):
            q = q.get("query")
        if v.get("type") == "query" and q:
            out.append((v["name"], q))
    return out


def rule_exprs(alerts_text):
    """(name, expr) of each rule: the text after `expr:`, a one-liner or a `|` block."""
    rules, lines = [], alerts_text.split("\n")
    name = None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"\s*- (?:alert|record): (\S+)", line)
        if m:
            name = m.group(1)
        m = re.match(r"(\s*)expr: ?(.*)$", line)
        if m:
            indent, rest = len(m.group(1)), m.group(2).strip()
            if rest in ("|", ">", "|-", ">-"):
                body = []
                i += 1
                while i < len(lines) and (not lines[i].strip() or
                                          len(lines[i]) - len(lines[i].lstrip()) > indent):
                    body.append(lines[i].strip())
                    i += 1
                rules.append((name, " ".join(b for b in body if b)))
                continue
            rules.append((name, rest))
        i += 1
    return rules


def fill_variables(expr, model):
    return (expr.replace("$__rate_interval", "1m").replace("$__range", "5m")
            .replace("$__interval", "15s").replace('"$job"', '"inferd.*"')
            .replace('"$instance"', '".*"').replace("$model", model))


failures = []


def check(cond, message):
    if cond:
        print("ok:", message)
    else:
        print("FAIL:", message)
        failures.append(message)


def static(metrics_cc, dashboard_path, alerts_path):
    families, series = exported_series(metrics_cc)
    check(len(families) >= 20, f"{len(families)} metric families found in {metrics_cc}")
    dashboard = json.load(open(dashboard_path))
    alerts_text = open(alerts_path).read()

    # Grafana structure.
    panels = list(panels_of(dashboard))
    ids = [p.get("id") for p in panels]
    check(len(ids) == len(set(ids)) and None not in ids, f"{len(panels)} panels, unique ids")
    for p in panels:
        grid = p.get("gridPos", {})
        if not all(k in grid for k in ("x", "y", "w", "h")) or grid["x"] + grid["w"] > 24:
            check(False, f"panel '{p.get('title')}' has a gridPos within 24 columns")
        if p.get("type") != "row" and not p.get("targets"):
            check(False, f"panel '{p.get('title')}' has queries")
        for t in p.get("targets", []):
            if t.get("datasource", {}).get("uid") != "${datasource}":
                check(False, f"panel '{p.get('title')}' queries the ${{datasource}} variable")
    variables = {v["name"] for v in dashboard["templating"]["list"]}
    check({"datasource", "job", "instance", "model"} <= variables,
          f"template variables {sorted(variables)}")
    for p in panels:
        if "repeat" in p:
            check(p["repeat"] in variables, f"row '{p['title']}' repeats over ${p['repeat']}")
    used_vars = set(re.findall(r"\$(\w+)", json.dumps([e for _, e in dashboard_exprs(dashboard)])))
    check(used_vars - {"__rate_interval", "__range", "__interval"} <= variables,
          f"queries use only defined variables ({sorted(used_vars)})")

    # Metric names.
    exprs = dashboard_exprs(dashboard) + variable_queries(dashboard)
    used = set()
    for _, e in exprs:
        used.update(NAME.findall(e))
    unknown = sorted(used - series)
    check(not unknown, f"dashboard: {len(used)} inferd_* series, all exported by metrics.cc"
          + (f"; unknown: {unknown}" if unknown else ""))
    rules = rule_exprs(alerts_text)
    check(len(rules) >= 10, f"alerts.yml: {len(rules)} rule expressions")
    rule_names = set()
    for _, e in rules:
        rule_names.update(NAME.findall(e))
    unknown = sorted(rule_names - series)
    check(not unknown, f"alerts.yml: {len(rule_names)} inferd_* series, all exported"
          + (f"; unknown: {unknown}" if unknown else ""))
    recorded = set(re.findall(r"record: (\S+)", alerts_text))
    read = set()
    for _, e in exprs:
        read.update(RECORDED.findall(e))
    check(read <= recorded, f"dashboard reads recording rules {sorted(read)}, defined in alerts.yml")

    # What the dashboard must show per model (the list).
    required = {
        "inferd_arena_live_bytes", "inferd_arena_retained_bytes", "inferd_arena_peak_live_bytes",
        "inferd_arena_retention_cap_bytes", "inferd_arena_evictions_total",
        "inferd_arena_trims_total", "inferd_requests_total",
        "inferd_queue_duration_seconds_bucket", "inferd_compute_duration_seconds_bucket",
        "inferd_serialize_duration_seconds_bucket", "inferd_request_duration_seconds_bucket"}
    check(required <= used, "dashboard shows " + ", ".join(sorted(required)))
    for h in ("queue", "compute", "serialize"):
        ok = any(f"histogram_quantile(0.99, sum by (le) (rate(inferd_{h}_duration_seconds_bucket"
                 in e and 'model="$model"' in e for _, e in exprs)
        check(ok, f"per-model p99 of inferd_{h}_duration_seconds from its _bucket series")
    # Every alert the issue asks for.
    for alert in ("InferdArenaRetainedNearCap", "InferdModelUnavailable",
                  "InferdModelLoadRefusedForBudget", "InferdQueueFull",
                  "InferdLatencySLOBurnFast", "InferdLatencySLOBurnSlow"):
        check(f"alert: {alert}" in alerts_text, f"alerts.yml has {alert}")


def query(base, expr):
    url = base + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=10) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:  # 400: a bad expression, with Prometheus's reason
        return json.load(e)


# Dashboard queries that may be empty in the end-to-end test's setup.
MAY_BE_EMPTY = [
    "inferd_partition_budget_bytes",       # no partition budget: +Inf, filtered by < +Inf
]


def live(base, dashboard_path, alerts_path, model):
    dashboard = json.load(open(dashboard_path))
    alerts_text = open(alerts_path).read()
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(base + "/api/v1/label/__name__/values", timeout=10) as r:
        names = set(json.load(r)["data"])
    used = set()
    for _, e in dashboard_exprs(dashboard) + variable_queries(dashboard):
        used.update(NAME.findall(e))
    for _, e in rule_exprs(alerts_text):
        used.update(NAME.findall(e))
    missing = sorted(used - names)
    check(not missing, f"all {len(used)} inferd_* series the dashboard and rules use are in "
          "Prometheus's TSDB" + (f"; missing: {missing}" if missing else ""))

    empty, allowed = [], []
    for title, e in dashboard_exprs(dashboard):
        expr = fill_variables(e, model)
        r = query(base, expr)
        if r.get("status") != "success":
            check(False, f"dashboard '{title}': {expr}: {r.get('error')}")
            continue
        if not r["data"]["result"]:
            (allowed if any(s in e for s in MAY_BE_EMPTY) else empty).append(f"'{title}': {expr}")
    check(not empty, f"{len(dashboard_exprs(dashboard))} dashboard queries evaluate; "
          f"all return data but {len(allowed)} that need a partition budget"
          + ("" if not empty else "; empty:\n  " + "\n  ".join(empty)))
    for a in allowed:
        print("   (empty, as expected here:", a + ")")
    for name, q in variable_queries(dashboard):
        m = re.match(r"label_values\((.*), (\w+)\)$", q)
        r = query(base, fill_variables(m.group(1), model)) if m else {"status": "error"}
        labels = {s["metric"].get(m.group(2)) for s in r.get("data", {}).get("result", [])} if m else set()
        check(model in labels or name != "model",
              f"variable ${name}: label_values over {m.group(1) if m else q} -> {sorted(labels)}")
    bad = []
    for name, e in rule_exprs(alerts_text):
        r = query(base, e)
        if r.get("status") != "success":
            bad.append(f"{name}: {r.get('error')}")
    check(not bad, f"{len(rule_exprs(alerts_text))} rule expressions evaluate" +
          ("" if not bad else ": " + "; ".join(bad)))


def main(argv):
    if len(argv) == 5 and argv[1] == "static":
        static(*argv[2:])
    elif len(argv) == 6 and argv[1] == "live":
        live(*argv[2:])
    else:
        print(__doc__, file=sys.stderr)
        return 64
    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
