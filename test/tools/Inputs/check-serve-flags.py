#!/usr/bin/env python3
"""Check that every option `trident serve` writes is one the engine accepts.

Usage: check-serve-flags.py vllm|sglang|trtllm DATA_DIR SERVE_JSON...

DATA_DIR holds the lists scripts/distill-serve-flags.sh distilled from the
engines' sources (test/data/serve-flags/<engine>.txt: `#` header lines, then
one long option a line). Each SERVE_JSON is `trident serve --json` output;
every plan's `launch` and `launch_prefill` argv arrays are read. What is
checked:

  * the command is the engine's (`vllm serve`, `python3 -m
    sglang.launch_server`, `trtllm-serve`);
  * every `--x` token (`--x=v` as `--x`) is an option of the list;
  * where the list's header gives `# values --x: [...]` (the values the
    source enumerates for a choice-typed option), the token after `--x`
    (or the `=v` part) is one of them.

Prints, on success, `ENGINE: N flags in M launch commands, all in
ENGINE.txt (SOURCES)`, then `ENGINE: flags: ...` (the flags seen, sorted),
`ENGINE: values checked: --x=v ...` and, when some flag the list registers
as deprecated is written, `ENGINE: deprecated in ENGINE.txt: ...`; exits 0.
Otherwise names each flag or value missing from the list on stderr and
exits 1 (2: bad input). Standard library only.
"""
import json
import os
import re
import sys

LONG = re.compile(r"--[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
HEADS = {
    "vllm": ["vllm", "serve"],
    "sglang": ["python3", "-m", "sglang.launch_server"],
    "trtllm": ["trtllm-serve"],
}


def fail(msg, code=2):
    sys.stderr.write("check-serve-flags: " + msg + "\n")
    sys.exit(code)


def load_list(data_dir, engine):
    path = os.path.join(data_dir, engine + ".txt")
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        fail("cannot read %s: %s" % (path, e))
    options, values, deprecated, sources = set(), {}, set(), []
    commit = None
    for line in lines:
        if line.startswith("#"):
            m = re.match(r"#\s*commit:\s*([0-9a-f]{12,40})", line)
            if m:
                commit = m.group(1)[:12]
            m = re.match(r"#\s*source:\s*(\S+)\s+@\s+([0-9a-f]{40})", line)
            if m:
                sources.append("%s@%s" % (os.path.basename(m.group(1)),
                                          m.group(2)[:12]))
            m = re.match(r"#\s*values\s+(--\S+):\s*(\[.*\])\s*\Z", line)
            if m:
                try:
                    values[m.group(1)] = json.loads(m.group(2))
                except ValueError:
                    fail("%s: bad values line: %s" % (path, line))
            m = re.match(r"#\s*registered as deprecated \(still accepted\):"
                         r"\s*(.*)", line)
            if m:
                deprecated |= set(m.group(1).split())
        elif line.strip():
            options.add(line.strip())
    if not options:
        fail("%s lists nothing" % path)
    where = ", ".join(sources) if sources else (commit or "unknown commit")
    return options, values, deprecated, where


def launches(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        fail("cannot read %s: %s" % (path, e))
    plans = doc.get("plans") if isinstance(doc, dict) else None
    if not plans:
        fail("%s: no plans" % path)
    out = []
    for i, plan in enumerate(plans):
        for key in ("launch", "launch_prefill"):
            argv = plan.get(key)
            if argv is None:
                continue
            if not isinstance(argv, list) or \
                    not all(isinstance(t, str) for t in argv):
                fail("%s: plans[%d].%s is not a list of strings" % (
                    path, i, key))
            out.append(("%s: plans[%d].%s" % (path, i, key), argv))
    return out


def main(argv):
    if len(argv) < 4 or argv[1] not in HEADS:
        fail("usage: check-serve-flags.py vllm|sglang|trtllm DATA_DIR "
             "SERVE_JSON...")
    engine, data_dir, files = argv[1], argv[2], argv[3:]
    options, values, deprecated, where = load_list(data_dir, engine)
    cmds = [c for f in files for c in launches(f)]
    if not cmds:
        fail("no launch command in %s" % " ".join(files), 1)
    problems, seen, checked = [], set(), set()
    head = HEADS[engine]
    for where_cmd, cmd in cmds:
        if cmd[:len(head)] != head:
            problems.append("%s: not a %s command: %s" % (
                where_cmd, " ".join(head), " ".join(cmd[:3])))
            continue
        for i, tok in enumerate(cmd):
            if not tok.startswith("--"):
                continue
            name, eq, val = tok.partition("=")
            if not LONG.match(name):
                problems.append("%s: %r is not a long option" % (
                    where_cmd, tok))
                continue
            seen.add(name)
            if name not in options:
                problems.append("%s is not in %s.txt (%s)" % (
                    name, engine, where))
                continue
            if name in values:
                if not eq:
                    val = cmd[i + 1] if i + 1 < len(cmd) else None
                if val is None or val.startswith("--"):
                    problems.append("%s: %s has no value" % (where_cmd, name))
                elif val not in values[name]:
                    problems.append("%s %s: the value is not one %s.txt "
                                    "lists for %s (%s): %s" % (
                                        name, val, engine, name, where,
                                        " ".join(values[name])))
                else:
                    checked.add("%s=%s" % (name, val))
    if problems:
        for p in sorted(set(problems)):
            sys.stderr.write(p + "\n")
        sys.stderr.write("%s: %d problem(s) in %d launch commands\n" % (
            engine, len(set(problems)), len(cmds)))
        return 1
    print("%s: %d flags in %d launch commands, all in %s.txt (%s)" % (
        engine, len(seen), len(cmds), engine, where))
    print("%s: flags: %s" % (engine, " ".join(sorted(seen))))
    print("%s: values checked: %s" % (engine,
                                      " ".join(sorted(checked)) or "none"))
    dep = sorted(seen & deprecated)
    if dep:
        print("%s: deprecated in %s.txt: %s" % (engine, engine, " ".join(dep)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
