"""Random well-typed programs (tests/fuzz/gen_programs.py): every program `cairn check`
accepts must build, its generated C compiled by gcc and clang with the project's flags
(-Wall -Wextra -Werror ...) at -O0 through -O3. A bounded sweep of fixed seeds here;
`make fuzz` (tests/fuzz/fuzz_programs.sh) runs fresh seeds for longer."""
import pathlib
import subprocess
import sys

import pytest

from cairntest import BIN

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gen_programs  # noqa: E402

SEEDS = range(1, 6)  # 3 to 13 s each (loaded machine): 8 builds of a six-function program
MORE_SEEDS = range(6, 61)


def builds_everywhere(seed, tmp_path):
    accepted, failures = gen_programs.judge(str(BIN / "cairn"), seed, str(tmp_path))
    assert not failures, "\n".join(f"{flags}:\n{err}" for flags, err in failures)


@pytest.mark.parametrize("seed", SEEDS)
def test_accepted_program_builds_everywhere(seed, tmp_path):
    builds_everywhere(seed, tmp_path)


@pytest.mark.matrix
@pytest.mark.parametrize("seed", MORE_SEEDS)
def test_more_programs_build_everywhere(seed, tmp_path):
    builds_everywhere(seed, tmp_path)


def test_the_generator_writes_programs_the_checker_accepts(tmp_path):
    """A generator whose programs the checker refuses would test nothing: most of the
    seeds above must be accepted (the grammar is typed; the checker only filters)."""
    accepted = 0
    for seed in SEEDS:
        path = tmp_path / f"p{seed}.cairn"
        path.write_text(gen_programs.Gen(seed).program())
        accepted += subprocess.run([str(BIN / "cairn"), "check", str(path)],
                                   capture_output=True).returncode == 0
    assert accepted >= len(SEEDS) * 3 // 4


def test_the_corners_that_once_broke_the_build(tmp_path):
    """Issue 16's programs, accepted by the checker and rejected by gcc -Werror before
    the lowering bound comparison operands and loop bounds to temporaries."""
    src = tmp_path / "corners.cairn"
    src.write_text("""fn f(x:i32) -> bool = x == x;
fn g(u:u8) -> bool = u <= 255;
fn main() -> i32 {
  let n:usize = 3;
  if n >= 0 { }
  for i in 0..0 { }
  let s:f64 = reduce + for i in 0 yield 1.0;
  let t:i32 = reduce + parallel i in 0..0 yield 1;
  for i in n { if i < 0 { return 1; } }
  return 0;
}
""")
    for cc in gen_programs.compilers():
        for level in gen_programs.LEVELS:
            res = subprocess.run([str(BIN / "cairn"), "build", str(src), "-o",
                                  str(tmp_path / "corners"), "--cc", cc, level],
                                 capture_output=True, text=True)
            assert res.returncode == 0, f"{cc} {level}: {res.stderr[-2000:]}"
