use super::*;

/// The attributes a GRIB 2 field on a 3 × 4 regular lat/lon grid carries.
fn field(
    short: &str,
    param: i64,
    level_type: &str,
    level: i64,
    step: i64,
    number: Option<i64>,
) -> Vec<(String, Value)> {
    let mut a: Vec<(String, Value)> = vec![
        attr("shortName", short),
        attr("paramId", param),
        attr("parameterName", "Some parameter"),
        attr("units", "K"),
        attr("edition", 2i64),
        attr("centre", 98i64),
        attr("typeOfLevel", level_type),
        attr("level", level),
        attr("dataDate", 20_261_120i64),
        attr("dataTime", 1200i64),
        attr("stepRange", step.to_string()),
        attr("stepUnits", 1i64),
        attr("gridType", "regular_ll"),
        attr("numberOfDataPoints", 12i64),
        attr("Ni", 4i64),
        attr("Nj", 3i64),
        attr("latitudeOfFirstGridPointInDegrees", 60.0),
        attr("longitudeOfFirstGridPointInDegrees", 0.0),
        attr("latitudeOfLastGridPointInDegrees", 0.0),
        attr("longitudeOfLastGridPointInDegrees", 270.0),
        attr("iScansNegatively", 0i64),
        attr("jScansPositively", 0i64),
        attr("jPointsAreConsecutive", 0i64),
    ];
    if let Some(n) = number {
        a.push(attr("perturbationNumber", n));
    }
    a
}

const SHAPE: [u64; 2] = [3, 4];

fn input(fields: &[Vec<(String, Value)>]) -> Vec<FieldKeys<'_>> {
    fields.iter().map(|f| (f.as_slice(), &SHAPE[..])).collect()
}

fn coordinate<'c>(cube: &'c Cube, name: &str) -> &'c Coordinate {
    cube.coordinates.iter().find(|c| c.name == name).unwrap()
}

#[test]
fn an_ensemble_is_one_cube_of_members_steps_and_levels() {
    let mut fields = Vec::new();
    for (short, id) in [("t", 130), ("u", 131)] {
        for m in 1..=2 {
            for step in [0, 6, 12] {
                for level in [500, 850] {
                    fields.push(field(short, id, "isobaricInhPa", level, step, Some(m)));
                }
            }
        }
    }
    let cube = dataset(&input(&fields), &Options::default()).unwrap();
    let names: Vec<&str> = cube.variables.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["t", "u"]);
    let t = &cube.variables[0];
    assert_eq!(
        t.dims,
        ["number", "step", "isobaricInhPa", "latitude", "longitude"]
    );
    assert_eq!(t.shape, [2, 3, 2, 3, 4]);
    assert_eq!(t.grid_ndim, 2);
    // Levels decrease; cell (member 1, step 0, 850 hPa) is the second field written.
    assert_eq!(
        coordinate(&cube, "isobaricInhPa").values,
        Values::Float(vec![850.0, 500.0])
    );
    assert_eq!(t.fields[0], Some(1));
    assert_eq!(t.fields[1], Some(0));
    assert_eq!(cube.variables[1].fields[0], Some(13));
    assert_eq!(
        coordinate(&cube, "step").values,
        Values::Duration(vec![0, 21_600, 43_200])
    );
    let time = coordinate(&cube, "time");
    assert!(time.dims.is_empty());
    assert_eq!(time.values, Values::Time(vec![20_777 * 86_400 + 12 * 3600]));
    assert_eq!(coordinate(&cube, "valid_time").dims, ["step"]);
    assert_eq!(
        coordinate(&cube, "latitude").values,
        Values::Float(vec![60.0, 30.0, 0.0])
    );
    assert!(
        t.attributes
            .contains(&attr("GRIB_cfName", "air_temperature"))
    );
    assert!(
        t.attributes
            .contains(&attr("standard_name", "air_temperature"))
    );
    assert!(cube.attributes.contains(&attr("GRIB_centre", "ecmf")));
}

