"""The CI examples (configs/ci/github-actions.yml, configs/ci/gitlab-ci.yml) run as their
CI systems would run them, against a coordinator on loopback: the commands are read from
the YAML (GitHub's `run:` steps, each a `bash -e` script with the step's `env:` and the
repository's variables and secrets; GitLab's before_script and script in one shell with
the job's variables), in a checkout with a passing and then a failing case. The job's
exit status must follow the verdicts (0, then 1) and the JUnit file the publishing step
names must be there and validate. cairn-farm is on PATH, so the build steps find it and
build nothing (what they would build is `make bin/cairn-farm`)."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import ADMIN, FARM, Farm  # noqa: E402
from farmlib import AGENT_IDLE_S  # noqa: E402
from test_ci import FAIL, PASS, validate  # noqa: E402

yaml = pytest.importorskip("yaml")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CI = os.path.join(ROOT, "configs", "ci")

pytestmark = pytest.mark.skipif(shutil.which("xmllint") is None,
                                reason="xmllint (Debian's libxml2-utils) is not installed")


def checkout(tmp_path, name, cases):
    """A small repository as the CI runner checks it out: cases and the matrix."""
    root = tmp_path / name
    (root / "examples").mkdir(parents=True)
    (root / "configs").mkdir()
    (root / "configs" / "matrix.json").write_text(json.dumps({"compilers": ["gcc", "clang"]}))
    for case_name, text in cases.items():
        (root / "examples" / case_name).write_text(text)
    return root


def base_env(tmp_path):
    env = {"PATH": f"{os.path.dirname(FARM)}:/usr/bin:/bin", "HOME": str(tmp_path),
           "LANG": "C.UTF-8"}
    return env


def run_github(farm, repo, tmp_path):
    """The workflow's job as a runner runs it: each `run:` step in order, stopping at the
    first that fails (as `if: always()` steps aside); returns the exit status and the
    JUnit file the report step publishes."""
    flow = yaml.safe_load(open(os.path.join(CI, "github-actions.yml")))
    triggers = flow.get("on", flow.get(True))   # YAML 1.1 reads a bare `on` as true
    assert "push" in triggers and "pull_request" in triggers
    steps = flow["jobs"]["farm"]["steps"]
    context = {"vars.CAIRN_FARM_URL": farm.url, "secrets.CAIRN_FARM_TOKEN": ADMIN}

    def expand(text):
        return re.sub(r"\$\{\{\s*([\w.]+)\s*\}\}", lambda m: context[m.group(1)], str(text))

    github_path = tmp_path / "github_path"
    github_path.write_text("")
    env = dict(base_env(tmp_path), GITHUB_SHA="0" * 40, GITHUB_REF_NAME="main",
               GITHUB_PATH=str(github_path))
    status = 0
    for step in steps:
        if "run" not in step:
            continue
        step_env = dict(env, **{k: expand(v) for k, v in step.get("env", {}).items()})
        r = subprocess.run(["bash", "-e", "-c", expand(step["run"])], cwd=repo, env=step_env,
                           capture_output=True, text=True, timeout=300)
        status = r.returncode
        if status != 0:
            break
    report = [s for s in steps if "action-junit-report" in s.get("uses", "")]
    assert len(report) == 1 and report[0]["if"] == "always()"
    return status, repo / report[0]["with"]["report_paths"], r


def run_gitlab(farm, repo, tmp_path):
    job = yaml.safe_load(open(os.path.join(CI, "gitlab-ci.yml")))["cairn-farm"]
    script = "\n".join(job.get("before_script", []) + job["script"])
    env = dict(base_env(tmp_path), CAIRN_FARM_URL=farm.url, CAIRN_FARM_TOKEN=ADMIN,
               CI_COMMIT_SHA="1" * 40, CI_COMMIT_REF_NAME="main",
               **{k: str(v) for k, v in job.get("variables", {}).items()})
    r = subprocess.run(["bash", "-e", "-c", script], cwd=repo, env=env, capture_output=True,
                       text=True, timeout=300)
    assert job["artifacts"]["when"] == "always"
    return r.returncode, repo / job["artifacts"]["reports"]["junit"], r


@pytest.mark.parametrize("system", [run_github, run_gitlab], ids=["github", "gitlab"])
def test_the_ci_example_runs_against_a_coordinator_and_follows_the_verdicts(tmp_path, system):
    kept = checkout(tmp_path, "kept", {"pass.cairn": PASS})
    broken = checkout(tmp_path, "broken", {"pass.cairn": PASS, "fail.cairn": FAIL})
    with Farm(tmp_path, lease=15) as farm:
        farm.agent("ci-runner-box", idle=AGENT_IDLE_S)
        status, junit, r = system(farm, kept, tmp_path)
        assert status == 0, r.stdout + r.stderr
        root = validate(junit)
        assert root.find("testsuite/testcase/failure") is None
        assert {s.get("name") for s in root.findall("testsuite")} == {
            "ci-runner-box/gcc-none-emulated", "ci-runner-box/clang-none-emulated"}
        status, junit, r = system(farm, broken, tmp_path)
        assert status == 1, r.stdout + r.stderr
        failures = validate(junit).findall("testsuite/testcase/failure")
        assert {f.get("type") for f in failures} == {"differs-where-fixed"}, failures
        runs = farm.request("GET", "/api/v1/status")[1]["runs"]
        assert len(runs) == 2
