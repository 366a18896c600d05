"""GRIB files written by ecCodes for the cube tests: each function writes one file and returns
its path. The values are a smooth field per message, different in every message, packed with
16-bit simple packing unless said otherwise."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def _ec():
    import eccodes

    return eccodes


def _field(ni: int, nj: int, seed: float) -> np.ndarray:
    j, i = np.mgrid[0:nj, 0:ni]
    return 250.0 + 20.0 * np.sin(i / 3.0 + seed) * np.cos(j / 5.0 - seed / 7.0) + seed / 10.0


def _write(path: Path, handles: list) -> Path:
    ec = _ec()
    with open(path, "wb") as out:
        for h in handles:
            ec.codes_write(h, out)
            ec.codes_release(h)
    return path


def _message(sample: str, keys: dict, values: np.ndarray | None = None, grid: dict | None = None):
    ec = _ec()
    h = ec.codes_grib_new_from_samples(sample)
    for k, v in (grid or {}).items():
        ec.codes_set(h, k, v)
    for k, v in keys.items():
        if isinstance(v, float):
            ec.codes_set_double(h, k, v)
        else:
            ec.codes_set(h, k, v)
    if values is not None:
        ec.codes_set_values(h, values.ravel())
    return h


def _regular(ni: int, nj: int, lat1: float, lon1: float, d: float, west=False, north_up=False) -> dict:
    lat2 = lat1 + d * (nj - 1) if north_up else lat1 - d * (nj - 1)
    lon2 = lon1 - d * (ni - 1) if west else lon1 + d * (ni - 1)
    return {
        "Ni": ni,
        "Nj": nj,
        "iScansNegatively": int(west),
        "jScansPositively": int(north_up),
        "latitudeOfFirstGridPointInDegrees": lat1,
        "longitudeOfFirstGridPointInDegrees": lon1,
        "latitudeOfLastGridPointInDegrees": lat2,
        "longitudeOfLastGridPointInDegrees": lon2,
        "iDirectionIncrementInDegrees": d,
        "jDirectionIncrementInDegrees": d,
    }


def ensemble(path: Path, params=("t", "u"), members=5, steps=(0, 6, 12, 18), levels=(1000, 850, 700, 500, 250), ni=36, nj=19, d=10.0) -> Path:
    """Parameters × ensemble members × steps × pressure levels (template 4.1)."""
    grid = _regular(ni, nj, 90.0, 0.0, d)
    handles = []
    seed = 0.0
    for p in params:
        for m in range(1, members + 1):
            for s in steps:
                for lev in levels:
                    seed += 1.0
                    keys = {
                        "productDefinitionTemplateNumber": 1,
                        "typeOfLevel": "isobaricInhPa",
                        "level": lev,
                        "shortName": p,
                        "dataDate": 20261120,
                        "dataTime": 0,
                        "stepUnits": 1,
                        "forecastTime": s,
                        "perturbationNumber": m,
                        "numberOfForecastsInEnsemble": members,
                        "typeOfEnsembleForecast": 3,
                        "bitsPerValue": 16,
                    }
                    handles.append(_message("GRIB2", keys, _field(ni, nj, seed), grid))
    return _write(path, handles)


def analyses(path: Path, dates=((20261120, 0), (20261120, 1200), (20261121, 0)), ni=12, nj=7, d=30.0) -> Path:
    """Surface fields at several analysis times: `time` becomes a dimension."""
    grid = _regular(ni, nj, 90.0, 0.0, d)
    handles = []
    for k, (date, time) in enumerate(dates):
        for p in ("2t", "msl"):
            keys = {"shortName": p, "dataDate": date, "dataTime": time, "bitsPerValue": 16}
            handles.append(_message("GRIB2", keys, _field(ni, nj, k * 3.0 + len(p)), grid))
    return _write(path, handles)


def accumulations(path: Path, ni=12, nj=7, d=30.0) -> Path:
    """Total precipitation over 0-6, 0-12 and 0-18 hours (template 4.8)."""
    grid = _regular(ni, nj, 90.0, 0.0, d)
    handles = []
    for k, end in enumerate((6, 12, 18)):
        keys = {
            "productDefinitionTemplateNumber": 8,
            "shortName": "tp",
            "dataDate": 20261120,
            "dataTime": 0,
            "stepUnits": 1,
            "stepRange": f"0-{end}",
            "bitsPerValue": 16,
        }
        handles.append(_message("GRIB2", keys, np.abs(_field(ni, nj, k) - 250.0) / 1000.0, grid))
    return _write(path, handles)


def mixed_levels(path: Path, ni=12, nj=7, d=30.0) -> Path:
    """Pressure levels, 2 m and 10 m fields and the surface in one file: several cubes."""
    grid = _regular(ni, nj, 90.0, 0.0, d)
    handles = []
    for k, (p, tol, lev) in enumerate(
        [
            ("t", "isobaricInhPa", 850),
            ("t", "isobaricInhPa", 500),
            ("u", "isobaricInhPa", 850),
            ("u", "isobaricInhPa", 500),
            ("2t", "heightAboveGround", 2),
            ("10u", "heightAboveGround", 10),
            ("sp", "surface", 0),
        ]
    ):
        keys = {"typeOfLevel": tol, "level": lev, "shortName": p, "dataDate": 20261120, "bitsPerValue": 16}
        handles.append(_message("GRIB2", keys, _field(ni, nj, k), grid))
    return _write(path, handles)


def bitmap(path: Path, ni=12, nj=7, d=30.0) -> Path:
    """Sea surface temperature with land points missing (a bitmap)."""
    grid = _regular(ni, nj, 90.0, 0.0, d)
    values = _field(ni, nj, 2.0)
    values[::2, ::3] = 9999.0
    keys = {"shortName": "sst", "dataDate": 20261120, "bitsPerValue": 16, "bitmapPresent": 1, "missingValue": 9999.0}
    return _write(path, [_message("GRIB2", keys, values, grid)])


def scanning(path: Path, ni=12, nj=7, d=30.0) -> Path:
    """A field stored south to north and east to west."""
    grid = _regular(ni, nj, -90.0, 330.0, d, west=True, north_up=True)
    keys = {"shortName": "2t", "dataDate": 20261120, "bitsPerValue": 16}
    return _write(path, [_message("GRIB2", keys, _field(ni, nj, 1.0), grid)])


def gaussian(path: Path, n=8, lon1=0.0) -> Path:
    """A regular Gaussian grid (N8: 16 latitudes, 32 longitudes), its rows from ``lon1``."""
    ec = _ec()
    lats = ec.codes_get_gaussian_latitudes(n) if hasattr(ec, "codes_get_gaussian_latitudes") else None
    grid = {
        "gridType": "regular_gg",
        "N": n,
        "Ni": 4 * n,
        "Nj": 2 * n,
        "iDirectionIncrementInDegrees": 360.0 / (4 * n),
        "longitudeOfFirstGridPointInDegrees": lon1,
        "longitudeOfLastGridPointInDegrees": (lon1 - 360.0 / (4 * n)) % 360.0,
    }
    if lats is not None:
        grid["latitudeOfFirstGridPointInDegrees"] = float(lats[0])
        grid["latitudeOfLastGridPointInDegrees"] = -float(lats[0])
    keys = {"shortName": "2t", "dataDate": 20261120, "bitsPerValue": 16}
    return _write(path, [_message("GRIB2", keys, _field(4 * n, 2 * n, 3.0), grid)])


def grib1(path: Path, ni=12, nj=7, d=30.0) -> Path:
    """Edition 1: temperature on three pressure levels at two steps."""
    grid = _regular(ni, nj, 90.0, 0.0, d)
    handles = []
    k = 0
    for step in (0, 24):
        for lev in (850, 500, 250):
            k += 1
            keys = {
                "typeOfLevel": "isobaricInhPa",
                "level": lev,
                "shortName": "t",
                "dataDate": 20261120,
                "dataTime": 1200,
                "stepRange": str(step),
                "bitsPerValue": 16,
            }
            handles.append(_message("GRIB1", keys, _field(ni, nj, k), grid))
    return _write(path, handles)


def _across_greenwich(path: Path, sample: str, lon1: float, d: float, ni: int, west=False) -> Path:
    """Two fields on a regular grid that crosses 0° (its first longitude east of its last,
    or west of it scanning westward), as ecCodes writes it: longitudes coded 0 to 360."""
    grid = _regular(ni, 7, 60.0, lon1, d, west=west)
    grid["longitudeOfLastGridPointInDegrees"] %= 360.0
    keys = {"dataDate": 20261120, "bitsPerValue": 16}
    handles = [_message(sample, dict(keys, shortName=p), _field(ni, 7, k), grid) for k, p in enumerate(("2t", "msl"))]
    return _write(path, handles)


def across_greenwich(path: Path) -> Path:
    """330° to 90° by 10°: ecCodes and cfgrib give −30° to 90°."""
    return _across_greenwich(path, "GRIB2", 330.0, 10.0, 13)


def across_greenwich_grib1(path: Path) -> Path:
    """Edition 1, 340° to 50° by 2.5°."""
    return _across_greenwich(path, "GRIB1", 340.0, 2.5, 29)


def across_greenwich_west(path: Path) -> Path:
    """Scanning westward from 60° to 330° by 10°."""
    return _across_greenwich(path, "GRIB2", 60.0, 10.0, 10, west=True)


def gaussian_across_greenwich(path: Path) -> Path:
    """A regular Gaussian grid whose rows start at 180° (ecCodes: −180° to 168.75°)."""
    return gaussian(path, lon1=180.0)


ALL = {
    "across_greenwich": across_greenwich,
    "across_greenwich_grib1": across_greenwich_grib1,
    "across_greenwich_west": across_greenwich_west,
    "gaussian_across_greenwich": gaussian_across_greenwich,
    "ensemble": ensemble,
    "analyses": analyses,
    "accumulations": accumulations,
    "mixed_levels": mixed_levels,
    "bitmap": bitmap,
    "scanning": scanning,
    "gaussian": gaussian,
    "grib1": grib1,
}


def reduced_gaussian(path: Path) -> Path:
    """ecCodes' reduced Gaussian sample (N32, 6114 points), two parameters."""
    handles = []
    for k, p in enumerate(("2t", "msl")):
        h = _message("reduced_gg_sfc_grib2", {"shortName": p, "dataDate": 20261120, "bitsPerValue": 16})
        n = _ec().codes_get(h, "numberOfDataPoints")
        _ec().codes_set_values(h, 280.0 + np.sin(np.arange(n) / 50.0 + k))
        handles.append(h)
    return _write(path, handles)


