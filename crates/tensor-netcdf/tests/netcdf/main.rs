//! Integration tests of tensor-netcdf: one trial per file netCDF4-python wrote (format,
//! dimensions, attributes with their types, each variable's type, dimensions, attributes
//! and values, as its sidecar records what netCDF4-python reads), the same file written
//! again byte for byte from what was read, its header listed from the bytes a remote reader
//! fetches, its definition in CDL as `ncdump -h` prints it, every prefix of it refused as
//! cut short, damaged headers refused with the kind each damage calls for, and round trips
//! of random definitions.

mod damaged;
mod round_trip;

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use tensor_core::{ErrorKind, Kinded, ReadOptions};
use tensor_dtype::{Format, TensorContainer};
use tensor_netcdf::classic::{self, Classic};
use tensor_netcdf::{Attribute, NetcdfFormat, Values};

fn dir() -> PathBuf {
    tensor_testkit::testdata().join("netcdf/reference")
}

/// An attribute's values as the sidecar spells them: text, or a list of numbers (non-finite
/// floats as strings).
fn attribute_json(a: &Attribute) -> Json {
    fn floats<T: Into<f64> + Copy>(v: &[T]) -> Json {
        v.iter()
            .map(|&x| {
                let f: f64 = x.into();
                if f.is_finite() {
                    Json::from(f)
                } else {
                    Json::from(if f.is_nan() {
                        "nan".to_owned()
                    } else if f > 0.0 {
                        "inf".to_owned()
                    } else {
                        "-inf".to_owned()
                    })
                }
            })
            .collect()
    }
    match &a.values {
        // netCDF4-python drops the NULs netCDF-C writes for an empty text.
        Values::Char(t) => Json::from(String::from_utf8_lossy(t).trim_end_matches('\0').to_owned()),
        Values::Byte(v) => v.iter().map(|&x| Json::from(x)).collect(),
        Values::Short(v) => v.iter().map(|&x| Json::from(x)).collect(),
        Values::Int(v) => v.iter().map(|&x| Json::from(x)).collect(),
        Values::Ubyte(v) => v.iter().map(|&x| Json::from(x)).collect(),
        Values::Ushort(v) => v.iter().map(|&x| Json::from(x)).collect(),
        Values::Uint(v) => v.iter().map(|&x| Json::from(x)).collect(),
        Values::Int64(v) => v.iter().map(|&x| Json::from(x)).collect(),
        Values::Uint64(v) => v.iter().map(|&x| Json::from(x)).collect(),
        Values::Float(v) => floats(v),
        Values::Double(v) => floats(v),
        // netCDF4-python gives one string as text, several as a list.
        Values::String(v) if v.len() == 1 => Json::from(v[0].clone()),
        Values::String(v) => v.iter().map(|x| Json::from(x.as_str())).collect(),
        other => Json::from(format!("{other:?}")),
    }
}

fn same_attributes(ours: &[Attribute], theirs: &Json, of: &str) -> Result<(), Failed> {
    let theirs = theirs.as_array().ok_or("sidecar attributes")?;
    if ours.len() != theirs.len() {
        return Err(format!(
            "{of}: {} attributes, netCDF4 read {}",
            ours.len(),
            theirs.len()
        )
        .into());
    }
    for (a, t) in ours.iter().zip(theirs) {
        let value = attribute_json(a);
        if t["name"] != a.name.as_str()
            || t["type"] != a.values.nc_type().name()
            || !tensor_testkit::same_json_value(&value, &t["value"])
        {
            return Err(format!(
                "{of}: attribute {:?} {} {value}; netCDF4 read {t}",
                a.name,
                a.values.nc_type()
            )
            .into());
        }
    }
    Ok(())
}

