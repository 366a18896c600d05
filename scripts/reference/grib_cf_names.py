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


def names(edition, param_id):
    h = ec.codes_grib_new_from_samples(f"regular_ll_sfc_grib{edition}")
    try:
        ec.codes_set(h, "paramId", int(param_id))
        return ec.codes_get_string(h, "cfVarName"), ec.codes_get_string(h, "cfName")
    finally:
        ec.codes_release(h)


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
    ids = set()
    for line in open(parameters):
        if line.startswith("#") or not line.strip():
            continue
        edition, _, param_id = line.split("\t")[:3]
        ids.add((int(edition), int(param_id)))
    with open(out, "w") as f:
        f.write("# edition\tparamId\tcfVarName\tcfName\n")
        f.write("# Made by scripts/reference/grib_cf_names.py with eccodes %s.\n" % ec.__version__)
        for edition, param_id in sorted(ids):
            var, cf = names(edition, param_id)
            f.write(f"{edition}\t{param_id}\t{var}\t{cf}\n")


    centres(centres_out)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
