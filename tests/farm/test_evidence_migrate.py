"""Issue 28: a farm whose state was filed in the layout before it (a folder per bundle
under evidence/, the journal of folders not yet synced, source archives one folder
deep) is migrated when a coordinator starts. The state folders are what the coordinator
before issue 28 (commit 32f62cd) left after real work, one per store
(tests/farm/legacy/make_legacy.py made them; its docstring says what they hold); each
test migrates a fresh copy."""
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile

sys.path.insert(0, os.path.dirname(__file__))
import farmlib  # noqa: E402
from farmlib import HERE, Farm  # noqa: E402
from farmlib import AGENT_IDLE_S  # noqa: E402

LEGACY = HERE / "legacy"
OLD_RUN1 = {"evidence/0.1.0/1/old-box/gcc-none-emulated",
            "evidence/0.1.0/1/old-box/clang-none-emulated"}
JOURNALLED = "evidence/0.1.0/2/late/gcc-none-emulated"


def legacy_farm(tmp_path, farm_store):
    """A coordinator (not started) on a copy of the legacy state of FARM_STORE's kind."""
    kind = "pg" if farm_store == "postgresql" else "sqlite"
    with tarfile.open(LEGACY / f"{kind}-state.tar.gz") as tar:
        tar.extractall(tmp_path)
    store = None
    if kind == "pg":
        uri = farmlib.POSTGRES.database()
        subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", uri, "-f",
                        str(LEGACY / "pg.sql")], check=True, capture_output=True, timeout=60)
        store = {"store": uri}
    return Farm(tmp_path, lease=30, store=store)


def test_a_state_folder_in_the_folder_layout_is_migrated_at_start(tmp_path, farm_store):
    farm = legacy_farm(tmp_path, farm_store)
    old = {str(p.relative_to(farm.state)): p.read_bytes()
           for p in (farm.state / "evidence").rglob("*") if p.is_file()}
    sources = [p for p in (farm.state / "blobs").glob("??/*") if p.is_file()]
    assert sources and any(k.startswith(JOURNALLED) for k in old)
    with farm:
        log = (tmp_path / "farm.log").read_text()
        assert ("farm: migrate: 2 source archive(s) moved, 1 bundle(s) from the journal and 2"
                " from folders filed by content, 4 folder(s) removed") in log, log
        # The legacy runs' comparisons were stored before values were decoded: redone.
        assert "stored comparison(s) from before values were decoded dropped" in log, log
        assert log.count("farm: migrate:") == 2, log
        # No folder per bundle is left (the ghost no job filed went too), sources moved.
        assert [p for p in (farm.state / "evidence").rglob("*") if p.is_file()] == []
        for src in sources:
            assert not src.exists()
            assert (farm.state / "blobs" / src.name[:2] / src.name[2:4] / src.name).exists()
        # Every filed bundle is served as it was, file by file, the same bytes.
        assert set(farm.filed()) == OLD_RUN1 | {JOURNALLED}
        for rel, data in old.items():
            if "/ghost/" in rel:
                continue
            evidence = "/".join(rel.split("/")[:5])
            assert farm.filed_file(evidence, rel[len(evidence) + 1:]) == data, rel
        # Each file is one blob, by its content, once.
        for blob in farm.blobs():
            assert hashlib.sha256(blob.read_bytes()).hexdigest() == blob.name
        assert len({hashlib.sha256(d).digest() for r, d in old.items()
                    if "/ghost/" not in r and not r.endswith("bundle.dsse.json")}) + 2 \
            == len(farm.blobs())            # + the two source archives
        # Exported, the bundles verify with cairn-farm verify and plain openssl.
        for d in farm.exported(tmp_path / "export"):
            r = subprocess.run(["bash", HERE.parent.parent / "farm" / "verify_openssl.sh",
                                d / "bundle.dsse.json", d / "agent.pub.pem"],
                               capture_output=True, text=True, timeout=30, cwd=tmp_path)
            assert "Signature Verified Successfully" in r.stdout, r.stdout + r.stderr
        # The old runs' pages and comparisons still work; new work goes on.
        status, page = farm.request("GET", "/runs/1", token=None)
        assert status == 200 and b"<tr data-case=" in page
        r = farm.cli("compare", 1, "--json")
        assert r.returncode == 0, r.stderr
        assert farm.cli("gc").returncode == 0
        assert set(farm.filed()) == OLD_RUN1 | {JOURNALLED}
        farm.exported(tmp_path / "export-after-gc")
        farm.agent("new-box", idle=AGENT_IDLE_S)
        run = farm.submit(HERE / "cases", {"compilers": ["gcc"]})
        assert farm.wait_run(run, 90)["jobs"][0]["state"] == "done"
    # A second start has nothing left to migrate.
    farm.start()
    farm.close()
    assert (tmp_path / "farm.log").read_text().count("farm: migrate:") == 2


def test_a_bundle_lost_but_journalled_comes_back_and_a_missing_folder_is_named(tmp_path,
                                                                                farm_store):
    """The journalled bundle's folder lost (the power loss the journal was for) comes back
    from the journal; a done job's folder missing with no journal row is named in the
    log and left as it was, and the other bundles migrate."""
    farm = legacy_farm(tmp_path, farm_store)
    shutil.rmtree(farm.state / JOURNALLED)
    missing = sorted(OLD_RUN1)[0]
    shutil.rmtree(farm.state / missing)
    with farm:
        log = (tmp_path / "farm.log").read_text()
        assert f"{missing}: no such folder: left as it is" in log, log
        assert set(farm.filed()) == OLD_RUN1 | {JOURNALLED}   # the jobs are done still
        assert farm.filed_file(JOURNALLED, "examples/slow.cairn/run.log") == \
            b"filed just before the kill\n"
        status, _ = farm.get_bytes(f"/files/{missing}/bundle.dsse.json")
        assert status == 404


def test_a_tampered_legacy_bundle_is_not_migrated(tmp_path, farm_store):
    """Migration verifies each bundle again (signature, every subject's digest): a file
    changed in its folder keeps the bundle from being migrated, and says so."""
    farm = legacy_farm(tmp_path, farm_store)
    victim = sorted(OLD_RUN1)[1]
    receipt = farm.state / victim / "examples/plain.cairn/receipt.json"
    receipt.write_text(receipt.read_text() + " ")
    with farm:
        log = (tmp_path / "farm.log").read_text()
        assert f"{victim}: the bundle does not verify" in log, log
        status, _ = farm.get_bytes(f"/files/{victim}/bundle.dsse.json")
        assert status == 404
        assert (farm.state / victim).is_dir()    # left for someone to look at
        other = sorted(OLD_RUN1)[0]
        assert farm.get_bytes(f"/files/{other}/bundle.dsse.json")[0] == 200
