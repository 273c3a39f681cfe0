"""Agents where fleets run: cairn-agent's batch flags (--once, --max-jobs, --idle-exit)
against a real coordinator, and the fleet configs in configs/ (the systemd unit under
`systemd-analyze verify` and run as its ExecStart says, the Slurm script run as a job,
the Kubernetes DaemonSet parsed and checked for what a GPU node needs)."""
import os
import pathlib
import re
import shlex
import shutil
import socket
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from cairntest import TBIN  # noqa: E402
from farmlib import AGENT, ENROL, FAKE_CAIRN, HERE, Farm, Relay, wait_for  # noqa: E402

ROOT = HERE.parent.parent
CONFIGS = ROOT / "configs"
UNIT = CONFIGS / "systemd" / "cairn-agent.service"
SBATCH = CONFIGS / "slurm" / "cairn-agent.sbatch"
DAEMONSET = CONFIGS / "kubernetes" / "cairn-agent-daemonset.yaml"
CASES = HERE / "cases"
TWO_JOBS = {"compilers": ["gcc", "clang"]}   # one job per compiler


def jobs_by_agent(farm, runs):
    """{agent name: number of done jobs} and the count of jobs not yet done."""
    done, waiting = {}, 0
    for run in runs:
        for j in farm.run_view(run)["jobs"]:
            if j["state"] == "done":
                done[j["agent"]] = done.get(j["agent"], 0) + 1
            else:
                waiting += 1
    return done, waiting


def finish(proc, timeout):
    """The agent's exit status, waiting at most TIMEOUT seconds (fails if it runs on)."""
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"agent {proc.name} still running after {timeout}s: "
                             + proc.logpath.read_text()[-2000:])


# --- the batch flags ---------------------------------------------------------------------

def test_once_then_max_jobs_take_exactly_their_share(tmp_path):
    with Farm(tmp_path, lease=15) as farm:
        runs = [farm.submit(CASES, TWO_JOBS) for _ in range(2)]   # four jobs queued
        once = farm.agent("once", "--once")
        assert finish(once, 60) == 0, once.logpath.read_text()
        assert jobs_by_agent(farm, runs) == ({"once": 1}, 3)
        two = farm.agent("two", "--max-jobs", "2")
        assert finish(two, 60) == 0, two.logpath.read_text()
        assert jobs_by_agent(farm, runs) == ({"once": 1, "two": 2}, 1)
        assert "2 jobs done, exiting" in two.logpath.read_text()
        # The last job is still there for an agent without a limit.
        rest = farm.agent("rest", idle=3)
        assert finish(rest, 60) == 0
        assert jobs_by_agent(farm, runs) == ({"once": 1, "two": 2, "rest": 1}, 0)


def test_idle_exit_leaves_an_empty_queue_on_time(tmp_path):
    """--idle-exit 2 with nothing to do: the agent exits, and every long poll it sent
    asked for what was left of its 2 s, never a full 20 s poll (the coordinator would
    hold one a minute here). What it asked is read from the bytes it sent, through a
    Relay: how long it took depends on the load, and bounds only the hang guard."""
    with Farm(tmp_path, claim_wait=60) as farm:
        recorder = Relay(farm.port)
        try:
            agent = farm.agent("idler", "--idle-exit", "2", url=recorder.url)
            assert finish(agent, 600) == 0, agent.logpath.read_text()
            waits = recorder.claims()
        finally:
            recorder.close()
        assert "idle for 2 s, exiting" in agent.logpath.read_text()
        assert waits and all(0 < w <= 2 for w in waits), waits


def shifted_agent(farm, name, idle, shift, url):
    """An agent whose wall clock (its idle clock) the file SHIFT steps (clock_shift.so)."""
    asan = os.environ.get("ASAN_OPTIONS", "")
    env = {"LD_PRELOAD": str(TBIN / "clock_shift.so"), "CAIRN_CLOCK_SHIFT_FILE": str(shift),
           "ASAN_OPTIONS": f"{asan}:verify_asan_link_order=0" if asan
           else "verify_asan_link_order=0"}
    return farm.agent(name, "--idle-exit", str(idle), env=env, url=url)


