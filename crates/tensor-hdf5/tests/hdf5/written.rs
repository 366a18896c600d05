//! Files the writer makes, read back by the reader: every element type, contiguous and
//! chunked storage (edge chunks, every filter, enough chunks for a two-level B-tree, an
//! unlimited dimension), datasets with no storage, and attributes of every kind — numbers,
//! scalars, fixed and variable-length strings, an empty string, lists of references.

use libtest_mimic::{Failed, Trial};
use std::io::Cursor;
use tensor_core::Limits;
use tensor_hdf5::message::Layout;
use tensor_hdf5::write::{Attribute, DatasetSpec, Filters, Type, Value, Writer};
use tensor_hdf5::{Hdf5, Kind};

fn spec(ty: Type, dims: &[u64], chunks: Option<&[u64]>, filters: Filters) -> DatasetSpec {
    DatasetSpec {
        ty,
        dims: dims.to_vec(),
        max: None,
        chunks: chunks.map(<[u64]>::to_vec),
        filters,
        fill: None,
    }
}

fn elements(n: u64, width: usize) -> Vec<u8> {
    (0..n * width as u64).map(|i| (i * 7 % 251) as u8).collect()
}

/// Writes `bytes` in pieces of `piece` bytes, as a streaming caller hands them over.
fn pieces(
    bytes: Vec<u8>,
    piece: usize,
) -> impl FnMut(&mut dyn std::io::Write) -> tensor_hdf5::Result<()> {
    move |sink| {
        for p in bytes.chunks(piece) {
            sink.write_all(p)
                .map_err(|e| tensor_core::Error::io("test", e))?;
        }
        Ok(())
    }
}

