"""Writes the parameter table tensor-grib names GRIB fields by (crates/tensor-grib/src/parameters.tsv)
from ecCodes' definition files, for the parameters weather users ask for most, and checks every
row against the eccodes package: a message carrying the row's keys must get the row's
shortName and paramId back.

    python -m venv env && env/bin/pip install eccodes==2.50.0
    env/bin/python scripts/reference/grib_parameters.py ECCODES_SOURCE/definitions \
        crates/tensor-grib/src/parameters.tsv --all

With ``--all`` every parameter the definitions name is kept (WMO's, ECMWF's local ones, and
for GRIB 1 ECMWF's tables and WMO's international ones), not only the most asked-for ones
listed in ``WANTED``.

Each row: edition, shortName, paramId, name, units, and the conditions (key=value, comma
separated; `tablesVersion<=33` for the concepts ecCodes keeps for ECMWF's older tables) a
field must meet. A field takes the row whose conditions all hold and are the
most in number, as ecCodes' concepts do.
"""

import re
import sys
from pathlib import Path

import eccodes as ec

WANTED = """2t 2d 10u 10v 100u 100v t u v w z q r gh msl sp tp tcc lcc mcc hcc sst skt sd
ssrd strd ssr str cp lsp 10fg ci lsm vo d pv tcwv tcw blh cape sf ro swvl1 stl1 e pev mx2t
mn2t lnsp cc ciwc clwc o3 sp orog tciw tclw""".split()

ALL = "--all" in sys.argv


def wanted(short):
    """Whether a parameter's row goes into the table."""
    if ALL:
        return bool(short) and short not in ("unknown", "~")
    return short in WANTED


ENTRY = re.compile(r"'([^']*)'\s*=\s*\{([^}]*)\}", re.S)


def concepts(path):
    """(value, conditions) per entry of a concept file."""
    out = []
    for value, body in ENTRY.findall(Path(path).read_text()):
        conds = []
        for part in body.split(";"):
            part = part.strip()
            if not part:
                continue
            k, _, v = part.partition("=")
            conds.append((k.strip(), v.strip()))
        out.append((value, tuple(sorted(conds))))
    return out


def grib2(defs, local=None):
    """WMO's concepts, or a centre's local ones (`local`: the directory under
    localConcepts and the centre's code, which becomes a condition)."""
    by = {}
    base = defs / "grib2" if local is None else defs / "grib2" / "localConcepts" / local[0]
    for kind in ("shortName", "paramId", "name", "units"):
        # The current concepts, and those kept for tables up to version 33 and for legacy
        # encodings, where the definitions have them.
        # ecCodes reads the last two for ECMWF's messages whose tables are up to version 33
        # (its MTG2 switch): they carry those two conditions.
        for variant in ("", ".lte33", ".legacy"):
            path = base / f"{kind}{variant}.def"
            if not path.exists():
                continue
            extra = (("centre", "98"), ("tablesVersion<=", "33")) if variant else ()
            if local is not None:
                extra += (("centre", local[1]),)
            for value, conds in concepts(path):
                conds = tuple(sorted(set(conds + extra)))
                by.setdefault(conds, {})[kind] = value
    rows = []
    for conds, v in by.items():
        if wanted(v.get("shortName")) and "paramId" in v:
            if any(not c[1].lstrip("-").isdigit() for c in conds):
                continue
            rows.append((2, v["shortName"], v["paramId"], v.get("name", ""), v.get("units", ""), conds))
    return rows


def grib1(defs):
    """Edition 1's parameter tables: ECMWF's local ones (`2.98.<version>.table`, every
    version) and WMO's international ones (`2.0.<version>.table`, the codes below 128 that
    every centre shares). Only the code and the shortName are taken from a table; the
    paramId, name and units are asked of ecCodes when the row is checked."""
    rows = []
    tables = sorted((defs / "grib1").glob("2.98.*.table")) + sorted((defs / "grib1").glob("2.0.*.table"))
    for table in tables:
        version = table.name.split(".")[2]
        wmo = table.name.startswith("2.0.")
        for line in table.read_text().splitlines():
            m = re.match(r"(\d+)\s+(\S+)\s", line)
            if not m:
                continue
            code, short = m.groups()
            if wmo and int(code) >= 128:
                continue
            if wanted(short):
                conds = (("indicatorOfParameter", code), ("table2Version", version))
                rows.append((1, short, code, "", "", conds))
    return rows


def check(row):
    """Whether ecCodes reads the row's keys as the row's shortName and paramId (and what it
    reads them as); for GRIB 1, also the name and units ecCodes gives (from its paramId
    concepts, not the code table's text, whose parentheses are ambiguous)."""
    edition, short, param, _, _, conds = row
    h = ec.codes_grib_new_from_samples(f"regular_ll_sfc_grib{edition}")
    if edition == 2 and ("centre", "98") not in conds:
        ec.codes_set(h, "centre", 7)  # not ECMWF: its local concepts do not apply
    try:
        keys = dict(conds)
        if edition == 2 and "typeOfFirstFixedSurface" not in keys:
            # A surface no row asks for, so rows without one are not outbid.
            ec.codes_set(h, "typeOfFirstFixedSurface", 100)
        if "typeOfStatisticalProcessing" in keys:
            ec.codes_set(h, "productDefinitionTemplateNumber", 8)
        for k, v in conds:
            # The sample's tables are version 4: a tablesVersion<=33 row holds as it is.
            if k != "centre" and not k.endswith("<="):
                ec.codes_set(h, k, int(v))
        got = (ec.codes_get_string(h, "shortName"), ec.codes_get_string(h, "paramId"))
        named = (ec.codes_get_string(h, "name"), ec.codes_get_string(h, "units"))
    except ec.GribInternalError as e:
        got, named = ("error", str(e)), None
    finally:
        ec.codes_release(h)
    if edition == 1:
        # The paramId too is ecCodes' (the tables give codes, not paramIds).
        return got[0] == short, got, named
    return got == (short, param), got, named


def main(defs, out):
    defs = Path(defs)
    rows = sorted(set(grib2(defs) + grib2(defs, ("ecmf", "98")) + grib1(defs)), key=lambda r: (r[0], r[1], r[5]))
    kept = []
    for r in rows:
        ok, got, named = check(r)
        if ok:
            if r[0] == 1:
                r = (r[0], r[1], got[1], named[0], named[1], r[5])
            kept.append(r)
        else:
            print("left out (ecCodes reads it as %s/%s):" % got, r[:3], r[5], file=sys.stderr)
    with open(out, "w") as f:
        f.write("# edition\tshortName\tparamId\tname\tunits\tconditions\n")
        f.write("# Made by scripts/reference/grib_parameters.py from ecCodes' definitions;\n")
        f.write("# every row checked against eccodes %s.\n" % ec.__version__)
        for e, s, p, n, u, c in kept:
            cond = ",".join(f"{k}{v}" if k.endswith("<=") else f"{k}={v}" for k, v in c)
            f.write("\t".join([str(e), s, p, n, u, cond]) + "\n")
    print(len(kept), "rows")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--all"]
    main(args[0], args[1])
