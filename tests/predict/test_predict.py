"""cairn predict: byte and operation counts against hand counts, the symbolic formula,
the roofline against the device table's own figures, and the errors."""
import json
import pathlib
import re
import subprocess

import pytest

from cairntest import BIN, ROOT, run

CAIRN = BIN / "cairn"
KERNELS = pathlib.Path(__file__).resolve().parent / "kernels.cairn"


def predict(*args):
    r = run([CAIRN, "predict", KERNELS, *args, "--json"], check=True)
    doc = json.loads(r.stdout)
    return doc["device"], {f["function"]: f for f in doc["functions"]}


def values(entry):
    """{space or kind: value} for the nonzero ones."""
    return {k: v["value"] for k, v in entry.items() if v["formula"] != "0"}


N, M, K = 1000, 30, 70

# Hand counts: bytes = elements touched * element size; operations as written.
HAND = {
    # x[i] and y[i] (8 B each) per term; a multiply and an add per term
    "dot": ({"host": 16 * N}, {}, {"f64": 2 * N}),
    # the exact sum: one multiply per term as written, about twelve f64 additions a term
    "exact_dot": ({"host": 16 * N}, {}, {"f64": 13 * N}),
    # x[i], y[i] read, y[i] written (4 B); a * x[i] and + y[i]
    "saxpy": ({"host": 8 * N}, {"host": 4 * N}, {"f32": 2 * N}),
    # x[i] *= s: read and write on the device, one multiply
    "scale_dev": ({"device": 4 * N}, {"device": 4 * N}, {"f32": N}),
    # per (i, j, p): a and b read, a multiply and an add, and the index arithmetic
    # i*k + p and p*n + j (four integer operations); per (i, j): c written, i*n + j
    "matmul": ({"host": 8 * M * N * K}, {"host": 4 * M * N},
               {"f32": 2 * M * N * K, "int": 4 * M * N * K + 2 * M * N}),
    # w[i] read, out[i] written (1 B), one quantize (an f32 division) each
    "pack": ({"host": 4 * N}, {"host": N}, {"f32": N}),
}


@pytest.fixture(scope="module")
def counted():
    return predict("--device", "h200", "--size", f"n={N},m={M}", "--size", f"k={K}")


@pytest.mark.parametrize("name", sorted(HAND))
def test_hand_counts(counted, name):
    _, fns = counted
    f = fns[name]
    read, written, ops = HAND[name]
    assert values(f["read"]) == read
    assert values(f["written"]) == written
    assert values(f["ops"]) == ops