def test_idle_exit_counts_from_the_last_job(tmp_path):
    """The agent's clock is stepped instead of waited for (tests/farm/clock_shift.c):
    idle 900 of its 1000 s, it takes a job; 1800 s after its start (900 after the job)
    it is still polling; 2000 s after its start (1100 after the job) it exits. Counted
    from its start it would have exited at the second step. Each step is seen to be
    acted on through the claims the agent sent after it (a Relay), not waited out."""
    shift = tmp_path / "clock-shift"
    shift.write_text("0")
    with Farm(tmp_path, lease=600, claim_wait=1) as farm:
        recorder = Relay(farm.port)
        try:
            agent = shifted_agent(farm, "late", 1000, shift, recorder.url)

            def claims_after(count, more):
                wait_for(lambda: len(recorder.claims()) >= count + more or agent.poll() is not None,
                         600, f"{more} more claims from the agent: hung?")
                return agent.poll() is None

            assert claims_after(0, 1), agent.logpath.read_text()
            shift.write_text("900")
            assert claims_after(len(recorder.claims()), 2), agent.logpath.read_text()
            run = farm.submit(CASES, {"compilers": ["gcc"]})
            farm.wait_run(run, 600)
            assert jobs_by_agent(farm, [run]) == ({"late": 1}, 0)
            shift.write_text("1800")
            # two claims begun after the step: the agent looked at its clock since
            assert claims_after(len(recorder.claims()), 2), \
                "the agent counted its idle time from its start: " + agent.logpath.read_text()
            shift.write_text("2000")
            assert finish(agent, 600) == 0, agent.logpath.read_text()
        finally:
            recorder.close()
        assert "idle for 1000 s, exiting" in agent.logpath.read_text()


@pytest.mark.parametrize("flag,value", [("--max-jobs", "0"), ("--max-jobs", "1.5"),
                                        ("--idle-exit", "-1"), ("--idle-exit", "soon")])
def test_bad_batch_values_are_refused(tmp_path, flag, value):
    r = subprocess.run([AGENT, "run", "--work", tmp_path, flag, value], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 2
    assert f"{flag} wants a positive" in r.stderr and value in r.stderr


def test_help_names_the_batch_flags():
    top = subprocess.run([AGENT, "--help"], capture_output=True, text=True, timeout=10)
    run = subprocess.run([AGENT, "run", "--help"], capture_output=True, text=True, timeout=10)
    for text in (top.stdout, run.stdout):
        for flag in ("--once", "--max-jobs N", "--idle-exit S"):
            assert flag in text


# --- systemd -----------------------------------------------------------------------------

def unit_copy(tmp_path, agent_path):
    """The unit with the agent's installed path replaced by AGENT_PATH."""
    text = UNIT.read_text().replace("/usr/local/bin/cairn-agent", str(agent_path))
    copy = tmp_path / "cairn-agent.service"
    copy.write_text(text)
    return copy, text


def test_unit_passes_systemd_analyze_verify(tmp_path):
    analyze = shutil.which("systemd-analyze")
    if not analyze:
        pytest.skip("systemd-analyze is not installed here")
    agent = tmp_path / "cairn-agent"
    shutil.copy(AGENT, agent)
    copy, _ = unit_copy(tmp_path, agent)
    r = subprocess.run([analyze, "verify", copy], capture_output=True, text=True, timeout=60)
    about_unit = [l for l in (r.stdout + r.stderr).splitlines() if copy.name in l]
    assert r.returncode == 0 and not about_unit, r.stdout + r.stderr
    # And it would refuse a unit whose binary is missing (the check has teeth).
    missing, _ = unit_copy(tmp_path, tmp_path / "no-such-agent")
    r = subprocess.run([analyze, "verify", missing], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 or "no-such-agent" in r.stderr


def systemd_words(line, env):
    """ExecStart= as systemd splits it: ${VAR} is one word, a lone $VAR splits into words."""
    words = []
    for word in shlex.split(line):
        m = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
        if m:
            words += env.get(m.group(1), "").split()
        else:
            words.append(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}",
                                lambda v: env.get(v.group(1), ""), word))
    return words


