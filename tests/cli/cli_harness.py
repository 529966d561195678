"""What the end-to-end CLI tests share: a fresh work directory, running strop with its exit
status checked, a list of failed checks and the exit code that reports them.

    h = Harness(sys.argv)            # argv: SCRIPT STROP_EXE WORK_DIR
    r = h.strop("info", "x.h5")      # checks exit 0 (ok=False: not 0)
    h.check(condition, "what")
    h.finish()                       # prints the failures, exits 1 if any
"""
import os
import shutil
import subprocess
import sys

import numpy as np


class Harness:
    def __init__(self, argv):
        self.exe, self.work = os.path.abspath(argv[1]), os.path.abspath(argv[2])
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)
        self.failures = []

    def path(self, name):
        return os.path.join(self.work, name)

    def check(self, condition, what):
        print(("ok   " if condition else "FAIL ") + what)
        if not condition:
            self.failures.append(what)
        return condition

    def strop(self, *args, ok=True, timeout=300):
        """Runs strop; checks the exit status (ok=True: 0, ok=False: not 0) and returns it."""
        r = subprocess.run([self.exe, *map(str, args)], capture_output=True, text=True,
                           cwd=self.work, timeout=timeout)
        good = (r.returncode == 0) == ok
        self.check(good, f"strop {' '.join(map(str, args))} -> exit {r.returncode}")
        if not good or os.environ.get("VERBOSE"):
            print(r.stdout, r.stderr, sep="\n")
        return r

    def finish(self):
        print(f"\n{len(self.failures)} failure(s)")
        for f in self.failures:
            print("  " + f)
        sys.exit(1 if self.failures else 0)


def rel(a, b):
    """Relative Frobenius distance of a from b."""
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30)