fn fixture(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let side = tensor_testkit::sidecar(path)?;
    let file = tensor_netcdf::Netcdf::open_with(&bytes, &ReadOptions::default().strict(true))?;
    if side["format"] != file.data_model() {
        return Err(format!(
            "{} where netCDF4 says {}",
            file.data_model(),
            side["format"]
        )
        .into());
    }
    let def = file.definition();
    let dims: Vec<Json> = def
        .dimensions
        .iter()
        .map(|d| serde_json::json!({"name": d.name, "len": d.len, "unlimited": d.unlimited}))
        .collect();
    if Json::from(dims.clone()) != side["dimensions"] {
        return Err(format!("dimensions {dims:?}; netCDF4 read {}", side["dimensions"]).into());
    }
    same_attributes(&def.attributes, &side["attributes"], "the file")?;
    let vars = side["variables"].as_array().ok_or("sidecar variables")?;
    if vars.len() != file.len() {
        return Err(format!("{} variables; netCDF4 read {}", file.len(), vars.len()).into());
    }
    for (i, (v, t)) in def.variables.iter().zip(vars).enumerate() {
        let of = format!("variable {:?}", v.name);
        let names: Vec<&str> = v
            .dims
            .iter()
            .map(|&d| def.dimensions[d].name.as_str())
            .collect();
        if t["name"] != v.name.as_str()
            || t["type"] != v.nc_type.name()
            || Json::from(names.clone()) != t["dims"]
            || Json::from(file.shape(i)?.to_vec()) != t["shape"]
        {
            return Err(format!(
                "{of}: {} {names:?} {:?}; netCDF4 read {t}",
                v.nc_type,
                file.shape(i)?
            )
            .into());
        }
        same_attributes(&v.attributes, &t["attributes"], &of)?;
        // Decoded into a buffer (NetCDF-4's chunks), and viewed in place where stored so.
        let dtype = file.dtype(i)?;
        let n = usize::try_from(tensor_dtype::shape::byte_len(dtype, file.shape(i)?)?)?;
        let mut le = vec![0u8; n];
        file.read_into(i, &mut le)?;
        tensor_core::byte_order::to_native_in_place(
            tensor_core::ByteOrder::Little,
            &mut le,
            dtype.byte_width().max(1),
        )?;
        if tensor_testkit::sha256_hex(&le) != t["sha256"] {
            return Err(format!("{of}: the values differ from netCDF4's").into());
        }
        if let Some(view) = file.view(i)?
            && view.to_le_bytes().as_ref() != le.as_slice()
        {
            return Err(format!("{of}: the view differs from read_into").into());
        }
    }
    Ok(())
}

/// The file written again from what was read, with its version: netCDF-C's bytes.
fn rewrite(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let file = Classic::open(&bytes)?;
    let mut out = std::io::Cursor::new(Vec::new());
    classic::write::write(
        &mut out,
        file.definition(),
        Some(file.version()),
        &mut |i, sink| {
            let view = file
                .view(i)?
                .ok_or_else(|| tensor_core::Error::InvalidArgument("view".into()))?;
            let mut be = view.to_le_bytes().into_owned();
            tensor_core::byte_order::swap_in_place(&mut be, view.dtype().byte_width())?;
            sink.write_all(&be)
                .map_err(|e| tensor_core::Error::io("test sink", e).into())
        },
    )?;
    let again = out.into_inner();
    // netCDF-C leaves the last record of a file with one record variable padded or not,
    // as the records were written (one at a time, or together): its padding is zeros.
    let tail = bytes.get(again.len()..).unwrap_or_default();
    let padded_tail = tail.len() < 4 && tail.iter().all(|&b| b == 0) && bytes.starts_with(&again);
    if again != bytes && !padded_tail {
        let at = again.iter().zip(&bytes).position(|(a, b)| a != b);
        return Err(format!(
            "written again: {} bytes where netCDF-C wrote {}, first difference at {at:?}",
            again.len(),
            bytes.len()
        )
        .into());
    }
    // Unasked, the version is the file's own; with none recorded, the least that holds it.
    let version_of = |def: &tensor_netcdf::Definition| -> Result<classic::Version, Failed> {
        let written = classic::write::write(
            &mut std::io::Cursor::new(Vec::new()),
            def,
            None,
            &mut |i, sink| {
                let view = file
                    .view(i)?
                    .ok_or_else(|| tensor_core::Error::InvalidArgument("view".into()))?;
                sink.write_all(&view.to_le_bytes())
                    .map_err(|e| tensor_core::Error::io("test sink", e).into())
            },
        )?;
        Ok(written.version)
    };
    if version_of(file.definition())? != file.version() {
        return Err("unasked, another version than the file's".into());
    }
    let mut unrecorded = file.definition().clone();
    unrecorded.format = None;
    let least = if unrecorded
        .variables
        .iter()
        .any(|v| !v.nc_type.in_classic(2))
        || unrecorded
            .attributes
            .iter()
            .any(|a| !a.values.nc_type().in_classic(2))
    {
        classic::Version::Cdf5
    } else {
        classic::Version::Cdf1
    };
    let chosen = version_of(&unrecorded)?;
    if chosen != least {
        return Err(format!("chose {chosen} for a file that needs {least}").into());
    }
    Ok(())
}