fn round_trip() -> Result<(), Failed> {
    let mut file = Cursor::new(Vec::new());
    let mut w = Writer::new(&mut file)?;
    let all = Filters {
        shuffle: true,
        deflate: Some(6),
        fletcher32: true,
    };
    let cases: Vec<(&str, DatasetSpec, Vec<u8>)> = vec![
        (
            "f64",
            spec(Type::Float { size: 8 }, &[3, 4], None, Filters::default()),
            elements(12, 8),
        ),
        (
            "i32_all_filters",
            spec(
                Type::Integer {
                    size: 4,
                    signed: true,
                },
                &[7, 5],
                Some(&[2, 3]),
                all,
            ),
            elements(35, 4),
        ),
        (
            "u8_many_chunks",
            spec(
                Type::Integer {
                    size: 1,
                    signed: false,
                },
                &[1000],
                Some(&[3]),
                Filters::default(),
            ),
            elements(1000, 1),
        ),
        (
            "f32_3d",
            spec(
                Type::Float { size: 4 },
                &[4, 5, 6],
                Some(&[3, 2, 4]),
                Filters {
                    deflate: Some(1),
                    ..Filters::default()
                },
            ),
            elements(120, 4),
        ),
        (
            "text",
            spec(
                Type::Text {
                    len: 1,
                    utf8: false,
                },
                &[5],
                None,
                Filters::default(),
            ),
            b"hello".to_vec(),
        ),
        (
            "empty",
            spec(
                Type::Float { size: 4 },
                &[0, 3],
                Some(&[1, 3]),
                Filters::default(),
            ),
            Vec::new(),
        ),
    ];
    let mut ids = Vec::new();
    for (name, mut s, data) in cases.clone() {
        if name == "empty" {
            s.max = Some(vec![None, Some(3)]);
        }
        let mut give = pieces(data, 13);
        ids.push(w.dataset(name, s, Some(&mut give))?);
    }
    let unwritten = w.dataset(
        "unwritten",
        DatasetSpec {
            fill: Some(vec![1, 2, 3, 4]),
            ..spec(Type::Float { size: 4 }, &[10], None, Filters::default())
        },
        None,
    )?;
    let attributes = vec![
        Attribute {
            name: "numbers".into(),
            ty: Type::Integer {
                size: 2,
                signed: true,
            },
            scalar: false,
            value: Value::Bytes(vec![1, 0, 0xff, 0xff]),
        },
        Attribute {
            name: "scalar".into(),
            ty: Type::Float { size: 8 },
            scalar: true,
            value: Value::Bytes(1.5f64.to_le_bytes().to_vec()),
        },
        Attribute {
            name: "title".into(),
            ty: Type::Text {
                len: 5,
                utf8: false,
            },
            scalar: true,
            value: Value::Bytes(b"hello".to_vec()),
        },
        Attribute {
            name: "empty".into(),
            ty: Type::Text {
                len: 0,
                utf8: false,
            },
            scalar: true,
            value: Value::Bytes(Vec::new()),
        },
        Attribute {
            name: "strings".into(),
            ty: Type::VlenText { utf8: true },
            scalar: false,
            value: Value::Strings(vec!["a".into(), String::new(), "héllo".into()]),
        },
        Attribute {
            name: "refs".into(),
            ty: Type::References,
            scalar: false,
            value: Value::References(vec![vec![ids[0]], vec![unwritten, ids[1]]]),
        },
    ];
    for a in &attributes {
        w.attribute(Some(ids[1]), a.clone());
        w.attribute(None, a.clone());
    }
    let len = w.finish()?;
    let bytes = file.into_inner();
    if len != bytes.len() as u64 {
        return Err(format!("finish said {len} bytes; the file has {}", bytes.len()).into());
    }
    if let Ok(dir) = std::env::var("TENSOR_HDF5_KEEP") {
        std::fs::write(std::path::Path::new(&dir).join("written.h5"), &bytes)?;
    }
    let h = Hdf5::open(&bytes, Limits::default())?;
    let objects = h.objects()?;
    let names: Vec<&str> = objects.iter().map(|o| o.path.as_str()).collect();
    let want = [
        "/",
        "/f64",
        "/i32_all_filters",
        "/u8_many_chunks",
        "/f32_3d",
        "/text",
        "/empty",
        "/unwritten",
    ];
    if names != want {
        return Err(format!("objects {names:?}").into());
    }
    let address = |path: &str| objects.iter().find(|o| o.path == path).unwrap().address;
    for (o, (name, s, data)) in objects[1..].iter().zip(&cases) {
        let Kind::Dataset(d) = &o.kind else {
            return Err(format!("{name}: not a dataset").into());
        };
        if d.dataspace.dims != s.dims {
            return Err(format!("{name}: shape {:?}", d.dataspace.dims).into());
        }
        let mut out = vec![0u8; data.len()];
        h.read(d, &mut out)?;
        if &out != data {
            return Err(format!("{name}: values differ").into());
        }
        // Any window of rows reads as those rows of the whole, whatever chunks it cuts.
        let rows = s.dims.first().copied().unwrap_or(1);
        let row = (data.len() as u64).checked_div(rows).unwrap_or(0);
        for (a, b) in [
            (0, rows),
            (0, 1.min(rows)),
            (1.min(rows), rows),
            (rows / 2, rows),
            (rows / 3, (rows / 3 + 2).min(rows)),
        ] {
            let mut window = vec![0u8; ((b - a) * row) as usize];
            h.read_rows(d, a..b, &mut window)?;
            if window[..] != data[(a * row) as usize..(b * row) as usize] {
                return Err(format!("{name}: rows {a}..{b} differ").into());
            }
        }
        if h.read_rows(d, 0..rows + 1, &mut vec![0u8; ((rows + 1) * row) as usize])
            .is_ok()
        {
            return Err(format!("{name}: rows past the end read").into());
        }
        let chunked = matches!(d.layout, Layout::Chunked { .. });
        if chunked != s.chunks.is_some() {
            return Err(format!("{name}: layout {:?}", d.layout).into());
        }
    }
    let Kind::Dataset(d) = &objects[7].kind else {
        return Err("unwritten".into());
    };
    let mut out = vec![0u8; 40];
    h.read(d, &mut out)?;
    if out.chunks(4).any(|c| c != [1, 2, 3, 4]) {
        return Err(format!("an unwritten dataset reads {out:?}, not its fill").into());
    }
    for o in [&objects[0], &objects[2]] {
        let got: Vec<&str> = o.attributes.iter().map(|a| a.name.as_str()).collect();
        if got != ["numbers", "scalar", "title", "empty", "strings", "refs"] {
            return Err(format!("{}: attributes {got:?}", o.path).into());
        }
        let a = &o.attributes;
        if a[0].data != [1, 0, 0xff, 0xff]
            || a[1].data != 1.5f64.to_le_bytes()
            || a[2].data != b"hello"
        {
            return Err(format!("{}: fixed attributes {a:?}", o.path).into());
        }
        let strings: Vec<Vec<u8>> = a[4]
            .data
            .chunks(16)
            .map(|e| h.vlen(e).map(|v| v.unwrap_or_default().to_vec()))
            .collect::<Result<_, _>>()?;
        if strings != [b"a".to_vec(), Vec::new(), "héllo".as_bytes().to_vec()] {
            return Err(format!("{}: strings {strings:?}", o.path).into());
        }
        let refs: Vec<Vec<u64>> = a[5]
            .data
            .chunks(16)
            .map(|e| h.vlen(e).map(|v| h.references(v.unwrap_or_default())))
            .collect::<Result<_, _>>()?;
        if refs
            != [
                vec![address("/f64")],
                vec![address("/unwritten"), address("/i32_all_filters")],
            ]
        {
            return Err(format!("{}: references {refs:?}", o.path).into());
        }
    }
    Ok(())
}