def test_unit_command_line_runs_an_agent(tmp_path):
    """What ExecStart runs, with the unit's environment file, works through the queue."""
    text = UNIT.read_text()
    exec_start = re.search(r"^ExecStart=(.*)$", text, re.M).group(1)
    assert "Restart=always" in text and "EnvironmentFile=/etc/cairn-agent/agent.env" in text
    with Farm(tmp_path, lease=15) as farm:
        run = farm.submit(CASES, {"compilers": ["gcc"]})
        token = tmp_path / "enrol-token"
        token.write_text(ENROL + "\n")
        env = {"CAIRN_COORDINATOR": farm.url,
               "CAIRN_AGENT_ARGS": f"--cairn {FAKE_CAIRN} --name unit --sanitizers none"
                                   " --max-jobs 1"}
        key = farm.keygen("unit")
        words = [w.replace("/etc/cairn-agent/agent.key", str(key))
                  .replace("/etc/cairn-agent/enrol-token", str(token))
                  .replace("/var/lib/cairn-agent/work", str(tmp_path / "unit-work"))
                 for w in systemd_words(exec_start, env)]
        assert words[0] == "/usr/local/bin/cairn-agent"
        r = subprocess.run([AGENT, *words[1:]], capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, FAKE_CAIRN_PIDFILE=str(tmp_path / "pids")))
        assert r.returncode == 0, r.stderr
        assert jobs_by_agent(farm, [run]) == ({"unit": 1}, 0)


# --- Slurm -------------------------------------------------------------------------------

