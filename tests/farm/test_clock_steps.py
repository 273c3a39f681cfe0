"""Issue 39, item 12: a step of the wall clock neither ends nor holds a lease. Leases
and long polls run on timing_steady_seconds() (the wall time a coordinator read at its
start, advanced by the monotonic clock), and the reaper cuts a lease that ends over
lease_seconds from now (one given before a backward step, or before a restart) to
lease_seconds. The coordinator's wall clock is stepped by tests/farm/clock_shift.c, an
LD_PRELOAD library, as NTP or an operator would step it. Before, a backward step of two
hours stranded a dead agent's job for two hours, and a forward step took every live
agent's job from it at the reaper's next pass."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from cairntest import TBIN  # noqa: E402
from farmlib import HERE, Farm, Pauses, claim, enrol, wait_for  # noqa: E402

STEP_S = 7200   # two hours: any wait for it is over the tests' hang guards


def stepped(tmp_path, lease, pauses=None):
    """A coordinator whose wall clock tmp_path/clock-shift steps (seconds, either sign)."""
    shift = tmp_path / "clock-shift"
    asan = os.environ.get("ASAN_OPTIONS", "")
    env = {"LD_PRELOAD": str(TBIN / "clock_shift.so"), "CAIRN_CLOCK_SHIFT_FILE": str(shift),
           # the library is not sanitized: ASan would refuse to come second
           "ASAN_OPTIONS": f"{asan}:verify_asan_link_order=0" if asan
           else "verify_asan_link_order=0"}
    return Farm(tmp_path, lease=lease, pauses=pauses, env=env), shift


def one_claimed_job(farm):
    token, _ = enrol(farm, "x", farm.keygen("x"))
    run = farm.submit(HERE / "cases_slow", {"compilers": ["gcc"]})
    job = claim(farm, token)
    assert job["attempt"] == 1
    return run, job, token


def job_row(farm, run):
    return farm.run_view(run)["jobs"][0]


def test_a_backward_step_does_not_hold_a_dead_agents_lease(tmp_path):
    """The agent dies just after its claim and the clock steps back two hours: its
    lease (3 s) still runs out and the job is queued again, within the hang guard."""
    farm, shift = stepped(tmp_path, lease=3)
    with farm:
        run, job, _ = one_claimed_job(farm)
        shift.write_text(str(-STEP_S))
        wait_for(lambda: job_row(farm, run)["state"] == "queued", 300,
                 "the dead agent's job to be queued again after a backward step")
        assert job_row(farm, run)["lost"] == 1


def test_a_lease_given_before_a_restart_and_a_backward_step_is_cut(tmp_path):
    """The coordinator stops with a job leased, the clock steps back two hours, it
    starts again: the lease, two hours and 3 s ahead of the new clock, is cut to 3 s
    and runs out."""
    farm, shift = stepped(tmp_path, lease=3)
    with farm:
        run, job, _ = one_claimed_job(farm)
        farm.stop_server()
        shift.write_text(str(-STEP_S))
        farm.start()
        wait_for(lambda: job_row(farm, run)["state"] == "queued", 300,
                 "the job leased before the restart to be queued again")


def test_a_forward_step_takes_no_live_agents_lease(tmp_path):
    """The clock steps two hours ahead while an agent holds a 600 s lease: two whole
    reaper pass after the step (held at its start and at its end by two pause points),
    the job is still the agent's, its heartbeat is answered, and nothing was lost."""
    pauses = Pauses(tmp_path / "pauses")
    farm, shift = stepped(tmp_path, lease=600, pauses=pauses)
    with farm:
        run, job, token = one_claimed_job(farm)
        shift.write_text(str(STEP_S))
        pauses.close("reaped")
        pauses.wait("reaped", 1)        # the end of a pass that may have begun before
        pauses.close("reaping")
        pauses.open("reaped")
        pauses.wait("reaping", 1)       # the start of the next, after the step
        pauses.close("reaped")
        pauses.open("reaping")
        pauses.wait("reaped", 2)        # its end: it saw the stepped clock
        pauses.open("reaped")
        row = job_row(farm, run)
        assert row["state"] == "running" and row["lost"] == 0 and row["attempt"] == 1, row
        status, lease = farm.request("POST", f"/api/v1/jobs/{job['job']}/heartbeat",
                                     {"progress": "case 1/1"}, token=token)
        assert status == 200, lease


def test_a_long_poll_ends_on_time_across_a_backward_step(tmp_path):
    """A claim waiting 2 s for work when the clock steps back two hours is answered 204
    within the hang guard (the waker slept until a wall-clock deadline two hours off)."""
    farm, shift = stepped(tmp_path, lease=3)
    with farm:
        token, _ = enrol(farm, "x", farm.keygen("x"))
        import threading
        answer = {}

        def poll():
            answer["got"] = farm.request("POST", "/api/v1/claim", {"wait_s": 2}, token=token,
                                         timeout=600)
        t = threading.Thread(target=poll)
        t.start()
        shift.write_text(str(-STEP_S))
        t.join(300)
        assert not t.is_alive(), "the long poll is still waiting after the step"
        assert answer["got"][0] == 204, answer
