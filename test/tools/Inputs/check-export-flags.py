#!/usr/bin/env python3
"""Check that every option an export writes is one the framework accepts.

Usage: check-export-flags.py EXPORT_FILE megatron|megatron-bridge|deepspeed|torchtitan DATA_DIR

DATA_DIR holds the lists scripts/distill-export-flags.sh distilled from the
pinned framework sources (test/data/export-flags/<target>.txt: `#` header
lines, then one entry a line). What is checked:

  megatron    every `--x` token of the launch text (`--x=v` as `--x`):
              comment lines, `VAR=value` assignments and the launcher's own
              options (those before the `*.py` script on a command line) are
              skipped; lines continued with `\\` are one command
  megatron-bridge
              run_recipe.py's arguments (after the script on a launch
              line, or the bare list): each `--x` option, the values of
              --recipe and --dataset, and each KEY=VALUE override's key
              (`section.field`, or `mixed_precision`); a value must be of
              the field's annotation: true/false for bool, an integer for
              int, a number for float, one of a Literal's strings, null
              only where Optional/None is allowed, and for mixed_precision
              a registered recipe
  deepspeed   every key path of the JSON (`zero_optimization` and
              `zero_optimization.stage`; objects inside arrays keep the
              array's path)
  torchtitan  every `config.section.key = ...` assignment of the Python
              configuration module (parsed with ast, never run) as
              `section.key`; `config.section = ...` (a whole section, such
              as the activation-checkpointing policy) and the fields the
              list's header names as tyro-suppressed (`model_spec`) are
              accepted as such

Prints `FILE: N flags, all in TARGET.txt (COMMIT12)` and exits 0, or names
each entry missing from the list on stderr and exits 1 (2: bad input).
Standard library only.
"""
import json
import os
import re
import shlex
import sys

import ast

