//! Random definitions and values written and read back: the same dimensions, attributes
//! (with their types), variables and bytes, in the version the types call for.

use libtest_mimic::{Failed, Trial};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use tensor_dtype::TensorContainer;
use tensor_netcdf::classic::{self, Classic, Version};
use tensor_netcdf::types::ALL;
use tensor_netcdf::{Attribute, Definition, Dimension, NcType, Values, Variable};

fn values(t: NcType, seed: u64, n: usize) -> Values {
    let bytes: Vec<u8> = (0..n as u64 * t.size())
        .map(|i| (seed.wrapping_mul(31).wrapping_add(i * 7) % 251) as u8)
        .collect();
    match t {
        NcType::Byte => Values::Byte(bytes.iter().map(|&b| b as i8).collect()),
        NcType::Char => Values::Char(bytes.iter().map(|&b| b'a' + b % 26).collect()),
        NcType::Short => Values::Short(
            bytes
                .chunks(2)
                .map(|c| i16::from_be_bytes([c[0], c[1]]))
                .collect(),
        ),
        NcType::Int => Values::Int(
            bytes
                .chunks(4)
                .map(|c| i32::from_be_bytes(c.try_into().unwrap()))
                .collect(),
        ),
        NcType::Float => Values::Float((0..n).map(|i| i as f32 * 0.5 - seed as f32).collect()),
        NcType::Double => Values::Double((0..n).map(|i| i as f64 / 3.0 + seed as f64).collect()),
        NcType::Ubyte => Values::Ubyte(bytes),
        NcType::Ushort => Values::Ushort(
            bytes
                .chunks(2)
                .map(|c| u16::from_be_bytes([c[0], c[1]]))
                .collect(),
        ),
        NcType::Uint => Values::Uint(
            bytes
                .chunks(4)
                .map(|c| u32::from_be_bytes(c.try_into().unwrap()))
                .collect(),
        ),
        NcType::Int64 => Values::Int64(
            (0..n)
                .map(|i| i as i64 - seed as i64 * 1_000_000_007)
                .collect(),
        ),
        _ => Values::Uint64((0..n).map(|i| u64::MAX - i as u64 - seed).collect()),
    }
}

/// A definition from a seed: up to three fixed dimensions, perhaps an unlimited one, up
/// to four variables of the types of `version` over them, attributes on each.
fn definition(
    seed: u64,
    cdf5: bool,
    dims: &[u64],
    records: Option<u64>,
    vars: Vec<(usize, Vec<usize>, bool)>,
) -> Definition {
    let types: Vec<NcType> = ALL
        .iter()
        .copied()
        .filter(|t| t.in_classic(if cdf5 { 5 } else { 1 }))
        .collect();
    let mut dimensions: Vec<Dimension> = Vec::new();
    if let Some(n) = records {
        dimensions.push(Dimension {
            name: "time".into(),
            len: n,
            unlimited: true,
        });
    }
    for (i, len) in dims.iter().enumerate() {
        dimensions.push(Dimension {
            name: format!("d{i}"),
            len: *len,
            unlimited: false,
        });
    }
    let fixed: Vec<usize> = (usize::from(records.is_some())..dimensions.len()).collect();
    let variables = vars
        .into_iter()
        .enumerate()
        .map(|(i, (t, picks, record))| {
            let mut d: Vec<usize> = picks
                .iter()
                .filter_map(|&p| fixed.get(p % fixed.len().max(1)).copied())
                .collect();
            if record && records.is_some() {
                d.insert(0, 0);
            }
            let t = types[t % types.len()];
            Variable {
                name: format!("v{i}"),
                dims: d,
                attributes: vec![
                    Attribute {
                        name: "a".into(),
                        values: values(types[(i + seed as usize) % types.len()], seed, i + 1),
                    },
                    Attribute::text("units", "m s-1"),
                ],
                nc_type: t,
            }
        })
        .collect();
    Definition {
        dimensions,
        attributes: vec![Attribute {
            name: "g".into(),
            values: values(types[seed as usize % types.len()], seed, 3),
        }],
        variables,
        format: None,
    }
}

fn round_trip(def: &Definition, seed: u64) -> Result<(), TestCaseError> {
    let data: Vec<Vec<u8>> = (0..def.variables.len())
        .map(|i| {
            let n: u64 = def.shape(i).iter().product();
            let t = def.variables[i].nc_type;
            values(t, seed + i as u64, n as usize)
                .to_be_bytes()
                .expect("classic values")
        })
        .collect();
    let mut out = std::io::Cursor::new(Vec::new());
    let written = classic::write::write(&mut out, def, None, &mut |i, sink| {
        // Handed over in pieces of 3 bytes, across elements and records.
        for piece in data[i].chunks(3) {
            sink.write_all(piece)
                .map_err(|e| tensor_core::Error::io("test", e))?;
        }
        Ok(())
    })
    .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let bytes = out.into_inner();
    prop_assert_eq!(written.len, bytes.len() as u64);
    let cdf5 = def.variables.iter().any(|v| !v.nc_type.in_classic(2))
        || def
            .attributes
            .iter()
            .chain(def.variables.iter().flat_map(|v| &v.attributes))
            .any(|a| !a.values.nc_type().in_classic(2));
    prop_assert_eq!(
        written.version,
        if cdf5 { Version::Cdf5 } else { Version::Cdf1 }
    );
    let f = Classic::open_with(&bytes, &tensor_core::ReadOptions::default().strict(true))
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let mut read_as = def.clone();
    read_as.format = Some(written.version.data_model().to_owned());
    prop_assert_eq!(f.definition(), &read_as);
    for (i, want) in data.iter().enumerate() {
        let view = f
            .view(i)
            .map_err(|e| TestCaseError::fail(e.to_string()))?
            .expect("a view");
        let mut be = view.to_le_bytes().into_owned();
        tensor_core::byte_order::swap_in_place(&mut be, view.dtype().byte_width()).unwrap();
        prop_assert_eq!(&be, want, "variable {}", i);
    }
    Ok(())
}

