"""What check-megatron-args.py and check-bridge-overrides.py share: a
list of named checks, and the launch script's node layout rules. Standard
library only."""
import re
import sys


class Checks:
    """Named conditions; report() prints `OK: N checks` or each failure
    (on stderr, prefixed with the program's name) and exits 1."""

    def __init__(self, program):
        self.program = program
        self.n = 0
        self.bad = []

    def __call__(self, cond, what):
        self.n += 1
        if not cond:
            self.bad.append(what)

    def report(self):
        if self.bad:
            for b in self.bad:
                sys.stderr.write("%s: FAILED: %s\n" % (self.program, b))
            sys.exit(1)
        print("OK: %d checks" % self.n)


def check_launch(check, launch, notes, world):
    """A launch script's torchrun starts `world` processes: `#SBATCH
    --nodes` (1 without it) times --nproc-per-node, and an sbatch script's
    --gpus-per-node equals --nproc-per-node."""
    m = re.search(r"--nproc-per-node (\d+)", launch)
    check(m is not None, "torchrun is given --nproc-per-node")
    nproc = int(m.group(1)) if m else 0
    sb = re.search(r"^#SBATCH --nodes=(\d+)$", notes, re.M)
    nodes = int(sb.group(1)) if sb else 1
    check(nodes * nproc == world,
          "nodes %d x --nproc-per-node %d = world %d" % (nodes, nproc, world))
    if sb:
        g = re.search(r"^#SBATCH --gpus-per-node=(\d+)$", notes, re.M)
        check(g is not None and int(g.group(1)) == nproc,
              "--gpus-per-node equals --nproc-per-node")
