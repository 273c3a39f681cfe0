#!/usr/bin/python3
"""bench_tile64.py: examples/tensor/tile64.cairn emulated on the host against the reference
loop (make bench), on a 512 x 512 x 512 f16 multiply: two programs built with cairn, one
calling tile64 on @device views (emulated), one calling mma_unordered on host views, each
run at CAIRN_THREADS=1 and timed in CPU time (the machine may be shared). The tile64
program also checks its output against the reference bit for bit (exit 1 otherwise).
Emulation is for bits, not speed: every thread of a warp computes each fragment whole.
Env: CAIRN_BIN (folder of cairn). Usage: bench_tile64.py [N]"""
import os
import pathlib
import resource
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
CAIRN = pathlib.Path(os.environ.get("CAIRN_BIN", ROOT / "bin")) / "cairn"
sys.path.insert(0, str(ROOT / "tests/tensor"))
from tilelib import compare_main, reference_main  # noqa: E402


def program(n, main_text):
    src = (ROOT / "examples/tensor/tile64.cairn").read_text()
    for name in "MNK":
        src = "\n".join(f"const {name}:usize = {n};" if line.startswith(f"const {name}:usize") else line
                        for line in src.splitlines())
    return src + main_text


def cpu_seconds(exe):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run([exe], env=dict(os.environ, CAIRN_THREADS="1"))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"bench_tile64: {exe} exited {r.returncode}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 512
    with tempfile.TemporaryDirectory() as d:
        exes = {}
        for name, text in (("tile64", compare_main("tile64")), ("reference", reference_main())):
            src = pathlib.Path(d) / f"{name}.cairn"
            src.write_text(program(n, text))
            subprocess.run([CAIRN, "build", str(src), "-o", str(pathlib.Path(d) / name)], check=True)
            exes[name] = str(pathlib.Path(d) / name)
        ref = cpu_seconds(exes["reference"])
        tiled = cpu_seconds(exes["tile64"]) - ref     # its program also runs the reference
        print(f"tile64 emulated {n}^3 f16: {tiled:.2f} s CPU, reference loop {ref:.2f} s CPU "
              f"(fills included), ratio {tiled / ref:.1f}, bits equal")


if __name__ == "__main__":
    main()
