"""trapmsg.py: the runtime's trap message for each property cairn verify reports, as a
regular expression of the whole message (runtime/cairn_message.h, cairn_checked.h,
cairn_float.h, and the prologue compiler/lower/lower_c.c writes).

A trap names what failed: `integer overflow: 2147483647 + 1 does not fit in i32`,
`division by zero: 100 / 0`, `index 7 out of bounds for extent 5`. Each pattern matches
one property's messages and no other property's, so a replay that traps for another
reason at the same line and column is told apart. Shared by verifylib.py (the tests)
and differential.py (the harness, also run as a script)."""
import re

INT = r"-?\d+"
TYPE = r"[iu](?:8|16|32|64)"
# the shortest round-trip decimal (Python's repr layout), or a device lane's bits
FLOAT = r"(?:-?(?:nan|inf|\d+(?:\.\d+)?(?:e[+-]\d+)?)|bits 0x[0-9a-f]+)"

TRAPS = {
    "integer overflow":
        rf"integer overflow: (?:{INT} (?:\+|-|\*|/|<<) {INT}|-\({INT}\)|the terms sum to {INT}, which)"
        rf" does not fit in {TYPE}",
    "division by zero": rf"division by zero: {INT} [/%] 0",
    "shift count out of range": rf"shift count out of range: {INT} is not in 0\.\.(?:8|16|32|64) \({TYPE}\)",
    "index out of bounds": rf"index {INT} out of bounds for extent \d+",
    "integer conversion out of range": rf"integer conversion out of range: {INT} does not fit in {TYPE}",
    "float to integer conversion out of range":
        rf"float to integer conversion out of range: {FLOAT} does not fit in {TYPE}",
    "view extent mismatch": r"view extent mismatch: \w+ has \d+ elements, its parameter declares \d+",
    "quantize scale not positive and finite": rf"quantize scale must be positive and finite \(scale = {FLOAT}\)",
    "quantize of NaN": r"quantize of NaN: the result would have no nearest value",
    "f8e4m3 overflow": rf"f8e4m3 overflow: {FLOAT} rounds past 448 and the format has no infinity",
    "requires broken": r"requires of \w+ \(line \d+\) does not hold",
    "buffer too large": r"buffer too large",
    "device launch limit": r"too many lanes for one device launch|a block of more than 1024 threads"
                           r"|more blocks than one device launch holds",
}

# a run's trap line: (message, file, line, col)
TRAP_LINE = re.compile(r"trap: (.*) at (.*):(\d+):(\d+)\s*$", re.M)


def says(kind, message):
    """Whether a trap message is one of property `kind`'s."""
    return kind in TRAPS and re.fullmatch(TRAPS[kind], message) is not None


def kind_of(title):
    """The property a verdict's title names ("no integer overflow (*)", "view extents of
    f match", "requires of f kept"), or None."""
    if title.startswith("view extents of"):
        return "view extent mismatch"
    if title.startswith("requires of"):
        return "requires broken"
    if title.startswith("never "):  # "never too many lanes for one device launch"
        return "device launch limit"
    named = [k for k in TRAPS if k in title]  # the longest: "float to integer conversion ..."
    return max(named, key=len) if named else None