#[test]
fn level_types_that_clash_are_refused_with_a_filter_for_each() {
    let fields = vec![
        field("t", 130, "isobaricInhPa", 850, 0, None),
        field("2t", 167, "heightAboveGround", 2, 0, None),
        field("10u", 165, "heightAboveGround", 10, 0, None),
        field("sp", 134, "surface", 0, 0, None),
    ];
    let err = dataset(&input(&fields), &Options::default()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("filter_by_keys={'typeOfLevel': 'heightAboveGround', 'level': 2}"),
        "{text}"
    );
    assert!(
        text.contains("filter_by_keys={'typeOfLevel': 'surface'}"),
        "{text}"
    );
    let cubes = cubes(&input(&fields), &Options::default()).unwrap();
    let names: Vec<&str> = cubes.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "isobaricInhPa",
            "heightAboveGround_2",
            "heightAboveGround_10",
            "surface"
        ]
    );
    assert_eq!(cubes[2].variables[0].name, "u10");
    // The filter a cube names selects it.
    let options = Options {
        filter: cubes[1]
            .filter
            .iter()
            .map(|(k, v)| (k.clone(), vec![v.clone()]))
            .collect(),
        ..Options::default()
    };
    let one = dataset(&input(&fields), &options).unwrap();
    assert_eq!(one.variables[0].name, "t2m");
    assert_eq!(one.variables[0].dims, ["latitude", "longitude"]);
}

#[test]
fn level_types_that_agree_share_a_dataset() {
    let fields = vec![
        field("t", 130, "isobaricInhPa", 850, 0, None),
        field("t", 130, "isobaricInhPa", 500, 0, None),
        field("2t", 167, "heightAboveGround", 2, 0, None),
    ];
    let cube = dataset(&input(&fields), &Options::default()).unwrap();
    assert_eq!(cube.variables.len(), 2);
    assert!(coordinate(&cube, "heightAboveGround").dims.is_empty());
}

#[test]
fn options_filter_and_time_dims() {
    let fields = vec![
        field("t", 130, "isobaricInhPa", 850, 0, None),
        field("t", 130, "isobaricInhPa", 850, 6, None),
    ];
    let options = Options {
        time_dims: vec!["valid_time".into()],
        ..Options::default()
    };
    let cube = dataset(&input(&fields), &options).unwrap();
    assert_eq!(
        cube.variables[0].dims,
        ["valid_time", "latitude", "longitude"]
    );
    assert!(cube.coordinates.iter().all(|c| c.name != "step"));
    let options = Options {
        filter: vec![("step".into(), vec![Key::Int(6)])],
        ..Options::default()
    };
    let cube = dataset(&input(&fields), &options).unwrap();
    assert_eq!(cube.variables[0].fields, [Some(1)]);
    let options = Options {
        filter: vec![("shortName".into(), vec![Key::Text("q".into())])],
        ..Options::default()
    };
    assert!(matches!(
        dataset(&input(&fields), &options),
        Err(Error::Empty(_))
    ));
    let options = Options {
        time_dims: vec!["hour".into()],
        ..Options::default()
    };
    assert!(matches!(
        dataset(&input(&fields), &options),
        Err(Error::Option(_))
    ));
    let bare = vec![vec![attr("name", "x")]];
    assert!(matches!(
        dataset(&input(&bare), &Options::default()),
        Err(Error::NotGrib { field: 0 })
    ));
}

#[test]
fn parameters_outside_the_table_stay_apart() {
    let unknown = |number: i64, level: i64| {
        let mut f = field("unknown", 0, "isobaricInhPa", level, 0, None);
        f.retain(|(k, _)| k != "paramId" && k != "parameterName");
        f.extend([
            attr("discipline", 0i64),
            attr("parameterCategory", 1i64),
            attr("parameterNumber", number),
        ]);
        f
    };
    let fields = vec![
        unknown(200, 850),
        unknown(200, 500),
        unknown(201, 850),
        unknown(201, 500),
    ];
    let cube = dataset(&input(&fields), &Options::default()).unwrap();
    let names: Vec<&str> = cube.variables.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["unknown_0_1_200", "unknown_0_1_201"]);
    assert_eq!(cube.variables[0].fields, [Some(0), Some(1)]);
    assert!(
        cube.variables[0]
            .attributes
            .contains(&attr("GRIB_paramId", 0i64))
    );
}