ALL["reduced_gaussian"] = reduced_gaussian


def _plane(path: Path, grid_type: str, keys: dict, ni=14, nj=11) -> Path:
    ec = _ec()
    h = ec.codes_grib_new_from_samples("GRIB2")
    ec.codes_set(h, "gridType", grid_type)
    for k, v in {"Ni" if grid_type in ("rotated_ll", "mercator") else "Nx": ni,
                 "Nj" if grid_type in ("rotated_ll", "mercator") else "Ny": nj, **keys}.items():
        ec.codes_set(h, k, v)
    ec.codes_set(h, "shortName", "2t")
    ec.codes_set(h, "dataDate", 20261120)
    ec.codes_set(h, "bitsPerValue", 16)
    ec.codes_set_values(h, _field(ni, nj, 4.0).ravel())
    return _write(path, [h])


def rotated(path: Path) -> Path:
    """A rotated lat/lon grid over Europe (COSMO's pole)."""
    return _plane(path, "rotated_ll", {
        "shapeOfTheEarth": 6,
        "latitudeOfFirstGridPointInDegrees": -10.0, "longitudeOfFirstGridPointInDegrees": -15.0,
        "latitudeOfLastGridPointInDegrees": 10.0, "longitudeOfLastGridPointInDegrees": 11.0,
        "iDirectionIncrementInDegrees": 2.0, "jDirectionIncrementInDegrees": 2.0, "jScansPositively": 1,
        "latitudeOfSouthernPoleInDegrees": -40.0, "longitudeOfSouthernPoleInDegrees": 10.0,
    })