def test_calls_substitute_their_arguments(counted):
    _, fns = counted
    f = fns["twice"]
    # dot(n) reads 16n; dot(2 * (n / 2)) reads 32 * (n / 2), a quotient --size n binds
    assert f["read"]["host"]["formula"] == "16*n + 32*(n / 2)"
    assert f["read"]["host"]["value"] == 16 * N + 32 * (N // 2)
    assert f["time_s"] > 0 and f["bound"] in ("memory", "host memory", "f64")


def test_symbolic_formula_until_sizes_bind():
    _, fns = predict("--device", "h200")
    mm = fns["matmul"]
    assert mm["read"]["host"] == {"formula": "8*k*m*n", "value": None}
    assert mm["ops"]["int"]["formula"] == "4*k*m*n + 2*m*n"
    assert mm["time_s"] is None
    text = run([CAIRN, "predict", KERNELS, "--device", "h200", "--function", "saxpy"], check=True).stdout
    # host views at the host's bandwidth (measured: the figure varies), not the H200's
    assert "read host    8*n B" in text and re.search(r"max\(\(12\*n\) B / [0-9.e+]+ B/s, \(2\*n\) f32 op / 6.7e\+13 op/s\)", text)
    assert "4.8e+12 B/s, (2*n)" not in text


def roof(f, dev, table, read, written, ops):
    """The expected roofline: host views at the host's bandwidth, the rest at the
    device's, operations at the table's peaks; the largest term binds."""
    host = (read.get("host", 0) + written.get("host", 0)) / dev["host_memory_bandwidth"]["value"] \
        if "host" in read or "host" in written else 0
    device = sum(v for k, v in list(read.items()) + list(written.items()) if k != "host") \
        / table["memory_bandwidth"]["value"]
    compute = sum(v / table["peak"][k]["value"] for k, v in ops.items())
    terms = {"memory": device, "host memory": host}
    if compute > 0:
        terms[max(ops, key=lambda k: ops[k] / table["peak"][k]["value"])] = compute
    return max(terms.values()), max(terms, key=lambda k: (terms[k], k == "memory"))


@pytest.mark.parametrize("device", ["h200", "h100", "a100", "rtx5070ti"])
def test_roofline_against_the_table(device):
    table = json.loads((ROOT / "configs/devices" / f"{device}.json").read_text())
    assert all("source" in v and v["source"] for v in table["peak"].values())
    dev, fns = predict("--device", device, "--size", f"n={N},m={M},k={K}")
    assert dev["memory_bandwidth"]["value"] == table["memory_bandwidth"]["value"]
    assert "measured" in dev["host_memory_bandwidth"]["source"]
    for name, (read, written, ops) in HAND.items():
        f = fns[name]
        time, bound = roof(f, dev, table, read, written, ops)
        assert f["time_s"] == pytest.approx(time, rel=1e-12), name
        assert f["bound"] == bound, name


def test_h200_figures_from_the_issue():
    t = json.loads((ROOT / "configs/devices/h200.json").read_text())
    assert t["memory_bandwidth"]["value"] == 4.8e12 and t["sms"]["value"] == 132
    peaks = {k: v["value"] for k, v in t["peak"].items()}
    assert peaks["tensor_f16"] == peaks["tensor_bf16"] == 989e12
    assert (peaks["tensor_fp8"], peaks["f32"], peaks["f64"]) == (1979e12, 67e12, 34e12)


def test_missing_device_table_lists_the_known_ones(tmp_path):
    r = run([CAIRN, "predict", KERNELS, "--device", "h900"])
    assert r.returncode == 2
    assert "no device table 'h900'" in r.stderr
    for name in ["h200", "h100", "a100", "rtx5070ti", "host"]:
        assert name in r.stderr
    r = run([CAIRN, "predict", KERNELS])
    assert r.returncode == 2 and "--device NAME is required" in r.stderr


def test_tables_travel_inside_the_binary(tmp_path):
    """From another folder, with no configs/ in sight."""
    r = subprocess.run([str(CAIRN), "predict", str(KERNELS), "--device", "a100", "--json"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and json.loads(r.stdout)["device"]["name"] == "a100"


def test_user_table_and_host(tmp_path):
    t = json.loads((ROOT / "configs/devices/h200.json").read_text())
    t["name"], t["memory_bandwidth"]["value"] = "mine", 1e9
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(t))
    t["host_memory_bandwidth"] = {"value": 2e9, "source": "the table's own"}
    path.write_text(json.dumps(t))
    dev, fns = predict("--device", str(path), "--size", f"n={N}")
    # dot reads host views: the table's host bandwidth prices them, not its 1e9
    assert dev["name"] == "mine" and fns["dot"]["time_s"] == pytest.approx(16 * N / 2e9)
    assert dev["host_memory_bandwidth"] == {"value": 2e9, "source": "the table's own"}
    assert fns["scale_dev"]["time_s"] == pytest.approx(8 * N / 1e9)
    path.write_text("{}")
    r = run([CAIRN, "predict", KERNELS, "--device", str(path)])
    assert r.returncode == 2 and "not a device table" in r.stderr
    dev, fns = predict("--device", "host", "--size", f"n={N}")
    assert dev["memory_bandwidth"]["value"] > 1e8 and "measured" in dev["memory_bandwidth"]["source"]
    assert fns["dot"]["time_s"] > 0


def test_usage():
    assert run([CAIRN, "predict", KERNELS, "--device", "h200", "--size", "n"]).returncode == 2
    assert run([CAIRN, "predict", KERNELS, "--device", "h200", "--size", "n=abc"]).returncode == 2
    assert "--device NAME" in run([CAIRN, "predict", "--help"]).stdout


def test_the_multiply_at_the_tensor_peak():
    """numerics.md: 'cairn predict prices it at the published tensor peak, which is a roofline'."""
    s = 4096
    r = run([CAIRN, "predict", pathlib.Path(__file__).parent / "layer.cairn", "--device", "h200", "--json",
             "--size", f"m={s},n={s},k={s}"], check=True)
    f = json.loads(r.stdout)["functions"][0]
    assert f["ops"]["tensor_f16"] == {"formula": "2*k*m*n", "value": 2 * s ** 3}
    # a (m x k) and b (k x n) f16 read, c (m x n) f32 read and written, all on the device
    assert f["read"]["device"]["value"] == 2 * s * s + 2 * s * s + 4 * s * s
    assert f["written"]["device"]["value"] == 4 * s * s
    assert f["bound"] == "tensor_f16"
    assert f["time_s"] == pytest.approx(2 * s ** 3 / 989e12, rel=1e-12)


# ---- issue 22: loop shapes, empty ranges, constants, the host's bandwidth ----

SHAPES = pathlib.Path(__file__).resolve().parent / "shapes.cairn"


def shapes(*args):
    r = run([CAIRN, "predict", SHAPES, "--json", *args], check=True)
    doc = json.loads(r.stdout)
    return doc["device"], {f["function"]: f for f in doc["functions"]}


@pytest.mark.parametrize("n", [0, 1, 7, 100, 4096])
def test_triangle_loops_count_exactly(n):
    """for j in i..n, and let r = n - i; for j in 0..r: n(n+1)/2 reads of 8 bytes and
    additions (the old count was zero: the inner range was priced at i = n)."""
    _, fns = shapes("--device", "h200", "--size", f"n={n}")
    for fn in ("tri", "tri_let"):
        assert fns[fn]["read"]["host"]["value"] == 8 * n * (n + 1) // 2, fn
        assert fns[fn]["ops"]["f64"]["value"] == n * (n + 1) // 2, fn
    assert fns["tri"]["read"]["host"]["formula"] == "4*n*n + 4*n"


@pytest.mark.parametrize("n", [0, 5, 10, 11, 1000])
def test_empty_range_counts_zero(n):
    """for i in 10..n: max(0, n - 10) iterations, never a negative count, and the
    binding roof always named."""
    dev, fns = shapes("--device", "h200", "--size", f"n={n}", "--function", "tail")
    f = fns["tail"]
    assert f["read"]["host"]["value"] == 8 * max(0, n - 10)
    assert f["ops"]["f64"]["value"] == max(0, n - 10)
    assert f["time_s"] >= 0 and f["bound"] in ("memory", "host memory", "f64")


def test_constants_fold():
    """n / T with const T = 16 is the quotient (n / 16), bound by --size n; 1 << 16 is
    65536 (the old count left both as opaque atoms, never bound)."""
    _, fns = shapes("--device", "h200", "--size", "n=1000")
    f = fns["tiles"]
    assert f["read"]["host"] == {"formula": "64*(n / 16)", "value": 64 * (1000 // 16)}
    assert f["ops"]["f32"]["value"] == 16 * (1000 // 16)
    assert fns["wide"]["read"]["host"] == {"formula": "262144", "value": 262144}


def test_host_views_at_the_host_bandwidth(tmp_path):
    """both() reads a host view and a device one: each priced at its memory's bandwidth."""
    t = json.loads((ROOT / "configs/devices/h200.json").read_text())
    t["host_memory_bandwidth"] = {"value": 1e10, "source": "test"}
    path = tmp_path / "split.json"
    path.write_text(json.dumps(t))
    n = 10 ** 6
    _, fns = shapes("--device", str(path), "--size", f"n={n}", "--function", "both")
    f = fns["both"]
    assert f["host_memory_s"] == pytest.approx(4 * n / 1e10)
    assert f["memory_s"] == pytest.approx(8 * n / 4.8e12)
    assert f["bound"] == "host memory" and f["time_s"] == pytest.approx(4 * n / 1e10)
    _, host = shapes("--device", "host", "--size", f"n={n}", "--function", "both")
    assert "host_memory_s" not in host["both"]  # on the host there is one memory


# ---- issue 35: the counts the old predict got wrong ----

def enumerate_rise(n, lo):
    """Python's own count of `for i in 0..n { for j in lo..i { ... } }` iterations."""
    return sum(1 for i in range(n) for _ in range(lo, i))


@pytest.mark.parametrize("n", [0, 1, 2, 7, 100])
def test_rising_triangle_counts_its_iterations(n):
    """for j in 0..i counts n(n-1)/2 iterations (x[j] read and written, an addition);
    the old count was 0 B, 0 ops, 0 s (the range was priced at i = 0). for j in 1..i,
    empty at i = 0, is never below the exact count nor above n*n iterations."""
    _, fns = shapes("--device", "h200", "--size", f"n={n}")
    t = enumerate_rise(n, 0)
    f = fns["rise"]
    assert (f["read"]["host"]["value"], f["written"]["host"]["value"]) == (8 * t, 8 * t)
    assert f["ops"]["f64"]["value"] == t and (t == 0 or f["time_s"] > 0)
    g = fns["rise1"]
    assert enumerate_rise(n, 1) <= g["ops"]["f64"]["value"] <= n * n
    assert g["read"]["host"]["value"] == 8 * g["ops"]["f64"]["value"]


def test_copy_mm_enclose_and_atomics_count_their_memory():
    """copy(b, a) reads a's n elements on the device and writes b's on the host;
    mm_enclose reads a (m*k) and b (k*n) and writes lo and hi (m*n each), beside its
    2mnk operations; an atomic reads and writes its element. The old counts: nothing for
    copy, only the operations of mm_enclose, only the read of an atomic."""
    n, m, k = 1000, 3, 5
    _, fns = shapes("--device", "h200", "--size", f"n={n},m={m},k={k}")
    assert values(fns["move"]["read"]) == {"device": 4 * n}
    assert values(fns["move"]["written"]) == {"host": 4 * n}
    assert values(fns["bracket"]["read"]) == {"host": 8 * (m * k + k * n)}
    assert values(fns["bracket"]["written"]) == {"host": 2 * 8 * m * n}
    assert values(fns["bracket"]["ops"]) == {"f64": 2 * m * n * k}
    assert values(fns["hist"]["read"]) == {"host": (4 + 4) * n}  # x[i] and the bin
    assert values(fns["hist"]["written"]) == {"host": 4 * n}


def test_a_callees_own_variable_is_not_the_callers_size():
    """three's `let mut n = 3` bounds its loop; calls_three has a parameter n. The old
    count spelled both `n`, so --size n=1000 priced three's loop at 1000 iterations and
    calls_three at n*n. Now three's n is its own, never bound by --size."""
    _, fns = shapes("--device", "h200", "--size", "n=1000")
    assert fns["three"]["written"]["host"] == {"formula": "8*(three.n)", "value": None}
    assert fns["calls_three"]["written"]["host"]["formula"] == "8*(three.n)*n"
    assert fns["calls_three"]["time_s"] is None


def test_recursion_past_the_depth_says_so():
    """deep calls itself d times, d unbound: the old count priced 17 calls (136 B) as
    the function's time. Now the time is none, and says why."""
    _, fns = shapes("--device", "h200", "--size", "n=10")
    assert fns["deep"]["time_s"] is None and fns["deep"]["bound"] == "recursion"
    r = run([CAIRN, "predict", SHAPES, "--device", "h200", "--function", "deep"], check=True)
    assert "a call chain deeper than 16 calls (recursion)" in r.stdout, r.stdout
