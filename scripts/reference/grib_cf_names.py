"""Writes the CF names tensor-grib gives GRIB parameters (crates/tensor-grib/src/cf_names.tsv):
for every edition and paramId in parameters.tsv, ecCodes' `cfVarName` (the variable name cfgrib gives a
parameter: `t2m` for `2t`) and `cfName` (the CF standard name, `unknown` when none), asked of
the eccodes package on a message carrying that paramId.

    python -m venv env && env/bin/pip install eccodes==2.50.0
    env/bin/python scripts/reference/grib_cf_names.py crates/tensor-grib/src/parameters.tsv \
        crates/tensor-grib/src/cf_names.tsv crates/tensor-grib/src/centres.tsv

It also writes the originating centres a cube's attributes name (`centres.tsv`): for the
centres weather files mostly come from, ecCodes' `centre` abbreviation and
`centreDescription`.
"""

import sys

import eccodes as ec


def names(edition, param_id, conditions):
    """cfVarName and cfName of a message carrying the row's keys (as grib_parameters.py
    builds it), else one carrying its paramId; None when ecCodes takes neither."""
    for how in ("conditions", "paramId"):
        h = ec.codes_grib_new_from_samples(f"regular_ll_sfc_grib{edition}")
        try:
            if how == "paramId":
                ec.codes_set(h, "paramId", int(param_id))
            else:
                keys = dict(conditions)
                if edition == 2 and "centre" not in keys:
                    ec.codes_set(h, "centre", 7)
                if edition == 2 and "typeOfFirstFixedSurface" not in keys:
                    ec.codes_set(h, "typeOfFirstFixedSurface", 100)
                if "typeOfStatisticalProcessing" in keys:
                    ec.codes_set(h, "productDefinitionTemplateNumber", 8)
                for k, v in conditions:
                    # `tablesVersion<=33` holds for the sample's tables (version 4) as it is.
                    if not k.endswith("<"):
                        ec.codes_set(h, k, 98 if k == "centre" else int(v))
                if ec.codes_get_string(h, "paramId") != param_id:
                    continue
            return ec.codes_get_string(h, "cfVarName"), ec.codes_get_string(h, "cfName")
        except ec.GribInternalError:
            continue
        finally:
            ec.codes_release(h)
    return None


CENTRES = [7, 34, 46, 54, 58, 74, 78, 80, 82, 84, 85, 86, 88, 94, 98, 99, 173, 214, 215, 233, 252, 254]


def centres(out):
    with open(out, "w") as f:
        f.write("# centre\tabbreviation\tcentreDescription\n")
        f.write("# Made by scripts/reference/grib_cf_names.py with eccodes %s.\n" % ec.__version__)
        for c in CENTRES:
            h = ec.codes_grib_new_from_samples("GRIB2")
            try:
                ec.codes_set(h, "centre", c)
                abbr, text = ec.codes_get_string(h, "centre"), ec.codes_get_string(h, "centreDescription")
            finally:
                ec.codes_release(h)
            f.write(f"{c}\t{abbr}\t{text}\n")


def main(parameters, out, centres_out):
    rows = {}
    for line in open(parameters):
        if line.startswith("#") or not line.strip():
            continue
        edition, _, param_id, _, _, conds = line.rstrip("\n").split("\t")[:6]
        conditions = [tuple(c.split("=", 1)) for c in conds.split(",") if c]
        rows.setdefault((int(edition), int(param_id)), conditions)
    with open(out, "w") as f:
        f.write("# edition\tparamId\tcfVarName\tcfName\n")
        f.write("# Made by scripts/reference/grib_cf_names.py with eccodes %s.\n" % ec.__version__)
        for (edition, param_id), conditions in sorted(rows.items()):
            got = names(edition, str(param_id), conditions)
            if got is not None:
                f.write(f"{edition}\t{param_id}\t{got[0]}\t{got[1]}\n")
    centres(centres_out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