def lambert(path: Path) -> Path:
    """A Lambert conformal grid over North America (HRRR-like, 30 km)."""
    return _plane(path, "lambert", {
        "shapeOfTheEarth": 6, "latitudeOfFirstGridPointInDegrees": 21.138,
        "longitudeOfFirstGridPointInDegrees": 237.28, "LaDInDegrees": 38.5, "LoVInDegrees": 262.5,
        "Latin1InDegrees": 38.5, "Latin2InDegrees": 38.5, "DxInMetres": 30000.0, "DyInMetres": 30000.0,
        "jScansPositively": 1,
    })


def lambert_secant(path: Path) -> Path:
    """A Lambert conformal grid on two standard parallels over Europe."""
    return _plane(path, "lambert", {
        "shapeOfTheEarth": 6, "latitudeOfFirstGridPointInDegrees": 35.0,
        "longitudeOfFirstGridPointInDegrees": 350.0, "LaDInDegrees": 46.0, "LoVInDegrees": 2.0,
        "Latin1InDegrees": 30.0, "Latin2InDegrees": 60.0, "DxInMetres": 50000.0, "DyInMetres": 50000.0,
        "jScansPositively": 1,
    })


def polar(path: Path) -> Path:
    """A polar stereographic grid over the Arctic."""
    return _plane(path, "polar_stereographic", {
        "shapeOfTheEarth": 6, "latitudeOfFirstGridPointInDegrees": 60.0,
        "longitudeOfFirstGridPointInDegrees": 300.0, "LaDInDegrees": 60.0,
        "orientationOfTheGridInDegrees": 249.0, "DxInMetres": 100000.0, "DyInMetres": 100000.0,
        "jScansPositively": 1,
    })


