#!/usr/bin/env python3
# ===- check-trace.py - Is a file a well-formed Chrome trace? -------------===#
#
# Test helper (standard library only): loads a trace-event JSON file and
# checks what chrome://tracing and Perfetto need: a "traceEvents" list whose
# complete events ("ph": "X") have a name, a category, numeric ts and dur
# >= 0 and integer pid / tid, and whose every (pid, tid) is named by a
# "thread_name" metadata event. Prints a summary; exits 1 on a violation.
#
# Usage: check-trace.py FILE
#
# ===----------------------------------------------------------------------===#
import json
import sys


def main():
    path = sys.argv[1]
    with open(path) as f:
        trace = json.load(f)
    events = trace.get("traceEvents")
    if not isinstance(events, list) or not events:
        sys.exit(f"{path}: no traceEvents list")
    named, complete, cats, end = set(), [], {}, 0.0
    for i, e in enumerate(events):
        for key, kind in (("ph", str), ("name", str), ("pid", int), ("tid", int)):
            if not isinstance(e.get(key), kind):
                sys.exit(f"{path}: traceEvents[{i}]: '{key}' missing or not {kind.__name__}")
        if e["ph"] == "M":
            if e["name"] == "thread_name":
                named.add((e["pid"], e["tid"]))
            continue
        if e["ph"] != "X":
            sys.exit(f"{path}: traceEvents[{i}]: unexpected ph {e['ph']!r}")
        for key in ("ts", "dur"):
            if not isinstance(e.get(key), (int, float)) or e[key] < 0:
                sys.exit(f"{path}: traceEvents[{i}]: '{key}' must be a number >= 0")
        if not isinstance(e.get("cat"), str):
            sys.exit(f"{path}: traceEvents[{i}]: 'cat' missing")
        complete.append(e)
        cats[e["cat"]] = cats.get(e["cat"], 0) + 1
        end = max(end, e["ts"] + e["dur"])
    for e in complete:
        if (e["pid"], e["tid"]) not in named:
            sys.exit(f"{path}: event {e['name']!r} is on an unnamed track")
    print(f"{path}: {len(complete)} events on {len(named)} tracks, "
          f"ends at {end / 1e3:.3f} ms")
    for cat in sorted(cats):
        print(f"  {cat}: {cats[cat]}")


if __name__ == "__main__":
    main()