def test_sbatch_script_parses_and_asks_for_one_gpu():
    r = subprocess.run(["bash", "-n", SBATCH], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    lines = SBATCH.read_text().splitlines()
    assert lines[0].startswith("#!")
    # sbatch reads #SBATCH lines only before the first command.
    head = []
    for line in lines[1:]:
        if line.strip() and not line.startswith("#"):
            break
        head.append(line)
    directives = [l.split(None, 1)[1] for l in head if l.startswith("#SBATCH ")]
    assert "--gres=gpu:1" in directives
    assert "--idle-exit" in SBATCH.read_text()


def test_sbatch_script_runs_the_queue_dry_and_exits(tmp_path):
    """The script as a Slurm job would run it: enrols a per-GPU key, does the work, exits 0
    once idle and removes its scratch folder."""
    with Farm(tmp_path, lease=15) as farm:
        run = farm.submit(CASES, TWO_JOBS)
        token = tmp_path / "enrol-token"
        token.write_text(ENROL)
        scratch = tmp_path / "scratch"
        scratch.mkdir()
        env = dict(os.environ, CAIRN_COORDINATOR=farm.url, CAIRN_ENROL_TOKEN_FILE=str(token),
                   CAIRN_KEY_DIR=str(tmp_path / "keys"), CAIRN_AGENT=str(AGENT),
                   CAIRN_IDLE_EXIT="2", TMPDIR=str(scratch), SLURM_JOB_ID="42",
                   SLURM_JOB_GPUS="3", FAKE_CAIRN_PIDFILE=str(tmp_path / "pids"),
                   CAIRN_AGENT_ARGS=f"--cairn {FAKE_CAIRN} --sanitizers none")
        r = subprocess.run(["bash", SBATCH], capture_output=True, text=True, timeout=90,
                           env=env)
        assert r.returncode == 0, r.stderr
        name = f"{socket.gethostname().split('.')[0]}-gpu3"
        assert jobs_by_agent(farm, [run]) == ({name: 2}, 0)
        assert (tmp_path / "keys" / f"{name}.key").exists()
        assert list(scratch.iterdir()) == []


def test_sbatch_script_needs_a_coordinator(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "CAIRN_COORDINATOR"}
    r = subprocess.run(["bash", SBATCH], capture_output=True, text=True, timeout=30,
                       env=dict(env, HOME=str(tmp_path)))
    assert r.returncode != 0 and "CAIRN_COORDINATOR" in r.stderr


# --- Kubernetes --------------------------------------------------------------------------

def test_daemonset_parses_and_fits_gpu_nodes():
    yaml = pytest.importorskip("yaml", reason="python3-yaml missing (scripts/deps.sh)")
    docs = list(yaml.safe_load_all(DAEMONSET.read_text()))
    by_kind = {d["kind"]: d for d in docs}
    ds = by_kind["DaemonSet"]
    assert ds["apiVersion"] == "apps/v1"
    pod = ds["spec"]["template"]["spec"]
    labels = ds["spec"]["template"]["metadata"]["labels"]
    assert ds["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert any("gpu" in k for k in pod["nodeSelector"]), pod["nodeSelector"]
    (agent,) = pod["containers"]
    assert agent["resources"]["limits"]["nvidia.com/gpu"] == 1
    args = agent["args"]
    assert args[0] == "run"
    opts = dict(zip(args[1::2], args[2::2]))
    # The key comes from a Secret volume mounted where --key looks.
    secrets = {v["name"]: v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v}
    mounts = {m["name"]: m["mountPath"] for m in agent["volumeMounts"]}
    key_dir = os.path.dirname(opts["--key"])
    assert any(mounts.get(v) == key_dir for v in secrets), (secrets, mounts, opts["--key"])
    # Every $(VAR) the arguments use is defined; the token from a Secret, the
    # coordinator from the ConfigMap in the same file.
    env = {e["name"]: e.get("valueFrom", {}) for e in agent["env"]}
    for word in args:
        for var in re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", word):
            assert var in env, var
    # The enrol token is a file from the enrol Secret, never an argument (ps shows those).
    assert "--token" not in opts
    assert any(mounts.get(v) == os.path.dirname(opts["--token-file"]) and
               secrets[v] == "cairn-agent-enrol" for v in secrets), (secrets, mounts)
    coord = env[re.fullmatch(r"\$\((\w+)\)", opts["--coordinator"]).group(1)]["configMapKeyRef"]
    config = by_kind["ConfigMap"]
    assert config["metadata"]["name"] == coord["name"] and coord["key"] in config["data"]
    assert config["metadata"]["namespace"] == ds["metadata"]["namespace"]


def test_daemonset_arguments_are_ones_the_agent_takes(tmp_path):
    """The DaemonSet's arguments, with its variables filled in, parse as `run` options."""
    yaml = pytest.importorskip("yaml", reason="python3-yaml missing (scripts/deps.sh)")
    ds = [d for d in yaml.safe_load_all(DAEMONSET.read_text()) if d["kind"] == "DaemonSet"][0]
    agent = ds["spec"]["template"]["spec"]["containers"][0]
    values = {"NODE_NAME": "gpu-node-1", "CAIRN_COORDINATOR": "http://127.0.0.1:1",
              "CAIRN_LABELS": "gpu"}
    token = tmp_path / "token"
    token.write_text(ENROL)
    args = [re.sub(r"\$\((\w+)\)", lambda m: values[m.group(1)], a) for a in agent["args"]]
    args = [a.replace("/work/jobs", str(tmp_path / "work"))
             .replace("/etc/cairn-agent/enrol/token", str(token)) for a in args]
    # A missing key is the first thing a real run would trip on: the options parsed.
    r = subprocess.run([AGENT, *args], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "unknown argument" not in r.stderr, r.stderr
    assert "/etc/cairn-agent/keys/gpu-node-1.key" in r.stderr


# --- the enrol token ---------------------------------------------------------------------

@pytest.mark.parametrize("content,words", [
    (None, "cannot open"),
    ("", "no token on its first line"),
    ("  \n\t\n", "no token on its first line"),
    ("x" * 600, "longer than 511 bytes"),
])
def test_token_file_refusals(tmp_path, content, words):
    token = tmp_path / "token"
    if content is not None:
        token.write_text(content)
    r = subprocess.run([AGENT, "run", "--coordinator", "http://127.0.0.1:1", "--token-file",
                        token, "--key", tmp_path / "k"], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 2 and words in r.stderr, r.stderr


def test_token_and_token_file_are_one_or_the_other(tmp_path):
    token = tmp_path / "token"
    token.write_text(ENROL)
    r = subprocess.run([AGENT, "run", "--coordinator", "http://127.0.0.1:1", "--token", ENROL,
                        "--token-file", token, "--key", tmp_path / "k"], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 2 and "give one" in r.stderr, r.stderr


def test_token_file_enrols_and_keeps_the_token_out_of_the_process_list(tmp_path):
    """An agent started with --token-file (white space around the token) works through
    the queue, and its command line (what ps shows every user) never holds the token."""
    with Farm(tmp_path, lease=15) as farm:
        run = farm.submit(CASES, {"compilers": ["gcc"]})
        token = tmp_path / "token"
        token.write_text("  " + ENROL + "  \n# comment lines after the first are ignored\n")
        key = farm.keygen("tokfile")
        p = subprocess.Popen([AGENT, "run", "--coordinator", farm.url, "--token-file", token,
                              "--key", key, "--name", "tokfile", "--cairn", FAKE_CAIRN,
                              "--sanitizers", "none", "--work", tmp_path / "w", "--max-jobs",
                              "1"], stderr=subprocess.PIPE, text=True,
                             env=dict(os.environ, FAKE_CAIRN_PIDFILE=str(tmp_path / "pids")))
        cmdline = pathlib.Path(f"/proc/{p.pid}/cmdline").read_bytes()
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        assert ENROL.encode() not in cmdline
        assert jobs_by_agent(farm, [run]) == ({"tokfile": 1}, 0)