def mercator(path: Path) -> Path:
    """A Mercator grid over the tropical Pacific."""
    return _plane(path, "mercator", {
        "shapeOfTheEarth": 6, "latitudeOfFirstGridPointInDegrees": -10.0,
        "longitudeOfFirstGridPointInDegrees": 160.0, "LaDInDegrees": 20.0,
        "latitudeOfLastGridPointInDegrees": 9.0, "longitudeOfLastGridPointInDegrees": 189.0,
        "DiInMetres": 250000.0, "DjInMetres": 200000.0, "jScansPositively": 1,
    })


PLANES = {"rotated": rotated, "lambert": lambert, "lambert_secant": lambert_secant, "polar": polar, "mercator": mercator}


def forecasts(path: Path, ni=12, nj=7, d=30.0) -> Path:
    """Two forecast runs × three steps: `time` and `step` both dimensions, `valid_time` 2-D."""
    grid = _regular(ni, nj, 90.0, 0.0, d)
    handles = []
    for k, (date, time) in enumerate(((20261120, 0), (20261120, 1200))):
        for s in (0, 12, 24):
            keys = {"shortName": "2t", "dataDate": date, "dataTime": time, "stepUnits": 1, "forecastTime": s, "bitsPerValue": 16}
            handles.append(_message("GRIB2", keys, _field(ni, nj, k * 10.0 + s), grid))
    return _write(path, handles)


def model_levels(path: Path, ni=12, nj=7, d=30.0) -> Path:
    """Temperature on hybrid levels and soil temperature in a layer below the ground."""
    grid = _regular(ni, nj, 90.0, 0.0, d)
    handles = []
    for lev in (1, 2, 137):
        keys = {"typeOfLevel": "hybrid", "level": lev, "shortName": "t", "dataDate": 20261120, "bitsPerValue": 16}
        handles.append(_message("GRIB2", keys, _field(ni, nj, lev), grid))
    return _write(path, handles)


ALL["forecasts"] = forecasts
ALL["model_levels"] = model_levels


PARAMETERS = """r gh 2d tcc cape 10si tcwv lsm z pv ssrd slhf sshf e ro asn rsn mx2t 10fg sf cp lcc
bld stl1 swvl1 tp i10fg mn2t skt sst ci tciw 100u 200v hcc cin crr deg0l hwbt0 ptype""".split()


def parameters(path: Path) -> Path:
    """One field of each of 40 parameters on their own level types (ECMWF's encodings, as
    ecCodes chooses them from the short name)."""
    handles = []
    for i, p in enumerate(PARAMETERS):
        keys = {"shortName": p, "dataDate": 20261120, "bitsPerValue": 16}
        handles.append(_message("GRIB2", keys, np.linspace(0.0, 1.0, 496) + i))
    return _write(path, handles)


def _small(path: Path, sample: str, messages: list[dict]) -> Path:
    """One small field (12 × 7, 30°) per key set."""
    grid = _regular(12, 7, 90.0, 0.0, 30.0)
    return _write(path, [_message(sample, k, _field(12, 7, i * 1.7), grid) for i, k in enumerate(messages)])


def _on_fixed_surface(path: Path, surface: int, levels: list[tuple[int, int]]) -> Path:
    """Temperature on first fixed surfaces of type ``surface``, one field per ``(scale factor,
    scaled value)``."""
    return _small(path, "GRIB2", [
        {"shortName": "t", "typeOfFirstFixedSurface": surface, "scaleFactorOfFirstFixedSurface": f,
         "scaledValueOfFirstFixedSurface": v, "dataDate": 20261120}
        for f, v in levels
    ])