/// A seed, a flag, up to three fixed dimensions of lengths in `lens`, perhaps records (up
/// to `records`), and up to four variables: what [`definition`] makes a file of.
#[allow(
    clippy::type_complexity,
    reason = "proptest's tuple of what a definition is made of"
)]
fn strategy(
    lens: std::ops::Range<u64>,
    records: std::ops::Range<u64>,
) -> impl Strategy<
    Value = (
        u64,
        bool,
        Vec<u64>,
        Option<u64>,
        Vec<(usize, Vec<usize>, bool)>,
    ),
> {
    (
        any::<u64>(),
        any::<bool>(),
        prop::collection::vec(lens, 0..3),
        prop::option::of(records),
        prop::collection::vec(
            (
                any::<usize>(),
                prop::collection::vec(any::<usize>(), 0..3),
                any::<bool>(),
            ),
            0..5,
        ),
    )
}

fn run() -> Result<(), Failed> {
    let mut runner = TestRunner::new(Config {
        cases: 200,
        ..Config::default()
    });
    runner
        .run(
            &strategy(1..5, 0..4),
            |(seed, cdf5, dims, records, vars)| {
                let seed = seed % 1000;
                round_trip(&definition(seed, cdf5, &dims, records, vars), seed)
            },
        )
        .map_err(|e| Failed::from(e.to_string()))
}

/// `def` written as NetCDF-4 (every filter on when `filtered`) and read back: the same
/// definition, and the same elements (little-endian, as the writer takes them).
fn round_trip_netcdf4(def: &Definition, seed: u64, filtered: bool) -> Result<(), TestCaseError> {
    use tensor_netcdf::netcdf4::{Netcdf4, write};
    let data: Vec<Vec<u8>> = (0..def.variables.len())
        .map(|i| {
            let n: u64 = def.shape(i).iter().product();
            let t = def.variables[i].nc_type;
            let mut bytes = values(t, seed + i as u64, n as usize)
                .to_be_bytes()
                .expect("numeric values");
            tensor_core::byte_order::swap_in_place(&mut bytes, t.size() as usize).unwrap();
            bytes
        })
        .collect();
    let mut storage = write::Storage::default();
    if filtered {
        storage.filters.shuffle = true;
        storage.filters.deflate = Some(1);
        storage.filters.fletcher32 = true;
    }
    let mut out = std::io::Cursor::new(Vec::new());
    let len = write::write(&mut out, def, &storage, false, &mut |i, sink| {
        for piece in data[i].chunks(5) {
            sink.write_all(piece)
                .map_err(|e| tensor_core::Error::io("test", e))?;
        }
        Ok(())
    })
    .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let bytes = out.into_inner();
    prop_assert_eq!(len, bytes.len() as u64);
    let f = Netcdf4::open_with(&bytes, &tensor_core::ReadOptions::default())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let mut read_as = def.clone();
    read_as.format = Some("NETCDF4".to_owned());
    prop_assert_eq!(f.definition(), &read_as);
    for (i, want) in data.iter().enumerate() {
        let mut got = vec![0u8; want.len()];
        f.read_into(i, &mut got)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&got, want, "variable {}", i);
    }
    Ok(())
}

/// `def` with what follows variable `vars` and dimension `dims` put in group `g` (the last
/// variable, when there are two or more there, in `g/h`), and an attribute of `g`: the
/// order a reader lists them in (a group's variables, then its subgroups').
fn grouped(mut def: Definition, vars: usize, dims: usize) -> Definition {
    let n = def.variables.len();
    for (i, v) in def.variables.iter_mut().enumerate().skip(vars) {
        v.name = if i + 1 == n && n >= vars + 2 {
            format!("g/h/{}", v.name)
        } else {
            format!("g/{}", v.name)
        };
    }
    for d in def.dimensions.iter_mut().skip(dims) {
        d.name = format!("g/{}", d.name);
    }
    def.attributes
        .push(Attribute::text("g/title", "a group's attribute"));
    def
}

fn run_netcdf4() -> Result<(), Failed> {
    let mut runner = TestRunner::new(Config {
        cases: 100,
        ..Config::default()
    });
    runner
        .run(
            &strategy(1..40, 0..6),
            |(seed, filtered, dims, records, vars)| {
                let seed = seed % 1000;
                let mut def = definition(seed, true, &dims, records, vars);
                // Half the cases with groups.
                if seed % 2 == 0 {
                    def = grouped(def, (seed / 2 % 4) as usize, (seed / 8 % 3) as usize);
                }
                round_trip_netcdf4(&def, seed, filtered)
            },
        )
        .map_err(|e| Failed::from(e.to_string()))
}

pub(crate) fn trials() -> Vec<Trial> {
    vec![
        Trial::test("round_trip::random_definitions_and_values", run),
        Trial::test(
            "round_trip::netcdf4_random_definitions_and_values",
            run_netcdf4,
        ),
    ]
}
