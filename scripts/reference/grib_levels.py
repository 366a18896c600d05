"""Writes the GRIB 2 level types tensor-grib names fields by (crates/tensor-grib/src/levels.tsv)
from ecCodes' `typeOfLevelConcept.def`: every level type the concept defines by the types of
its first and second fixed surfaces alone (the last entry for a pair wins, as ecCodes' get
does), each row checked against the eccodes package — a message with those two surface
types reads back as that `typeOfLevel`. Pressure levels (surface type 100 alone) are named
in code, by the level's value (hPa or Pa), as ecCodes' `pressureUnits` does.

    python -m venv env && env/bin/pip install eccodes==2.50.0
    env/bin/python scripts/reference/grib_levels.py ECCODES_SOURCE/definitions \\
        crates/tensor-grib/src/levels.tsv
"""

import re
import sys
from pathlib import Path

import eccodes as ec

ENTRY = re.compile(r"'([^']*)'\s*=\s*\{([^}]*)\}", re.S)


def pairs(defs):
    found = {}
    for name, body in ENTRY.findall((Path(defs) / "grib2" / "typeOfLevelConcept.def").read_text()):
        conds = dict(
            (k.strip(), v.strip()) for k, _, v in (p.partition("=") for p in body.split(";") if p.strip())
        )
        if set(conds) == {"typeOfFirstFixedSurface", "typeOfSecondFixedSurface"} and all(
            v.isdigit() for v in conds.values()
        ):
            found[(int(conds["typeOfFirstFixedSurface"]), int(conds["typeOfSecondFixedSurface"]))] = name
    return found


def check(first, second, name):
    h = ec.codes_grib_new_from_samples("GRIB2")
    try:
        ec.codes_set(h, "typeOfFirstFixedSurface", first)
        ec.codes_set(h, "typeOfSecondFixedSurface", second)
        return ec.codes_get_string(h, "typeOfLevel") == name
    except ec.GribInternalError:
        return False
    finally:
        ec.codes_release(h)


def main(defs, out):
    rows = [(f, s, n) for (f, s), n in sorted(pairs(defs).items()) if f != 100 or s != 255]
    kept = [r for r in rows if check(*r)]
    for r in rows:
        if r not in kept:
            print("left out (ecCodes reads it otherwise):", r, file=sys.stderr)
    with open(out, "w") as f:
        f.write("# typeOfFirstFixedSurface\ttypeOfSecondFixedSurface\ttypeOfLevel\n")
        f.write("# Made by scripts/reference/grib_levels.py from ecCodes' definitions;\n")
        f.write("# every row checked against eccodes %s.\n" % ec.__version__)
        for first, second, name in kept:
            f.write(f"{first}\t{second}\t{name}\n")
    print(len(kept), "rows")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