def potential_vorticity(path: Path) -> Path:
    """Temperature on the 1.5 and 2 PVU surfaces (type 109: the level is in PV units, the
    scale factor less 9, as ecCodes gives it)."""
    return _on_fixed_surface(path, 109, [(12, 1500), (9, 2)])


def odd_levels(path: Path) -> Path:
    """Pressure levels of 1250 and 850 Pa (ecCodes' `level`: whole hectopascals, truncated)."""
    return _on_fixed_surface(path, 100, [(0, 1250), (0, 850)])


def heights_in_millimetres(path: Path) -> Path:
    """Heights above sea of 1.5 m, 15 mm and 7 mm (scale factor 3)."""
    return _on_fixed_surface(path, 103, [(3, 1500), (3, 15), (3, 7)])


def minutes(path: Path) -> Path:
    """2 m temperature at steps of 0, 30 and 90 minutes."""
    return _small(path, "GRIB2", [
        {"shortName": "2t", "typeOfLevel": "heightAboveGround", "level": 2, "dataDate": 20261120,
         "stepUnits": 0, "forecastTime": m}
        for m in (0, 30, 90)
    ])


def times_and_steps(path: Path) -> Path:
    """Two dates × two times × two steps of one field."""
    return _small(path, "GRIB2", [
        {"shortName": "t", "typeOfLevel": "isobaricInhPa", "level": 500, "dataDate": d, "dataTime": t,
         "stepRange": str(s)}
        for d in (20261120, 20261121) for t in (0, 1200) for s in (0, 6)
    ])


def grib1_ensemble(path: Path) -> Path:
    """Edition 1, ECMWF's local definition 1: three perturbed members."""
    return _small(path, "GRIB1", [
        {"shortName": "t", "typeOfLevel": "isobaricInhPa", "level": 500, "dataDate": 20261120,
         "localDefinitionNumber": 1, "marsType": "pf", "number": n}
        for n in (1, 2, 3)
    ])


def grib1_surface_accumulations(path: Path) -> Path:
    """Edition 1: total precipitation over 0-6 and 0-12 hours."""
    return _small(path, "GRIB1", [
        {"shortName": "tp", "typeOfLevel": "surface", "dataDate": 20261120, "stepType": "accum",
         "stepRange": f"0-{e}"}
        for e in (6, 12)
    ])


def grib1_model_levels(path: Path) -> Path:
    """Edition 1: temperature on hybrid levels 1 to 3."""
    return _small(path, "GRIB1", [
        {"shortName": "t", "typeOfLevel": "hybrid", "level": lev, "dataDate": 20261120} for lev in (1, 2, 3)
    ])


def level_types(path: Path) -> Path:
    """One field on each of the mean sea level, the whole atmosphere and the surface (three
    cubes; opened with a filter each)."""
    return _small(path, "GRIB2", [
        {"shortName": "msl", "typeOfLevel": "meanSea", "dataDate": 20261120, "dataTime": 600},
        {"shortName": "tcwv", "typeOfLevel": "entireAtmosphere", "dataDate": 20261120},
        {"shortName": "swvl1", "dataDate": 20261120},
    ])


MORE = {
    "potential_vorticity": potential_vorticity,
    "odd_levels": odd_levels,
    "heights_in_millimetres": heights_in_millimetres,
    "minutes": minutes,
    "times_and_steps": times_and_steps,
    "grib1_ensemble": grib1_ensemble,
    "grib1_surface_accumulations": grib1_surface_accumulations,
    "grib1_model_levels": grib1_model_levels,
}

def max_temperature_6h(path: Path) -> Path:
    """`mx2t6` (template 4.8, maximum over 6 hours), told from `mx2t` by the period's length."""
    return _small(path, "GRIB2", [
        {"productDefinitionTemplateNumber": 8, "shortName": "mx2t6", "dataDate": 20261120, "stepRange": f"{s}-{s + 6}"}
        for s in (0, 6)
    ])


def ensemble_accumulations(path: Path) -> Path:
    """Template 4.11: precipitation of two members over 0-6 and 0-12 hours."""
    return _small(path, "GRIB2", [
        {"productDefinitionTemplateNumber": 11, "shortName": "tp", "dataDate": 20261120, "stepRange": f"0-{e}",
         "perturbationNumber": n, "numberOfForecastsInEnsemble": 2, "typeOfEnsembleForecast": 3}
        for n in (1, 2) for e in (6, 12)
    ])


