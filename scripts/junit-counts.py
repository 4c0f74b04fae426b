#!/usr/bin/env python3
"""Counts the test cases in JUnit XML files: prints "PASSED FAILED SKIPPED".

Usage: junit-counts.py DIR   (every *.xml under DIR, recursively)

Every runner here writes the common JUnit shape: <testcase> elements, each
holding a <failure>, <error> or <skipped> child when it did not pass (pytest,
Surefire, node --test's junit reporter, gotestsum, the details minitest
plugin). A file that is not XML is an error naming the file and the parser's
line and column, so a truncated report cannot pass as zero tests.
"""

import pathlib
import sys
import xml.etree.ElementTree as ET


def counts(path):
    passed = failed = skipped = 0
    for case in ET.parse(path).getroot().iter("testcase"):
        tags = {child.tag for child in case}
        if tags & {"failure", "error"}:
            failed += 1
        elif "skipped" in tags:
            skipped += 1
        else:
            passed += 1
    return passed, failed, skipped


def main(argv):
    if len(argv) != 2:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    total = [0, 0, 0]
    for path in sorted(pathlib.Path(argv[1]).rglob("*.xml")):
        try:
            c = counts(path)
        except ET.ParseError as err:
            line, col = err.position
            print(f"{path}:{line}:{col}: not JUnit XML: {err}", file=sys.stderr)
            return 1
        total = [t + n for t, n in zip(total, c, strict=True)]
    print(*total)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