/// What HDF5 cannot hold is refused before anything is written for it.
fn refusals() -> Result<(), Failed> {
    let mut file = Cursor::new(Vec::new());
    let mut w = Writer::new(&mut file)?;
    let f4 = Type::Float { size: 4 };
    let bad = [
        ("a/b", spec(f4, &[2], None, Filters::default())),
        (
            "filtered",
            spec(
                f4,
                &[2],
                None,
                Filters {
                    shuffle: true,
                    ..Filters::default()
                },
            ),
        ),
        (
            "chunk_rank",
            spec(f4, &[2, 2], Some(&[2]), Filters::default()),
        ),
        ("chunk_zero", spec(f4, &[2], Some(&[0]), Filters::default())),
        (
            "vlen",
            spec(
                Type::VlenText { utf8: false },
                &[2],
                None,
                Filters::default(),
            ),
        ),
    ];
    for (name, s) in bad {
        if w.dataset(name, s, None).is_ok() {
            return Err(format!("{name}: written").into());
        }
    }
    let mut short = pieces(vec![0; 4], 4);
    if w.dataset(
        "short",
        spec(f4, &[2], None, Filters::default()),
        Some(&mut short),
    )
    .is_ok()
    {
        return Err("a dataset given too few bytes was written".into());
    }
    let mut long = pieces(vec![0; 12], 4);
    if w.dataset(
        "long",
        spec(f4, &[2], Some(&[1]), Filters::default()),
        Some(&mut long),
    )
    .is_ok()
    {
        return Err("a dataset given too many bytes was written".into());
    }
    w.attribute(
        None,
        Attribute {
            name: "huge".into(),
            ty: Type::Integer {
                size: 1,
                signed: false,
            },
            scalar: false,
            value: Value::Bytes(vec![0; 70_000]),
        },
    );
    if w.finish().is_ok() {
        return Err("an attribute past 64 KiB was written".into());
    }
    Ok(())
}

/// Nested groups: each lists its datasets, then its subgroups, in the order they were made
/// (a group made before a dataset of its parent still comes after it), with their
/// attributes; a name a group already links is refused for a dataset or a group.
fn groups() -> Result<(), Failed> {
    let mut file = Cursor::new(Vec::new());
    let mut w = Writer::new(&mut file)?;
    let f4 = Type::Float { size: 4 };
    let g = w.group(None, "g")?;
    let h = w.group(Some(g), "h")?;
    let mut data = pieces(elements(2, 4), 4);
    w.dataset_in(
        Some(h),
        "deep",
        spec(f4, &[2], None, Filters::default()),
        Some(&mut data),
    )?;
    w.dataset_in(
        Some(g),
        "mid",
        spec(f4, &[3], None, Filters::default()),
        None,
    )?;
    w.dataset("top", spec(f4, &[1], None, Filters::default()), None)?;
    let note = |name: &str| Attribute {
        name: name.into(),
        ty: Type::Integer {
            size: 2,
            signed: true,
        },
        scalar: false,
        value: Value::Bytes(vec![7, 0]),
    };
    w.group_attribute(h, note("of_h"));
    w.attribute(None, note("of_root"));
    if w.group(None, "top").is_ok() || w.group(Some(g), "mid").is_ok() {
        return Err("a group named as a dataset beside it was made".into());
    }
    if w.dataset_in(Some(g), "h", spec(f4, &[1], None, Filters::default()), None)
        .is_ok()
    {
        return Err("a dataset named as a group beside it was made".into());
    }
    w.finish()?;
    let bytes = file.into_inner();
    let objects = Hdf5::open(&bytes, Limits::default())?.objects()?;
    let paths: Vec<&str> = objects.iter().map(|o| o.path.as_str()).collect();
    if paths != ["/", "/top", "/g", "/g/mid", "/g/h", "/g/h/deep"] {
        return Err(format!("objects {paths:?}").into());
    }
    let attributes = |path: &str| -> Vec<String> {
        objects
            .iter()
            .find(|o| o.path == path)
            .map(|o| o.attributes.iter().map(|a| a.name.clone()).collect())
            .unwrap_or_default()
    };
    if attributes("/") != ["of_root"]
        || attributes("/g/h") != ["of_h"]
        || !attributes("/g").is_empty()
    {
        return Err("attributes in the wrong groups".into());
    }
    if !matches!(objects[4].kind, Kind::Group) {
        return Err("g/h is not a group".into());
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    vec![
        Trial::test("written::round_trip", round_trip),
        Trial::test("written::refusals", refusals),
        Trial::test("written::groups", groups),
    ]
}