def soil_layers(path: Path) -> Path:
    """Soil moisture in the 0-7 and 7-28 cm layers (a first and a second surface)."""
    return _small(path, "GRIB2", [
        {"shortName": "vsw", "typeOfFirstFixedSurface": 106, "scaleFactorOfFirstFixedSurface": 2,
         "scaledValueOfFirstFixedSurface": a, "typeOfSecondFixedSurface": 106, "scaleFactorOfSecondFixedSurface": 2,
         "scaledValueOfSecondFixedSurface": b, "dataDate": 20261120}
        for a, b in ((0, 7), (7, 28))
    ])


def control_and_members(path: Path) -> Path:
    """The control forecast (member 0) and two perturbed members."""
    return _small(path, "GRIB2", [
        {"productDefinitionTemplateNumber": 1, "shortName": "t", "typeOfLevel": "isobaricInhPa", "level": 500,
         "dataDate": 20261120, "perturbationNumber": n, "numberOfForecastsInEnsemble": 3,
         "typeOfEnsembleForecast": 1 if n == 0 else 3}
        for n in (0, 1, 2)
    ])


def odd_times(path: Path) -> Path:
    """Analyses at 00:30 and 12:30."""
    return _small(path, "GRIB2", [
        {"shortName": "t", "typeOfLevel": "isobaricInhPa", "level": 500, "dataDate": 20261120, "dataTime": t}
        for t in (30, 1230)
    ])


def pressures_in_pa(path: Path) -> Path:
    """Levels of 50 and 20 Pa: `isobaricInPa`."""
    return _on_fixed_surface(path, 100, [(0, 50), (0, 20)])


def one_unknown_parameter(path: Path) -> Path:
    """A parameter outside ecCodes' tables (category 250): `unknown`, as cfgrib names it."""
    return _small(path, "GRIB2", [
        {"discipline": 0, "parameterCategory": 250, "parameterNumber": 3, "typeOfLevel": "surface",
         "dataDate": 20261120}
    ])


def grib1_two_metre_steps(path: Path) -> Path:
    """Edition 1: 2 m temperature at steps 0 and 12."""
    return _small(path, "GRIB1", [
        {"shortName": "2t", "typeOfLevel": "heightAboveGround", "level": 2, "dataDate": 20261120,
         "stepRange": str(s)}
        for s in (0, 12)
    ])


def grib1_ensemble_accumulations(path: Path) -> Path:
    """Edition 1: two members' precipitation over 0-6 and 0-12 hours."""
    return _small(path, "GRIB1", [
        {"shortName": "tp", "typeOfLevel": "surface", "dataDate": 20261120, "stepType": "accum",
         "stepRange": f"0-{e}", "localDefinitionNumber": 1, "marsType": "pf", "number": n}
        for n in (1, 2) for e in (6, 12)
    ])


MORE.update({
    "max_temperature_6h": max_temperature_6h,
    "ensemble_accumulations": ensemble_accumulations,
    "soil_layers": soil_layers,
    "control_and_members": control_and_members,
    "odd_times": odd_times,
    "pressures_in_pa": pressures_in_pa,
    "one_unknown_parameter": one_unknown_parameter,
    "grib1_two_metre_steps": grib1_two_metre_steps,
    "grib1_ensemble_accumulations": grib1_ensemble_accumulations,
})


def _grib1_plane(path: Path, representation: int, keys: dict, sample: str = "GRIB1") -> Path:
    """One edition 1 field on a projection (data representation type 1 Mercator, 3 Lambert,
    5 polar stereographic)."""
    ec = _ec()
    h = ec.codes_grib_new_from_samples(sample)
    if sample == "GRIB1":
        ec.codes_set(h, "dataRepresentationType", representation)
    for k, v in {"shortName": "t", "level": 500, "dataDate": 20261120, **keys}.items():
        if isinstance(v, float):
            ec.codes_set_double(h, k, v)
        else:
            ec.codes_set(h, k, v)
    n = ec.codes_get(h, "numberOfDataPoints")
    ec.codes_set_values(h, 250.0 + 10.0 * np.sin(np.arange(n) / 7.0))
    return _write(path, [h])


