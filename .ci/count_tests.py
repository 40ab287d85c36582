#!/usr/bin/python3
"""Counts test cases from Bazel's test.xml files (gtest / JUnit format).

Usage: count_tests.py [--failed-step NAME ...] TESTLOGS_DIR [TESTLOGS_DIR ...]
Prints "N skipped" (cases that skipped themselves: GPU tests without a device) and then
"N passed, N failed" for the test cases found, and lists the failures. A test target whose
log shows it ran but whose XML has no test case (a crash before gtest wrote its report) counts as
one failed case, and so does every --failed-step that left no failed case behind (a build
error, say), so the count never reads as a pass when a step failed.
"""
import os
import sys
import xml.etree.ElementTree as ET


def count(dirs):
    passed, failed, skipped, failures = 0, 0, 0, []
    for root_dir in dirs:
        for root, _, files in os.walk(root_dir):
            if "test.xml" not in files:
                continue
            target = os.path.join(os.path.basename(os.path.normpath(root_dir)),
                                  os.path.relpath(root, root_dir))
            try:
                tree = ET.parse(os.path.join(root, "test.xml"))
            except ET.ParseError:
                failed += 1
                failures.append(f"{target}: unreadable test.xml")
                continue
            cases = list(tree.iter("testcase"))
            if not cases:
                failed += 1
                failures.append(f"{target}: no test cases reported")
                continue
            for case in cases:
                if case.get("status") == "notrun" or case.find("skipped") is not None or \
                        case.get("result") == "skipped":
                    skipped += 1
                    continue
                if case.find("failure") is not None or case.find("error") is not None:
                    failed += 1
                    failures.append(f"{target}: {case.get('classname')}.{case.get('name')}")
                else:
                    passed += 1
    return passed, failed, skipped, failures


def main():
    args, dirs, failed_steps = sys.argv[1:], [], []
    while args:
        a = args.pop(0)
        if a == "--failed-step":
            failed_steps.append(args.pop(0))
        else:
            dirs.append(a)
    passed, failed, skipped, failures = count(dirs)
    for step in failed_steps:
        if not any(f.startswith(step + "/") for f in failures):
            failed += 1
            failures.append(f"{step}/: the step failed (see its output above)")
    for f in failures:
        print(f"FAILED {f}")
    print(f"{skipped} skipped")
    print(f"{passed} passed, {failed} failed")


if __name__ == "__main__":
    main()