/// The header listed from what a remote reader fetches, starting from its first 16 bytes:
/// at most three requests, then the same header as from the whole file.
fn remote_header(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let limits = tensor_core::Limits::default();
    let held = tensor_testkit::Prefix::read_header(&bytes, 16, 3, |held| {
        NetcdfFormat::header_ranges(held, &limits)
    })?;
    let header = classic::header::parse(&bytes[..held as usize], bytes.len() as u64, &limits)?;
    // Compared as printed: attributes may hold NaN.
    if format!("{header:?}") != format!("{:?}", Classic::open(&bytes)?.header()) {
        return Err(format!("the remote header lists other variables: {header:?}").into());
    }
    Ok(())
}

/// The file's definition in CDL is what `ncdump -h` printed of it.
fn cdl(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    let file = tensor_netcdf::Netcdf::open_with(&bytes, &ReadOptions::default())?;
    let ours = tensor_netcdf::cdl::header(file.definition(), &tensor_testkit::stem(path));
    let theirs = std::fs::read_to_string(path.with_extension("cdl"))?;
    if ours != theirs {
        return Err(format!("ours:\n{ours}\nncdump -h:\n{theirs}").into());
    }
    Ok(())
}

/// Every prefix of a reference file is refused, as cut short or (where a count no longer
/// fits what is left) as malformed, and never read as a sound file.
fn prefixes(path: &Path) -> Result<(), Failed> {
    let bytes = std::fs::read(path)?;
    for n in 0..bytes.len() {
        let cut = &bytes[..n];
        let Err(e) = Classic::open(cut) else {
            // A file whose last variable's padding is cut off still holds every value.
            let full = Classic::open(&bytes)?;
            let end = (0..full.len())
                .map(|i| full.data_range(i).end)
                .max()
                .unwrap_or(0);
            if (n as u64) < end {
                return Err(format!("the first {n} bytes read as a sound file").into());
            }
            continue;
        };
        if !matches!(
            e.kind(),
            ErrorKind::Truncated | ErrorKind::Malformed | ErrorKind::Unsupported
        ) {
            return Err(format!("the first {n} bytes: {} ({e})", e.kind().as_str()).into());
        }
    }
    Ok(())
}

/// The NetCDF-4 file at `path` written again by this crate's writer from what was read
/// (every row of every variable), then read as netCDF4 read the original (its sidecar).
fn written_again(path: &Path) -> Result<(), Failed> {
    use tensor_netcdf::netcdf4::{Netcdf4, write};
    let bytes = std::fs::read(path)?;
    let file = Netcdf4::open_with(&bytes, &ReadOptions::default())?;
    let def = file.definition();
    let dir = tempfile::tempdir()?;
    let out_path = dir.path().join(path.file_name().ok_or("a file name")?);
    std::fs::copy(path.with_extension("json"), out_path.with_extension("json"))?;
    let mut out = std::fs::File::create(&out_path)?;
    write::write(
        &mut out,
        def,
        &write::Storage::default(),
        false,
        &mut |i, sink| {
            let n = usize::try_from(tensor_dtype::shape::byte_len(
                file.dtype(i)?,
                file.shape(i)?,
            )?)
            .map_err(|_| tensor_core::Error::InvalidArgument("size".into()))?;
            let mut le = vec![0u8; n];
            file.read_into(i, &mut le)?;
            let width = file.dtype(i)?.byte_width().max(1);
            tensor_core::byte_order::to_native_in_place(
                tensor_core::ByteOrder::Little,
                &mut le,
                width,
            )?;
            sink.write_all(&le)
                .map_err(|e| tensor_core::Error::io("test sink", e).into())
        },
    )?;
    drop(out);
    fixture(&out_path)
}

/// Variables of types NetCDF-4 has and no tensor holds, in files netCDF4-python wrote: each
/// file opens with its plain variable, the other left out and named with its type.
fn unsupported_types() -> Result<(), Failed> {
    let dir = tensor_testkit::testdata().join("netcdf/unsupported");
    for (file, variable, kind) in [
        ("compound_variable.nc", "pairs", "compound"),
        ("enum_variable.nc", "sky", "enum"),
        ("vlen_variable.nc", "rows", "variable-length sequence"),
        ("string_variable.nc", "station", "string"),
    ] {
        let bytes = std::fs::read(dir.join(file))?;
        let nc = tensor_netcdf::Netcdf::open_with(&bytes, &tensor_netcdf::ReadOptions::default())
            .map_err(|e| format!("{file}: {e}"))?;
        let names: Vec<&str> = nc
            .definition()
            .variables
            .iter()
            .map(|v| v.name.as_str())
            .collect();
        if names != ["plain"] {
            return Err(format!("{file}: variables {names:?}").into());
        }
        match nc.not_read() {
            [one] if one.name == variable && one.why.contains(kind) => {
                // A string variable's values are read, as netCDF4 reads them.
                let want = (kind == "string").then(|| tensor_netcdf::Strings {
                    dims: vec!["n".into()],
                    shape: vec![3],
                    values: vec!["brest".into(), "oslo".into(), "rome".into()],
                });
                let got = nc.strings(&one.name, &tensor_core::Limits::default())?;
                if got != want {
                    return Err(format!("{file}: strings {got:?}").into());
                }
            }
            other => return Err(format!("{file}: not read {other:?}").into()),
        }
        let mut plain = [0u8; 12];
        nc.read_rows(0, 0..3, &mut plain)?;
        let values: Vec<f32> = plain
            .chunks_exact(4)
            .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        if values != [1.0, 2.0, 3.0] {
            return Err(format!("{file}: plain = {values:?}").into());
        }
    }
    Ok(())
}