LONG = re.compile(r"--[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
SEPARATORS = {";", "&&", "||", "|", "&"}


def fail(msg, code=2):
    sys.stderr.write("check-export-flags: " + msg + "\n")
    sys.exit(code)


def commands(text):
    """The shell commands of a launch text: [[token, ...], ...]."""
    lines, cur = [], ""
    for raw in text.splitlines():
        if not cur and raw.lstrip().startswith("#"):
            continue
        if raw.rstrip().endswith("\\"):
            cur += raw.rstrip()[:-1] + " "
            continue
        lines.append(cur + raw)
        cur = ""
    if cur:
        lines.append(cur)
    out = []
    for line in lines:
        lex = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        lex.whitespace_split = True
        lex.commenters = "#"
        try:
            toks = list(lex)
        except ValueError as e:
            fail("cannot split %r: %s" % (line.strip()[:80], e))
        cmd = []
        for t in toks:
            if t in SEPARATORS:
                if cmd:
                    out.append(cmd)
                cmd = []
            else:
                cmd.append(t)
        if cmd:
            out.append(cmd)
    return out


def megatron_flags(text):
    flags = []
    for cmd in commands(text):
        i = 0
        while i < len(cmd) and (ASSIGN.match(cmd[i]) or
                                cmd[i] in ("export", "env")):
            i += 1
        args = cmd[i:]
        if args and not args[0].startswith("--"):
            # a launcher (torchrun, python, deepspeed ...): only what
            # follows the training script is Megatron-LM's
            script = next((j for j, t in enumerate(args) if t.endswith(".py")),
                          None)
            if script is not None:
                args = args[script + 1:]
        for t in args:
            name = t.split("=", 1)[0]
            if t.startswith("--") and LONG.match(name):
                flags.append(name)
    return flags


def bridge_words(text):
    """run_recipe.py's arguments in a launch text."""
    out = []
    for cmd in commands(text):
        i = 0
        while i < len(cmd) and (ASSIGN.match(cmd[i]) and "." not in
                                cmd[i].split("=", 1)[0] or
                                cmd[i] in ("export", "env", "unset", ":")):
            i += 1
        args = cmd[i:]
        if not args:
            continue
        if not (args[0].startswith("--") or "=" in args[0]):
            script = next((j for j, t in enumerate(args)
                           if t.endswith("run_recipe.py")), None)
            if script is None:
                continue
            args = args[script + 1:]
        out += args
    return out


def bridge_value_ok(value, ann, recipes):
    """Is VALUE (as Hydra reads the override) of annotation ANN?"""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value, quoted = value[1:-1], True
    else:
        quoted = False
    if value == "null" and not quoted:
        return "Optional" in ann or "None" in ann
    lit = re.findall(r"'([^']*)'", ann) if ann.startswith(
        ("Literal", "Optional[Literal")) else None
    if lit:
        return value in lit
    if ann in ("bool", "Optional[bool]"):
        return value in ("true", "false") and not quoted
    if ann in ("int", "Optional[int]"):
        return re.fullmatch(r"-?[0-9]+", value) is not None and not quoted
    if ann in ("float", "Optional[float]"):
        return re.fullmatch(r"-?[0-9.]+(e-?[0-9]+)?", value) is not None \
            and not quoted
    if ann.startswith("Union[int,List[int]]"):
        return re.fullmatch(r"-?[0-9]+|\[[0-9,]*\]", value) is not None
    return True     # str, paths, unions: any text


def check_bridge(path, text, data_dir):
    known, commit = load_list(data_dir, "megatron-bridge")
    ann = {}
    for e in known:
        if not e.startswith("run_recipe.py ") and "=" not in e:
            k, _, a = e.partition(" ")
            ann[k] = a
    words = bridge_words(text)
    if not words:
        fail("%s: no run_recipe.py argument found" % path, 1)
    bad, n, i = [], 0, 0
    while i < len(words):
        w = words[i]
        n += 1
        if w.startswith("--"):
            if "run_recipe.py " + w not in known:
                bad.append("option %s" % w)
            if w in ("--recipe", "--dataset") and i + 1 < len(words):
                if "run_recipe.py %s %s" % (w, words[i + 1]) not in known:
                    bad.append("%s %s" % (w, words[i + 1]))
                i += 1
            elif w == "--mode":
                i += 1
            i += 1
            continue
        key, eq, value = w.partition("=")
        if not eq:
            bad.append("stray word %r" % w)
        elif key not in ann:
            bad.append("key %s" % key)
        elif key == "mixed_precision" and value != "null" and \
                "mixed_precision=" + value not in known:
            bad.append("mixed_precision=%s (not a registered recipe)" % value)
        elif key != "mixed_precision" and \
                not bridge_value_ok(value, ann[key], known):
            bad.append("%s=%s (annotation %s)" % (key, value, ann[key]))
        i += 1
    if bad:
        for b in bad:
            sys.stderr.write("%s: %s is not in megatron-bridge.txt (%s)\n" %
                             (path, b, commit))
        return 1
    print("%s: %d arguments, all in megatron-bridge.txt (%s)" % (path, n,
                                                                 commit))
    return 0


def key_paths(obj, prefix, out):
    """Every key path of a JSON value, objects and leaves alike."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            path = prefix + "." + k if prefix else k
            out.append(path)
            if isinstance(v, (dict, list)):
                key_paths(v, path, out)
    elif isinstance(obj, list):
        for e in obj:
            key_paths(e, prefix, out)
    return out


def config_assignments(text, path):
    """`section.key` for each `config.section.key = value` of a module."""
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as e:
        fail("%s: not Python: %s" % (path, e))
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            parts = []
            while isinstance(target, ast.Attribute):
                parts.append(target.attr)
                target = target.value
            if isinstance(target, ast.Name) and target.id == "config" and parts:
                out.append(".".join(reversed(parts)))
    return out


def header_words(data_dir, target, prefix):
    """The words after `# PREFIX` in a list's header."""
    with open(os.path.join(data_dir, target + ".txt")) as f:
        for line in f:
            if line.startswith("# " + prefix):
                return set(line[len("# " + prefix):].split())
    return set()


def load_list(data_dir, target):
    path = os.path.join(data_dir, target + ".txt")
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        fail("cannot read %s: %s" % (path, e))
    commit = "unknown"
    entries = set()
    for line in lines:
        if line.startswith("#"):
            m = re.match(r"#\s*commit:\s*([0-9a-f]{12,40})", line)
            if m:
                commit = m.group(1)[:12]
        elif line.strip():
            entries.add(line.strip())
    if not entries:
        fail("%s lists nothing" % path)
    return entries, commit


def main(argv):
    if len(argv) != 4 or argv[2] not in ("megatron", "megatron-bridge",
                                         "deepspeed", "torchtitan"):
        fail("usage: check-export-flags.py EXPORT_FILE "
             "megatron|megatron-bridge|deepspeed|torchtitan DATA_DIR")
    path, target, data_dir = argv[1:]
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        fail("cannot read %s: %s" % (path, e))
    text = raw.decode("utf-8")
    if target == "megatron-bridge":
        return check_bridge(path, text, data_dir)
    if target == "megatron":
        used = megatron_flags(text)
    elif target == "deepspeed":
        try:
            obj = json.loads(text)
        except ValueError as e:
            fail("%s: not JSON: %s" % (path, e))
        used = key_paths(obj, "", [])
    else:
        used = config_assignments(text, path)
    if not used:
        fail("%s: no %s option found" % (path, target), 1)
    known, commit = load_list(data_dir, target)
    if target == "torchtitan":
        # whole sections, and fields set only in code (tyro-suppressed)
        known |= header_words(data_dir, target, "sections:")
        known |= header_words(
            data_dir, target,
            "annotated tyro.conf.Suppress (no --section.key; not listed):")
    uniq = sorted(set(used))
    missing = [u for u in uniq if u not in known]
    if missing:
        for m in missing:
            sys.stderr.write("%s: %s is not in %s.txt (%s)\n" % (
                path, m, target, commit))
        sys.stderr.write("%s: %d of %d flags missing from %s.txt (%s)\n" % (
            path, len(missing), len(uniq), target, commit))
        return 1
    print("%s: %d flags, all in %s.txt (%s)" % (path, len(uniq), target,
                                                commit))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