def grib1_lambert(path: Path) -> Path:
    return _grib1_plane(path, 3, {
        "Nx": 14, "Ny": 11, "latitudeOfFirstGridPointInDegrees": 30.0, "longitudeOfFirstGridPointInDegrees": 350.0,
        "LoVInDegrees": 10.0, "DxInMetres": 50000, "DyInMetres": 50000, "Latin1InDegrees": 45.0,
        "Latin2InDegrees": 45.0,
    })


def grib1_mercator(path: Path) -> Path:
    return _grib1_plane(path, 1, {
        "Ni": 14, "Nj": 11, "latitudeOfFirstGridPointInDegrees": -20.0, "longitudeOfFirstGridPointInDegrees": 100.0,
        "latitudeOfLastGridPointInDegrees": 20.0, "longitudeOfLastGridPointInDegrees": 140.0,
        "LaDInDegrees": 20.0, "DiInMetres": 300000, "DjInMetres": 400000,
    })


def grib1_polar(path: Path) -> Path:
    return _grib1_plane(path, 5, {}, sample="polar_stereographic_pl_grib1")


def _scanning(write, i: int, j: int):
    """`write`, its field's scanning flags then set to `iScansNegatively=i`,
    `jScansPositively=j` (ecCodes places a projection's points the same way whatever they
    say)."""

    def rewritten(path: Path) -> Path:
        ec = _ec()
        write(path)
        with open(path, "rb") as f:
            h = ec.codes_grib_new_from_file(f)
        ec.codes_set(h, "iScansNegatively", i)
        ec.codes_set(h, "jScansPositively", j)
        return _write(path, [h])

    return rewritten


PLANES.update({
    "grib1_lambert": grib1_lambert,
    "grib1_mercator": grib1_mercator,
    "grib1_polar": grib1_polar,
    **{f"{name}_i{i}_j{j}": _scanning(PLANES[name], i, j)
       for name in ("lambert", "polar", "mercator") for i, j in ((0, 0), (1, 0), (1, 1))},
})


def ecmwf_local_section(path: Path) -> Path:
    """ECMWF's local section (definition 1) on edition 2: MARS class, type `fc`, stream and
    experiment version, each in its own octets (`GRIB_dataType` is `fc`)."""
    return _small(path, "GRIB2", [
        {"setLocalDefinition": 1, "localDefinitionNumber": 1, "marsType": "fc", "shortName": "t",
         "typeOfLevel": "isobaricInhPa", "level": 500, "dataDate": 20261120, "stepRange": str(s)}
        for s in (0, 12)
    ])


def grib1_surface_pressure_log(path: Path) -> Path:
    """Edition 1 `lnsp` on model level 1: name and units as ecCodes gives them
    (`Numeric`), not the code table's text."""
    return _small(path, "GRIB1", [{"shortName": "lnsp", "typeOfLevel": "hybrid", "level": 1, "dataDate": 20261120}])


MORE.update({
    "ecmwf_local_section": ecmwf_local_section,
    "grib1_surface_pressure_log": grib1_surface_pressure_log,
})


def _from_sample(path: Path, sample: str, keys: dict | None = None) -> Path:
    """One field on an ecCodes sample's own grid, with smooth values."""
    ec = _ec()
    h = ec.codes_grib_new_from_samples(sample)
    for k, v in (keys or {}).items():
        ec.codes_set(h, k, v)
    n = ec.codes_get(h, "numberOfValues")
    ec.codes_set_values(h, 250.0 + 10.0 * np.sin(np.arange(n) / 17.0))
    return _write(path, [h])


def grib1_reduced_latlon_waves(path: Path) -> Path:
    """Edition 1 on a reduced latitude/longitude grid (ECMWF's wave model's): `swh`, from
    ECMWF's wave table (table2Version 140)."""
    return _from_sample(path, "reduced_ll_sfc_grib1")


def grib2_reduced_latlon(path: Path) -> Path:
    """Edition 2 on a reduced latitude/longitude grid."""
    return _from_sample(path, "reduced_ll_sfc_grib2")


def grib1_wave_table(path: Path) -> Path:
    """Edition 1 mean wave direction and period (ECMWF's table 140) on a regular grid."""
    return _small(path, "GRIB1", [{"shortName": p, "dataDate": 20261120} for p in ("mwd", "mwp")])


MORE.update({
    "grib1_reduced_latlon_waves": grib1_reduced_latlon_waves,
    "grib2_reduced_latlon": grib2_reduced_latlon,
    "grib1_wave_table": grib1_wave_table,
})