/// Variable-length strings are decoded within the limits, attributes' and variables' alike
/// (many elements may point at one large heap object): a file with string attributes is
/// refused under a limit of a byte, and read under the default.
fn strings_within_limits() -> Result<(), Failed> {
    let tight = tensor_core::Limits::default().with_max_total_bytes(1);
    let path = tensor_testkit::testdata().join("netcdf/h5netcdf/h5netcdf_types.nc");
    let bytes = std::fs::read(&path)?;
    let opened =
        |limits| tensor_netcdf::Netcdf::open_with(&bytes, &ReadOptions::default().limits(limits));
    match opened(tight) {
        Err(e) if e.kind() == ErrorKind::LimitExceeded => {}
        other => return Err(format!("string attributes past the limit: {other:?}").into()),
    }
    opened(tensor_core::Limits::default())?;
    let path = tensor_testkit::testdata().join("netcdf/unsupported/string_variable.nc");
    let bytes = std::fs::read(&path)?;
    let nc = tensor_netcdf::Netcdf::open_with(&bytes, &ReadOptions::default())?;
    match nc.strings("station", &tight) {
        Err(e) if e.kind() == ErrorKind::LimitExceeded => Ok(()),
        other => Err(format!("a string variable past the limit: {other:?}").into()),
    }
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    let files = tensor_testkit::files_with_extension(&dir(), "nc");
    assert!(files.len() >= 8, "the netCDF4-python files are missing");
    for path in files {
        let stem = tensor_testkit::stem(&path);
        for (kind, test) in [
            ("reference", fixture as fn(&Path) -> Result<(), Failed>),
            ("rewrite", rewrite),
            ("remote_header", remote_header),
            ("prefixes", prefixes),
            ("cdl", cdl),
        ] {
            let p = path.clone();
            trials.push(Trial::test(format!("{kind}::{stem}"), move || test(&p)));
        }
    }
    // The same files as NetCDF-4, and those h5netcdf and xarray (through h5netcdf) wrote:
    // read as netCDF4 reads them, their CDL as ncdump's.
    let netcdf4 = tensor_testkit::testdata().join("netcdf/reference4");
    let mut files = tensor_testkit::files_with_extension(&netcdf4, "nc");
    assert!(files.len() >= 8, "the netCDF-4 files are missing");
    let h5netcdf = tensor_testkit::testdata().join("netcdf/h5netcdf");
    let more = tensor_testkit::files_with_extension(&h5netcdf, "nc");
    assert!(more.len() >= 2, "the h5netcdf files are missing");
    files.extend(more);
    for path in files {
        let stem = tensor_testkit::stem(&path);
        let p = path.clone();
        trials.push(Trial::test(format!("netcdf4::{stem}"), move || fixture(&p)));
        trials.push(Trial::test(format!("netcdf4_cdl::{stem}"), move || {
            cdl(&path)
        }));
    }
    // Nested groups: what is in a subgroup named by its path, read as netCDF4 reads it;
    // written again as NetCDF-4, the same.
    let groups = tensor_testkit::testdata().join("netcdf/groups/groups.nc");
    let again = groups.clone();
    let outline = groups.clone();
    trials.push(Trial::test("netcdf4::groups", move || fixture(&groups)));
    trials.push(Trial::test("netcdf4_cdl::groups", move || cdl(&outline)));
    trials.push(Trial::test("netcdf4::groups_written_again", move || {
        written_again(&again)
    }));
    trials.push(Trial::test("netcdf4::unsupported_types", unsupported_types));
    trials.push(Trial::test(
        "netcdf4::strings_within_limits",
        strings_within_limits,
    ));
    trials.extend(damaged::trials());
    trials.extend(round_trip::trials());
    libtest_mimic::run(&args, trials).exit();
}
