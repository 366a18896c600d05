//! The commands that look inside files and move tensors between them: `ls`, `get`,
//! `verify`, `diff`, `merge` and `split`.

use crate::error::{Error, Result};
use crate::report;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use tensor_core::{ByteOrder, Limits};
use tensor_dtype::scalar::{self, Scalar};
use tensorkit::{Format, TensorRef, TensorSet};

/// `ls`: one line per tensor — name (or `-`), dtype, shape, bytes, and where it sits.
pub fn ls(file: &Path, limits: &Limits) -> Result<String> {
    let opened = crate::open(file, limits)?;
    let mut out = String::new();
    for t in opened.tensors() {
        let _ = write!(
            out,
            "{}\t{}\t{}\t{}",
            escape_field(&t.name()),
            t.dtype(),
            report::shape_text(t.shape()),
            t.byte_len()
        );
        for (key, index) in t.location() {
            let _ = write!(out, "\t{key}={index}");
        }
        out.push('\n');
    }
    Ok(out)
}

/// `name` as one field of a tab-separated line, as `ls` prints names: a backslash, tab,
/// newline or carriage return in it is escaped (`\\`, `\t`, `\n`, `\r`).
fn escape_field(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 2);
    for c in name.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            other => out.push(other),
        }
    }
    out
}

/// The tensor `key` names: its name, `tensor_<i>` for the i-th unnamed one, or `#<i>` for
/// the i-th in file order.
pub fn find<'f>(set: &'f TensorSet<'f>, key: &str, file: &Path) -> Result<TensorRef<'f>> {
    let by_name = set.tensors().find(|t| t.stored_name() == Some(key));
    let by_index = key
        .strip_prefix('#')
        .or_else(|| key.strip_prefix("tensor_"))
        .and_then(|n| n.parse::<usize>().ok())
        .and_then(|i| set.tensors().nth(i))
        .filter(|t| key.starts_with('#') || t.stored_name().is_none());
    by_name.or(by_index).ok_or_else(|| Error::UnknownTarget {
        what: format!(
            "{}: no tensor {key:?} (names: {}; or #0 to #{})",
            file.display(),
            set.names()
                .iter()
                .take(8)
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
            set.len().saturating_sub(1)
        ),
    })
}

/// One value as text: narrow floats in their own shortest form (a float32 0.1 prints as
/// `0.1`, not as its float64 widening), everything else as in JSON output.
fn scalar_text(s: Scalar, dtype: tensor_dtype::Dtype) -> String {
    use tensor_dtype::Dtype;
    let narrow = matches!(
        dtype,
        Dtype::Float32 | Dtype::Complex64 | Dtype::Float16 | Dtype::Bfloat16
    );
    let f = |v: f64| {
        if !v.is_finite() {
            report::float_json(v)
                .to_string()
                .trim_matches('"')
                .to_owned()
        } else if narrow {
            format!("{:?}", v as f32)
        } else {
            format!("{v:?}")
        }
    };
    match s {
        Scalar::Float(v) => f(v),
        Scalar::Complex(re, im) => format!(
            "{}{}{}j",
            f(re),
            if im < 0.0 || im.is_nan() { "" } else { "+" },
            f(im)
        ),
        other => report::scalar_json(other).to_string(),
    }
}

/// `get`: the tensor's values as text, one row of the last dimension per line, or written
/// to `output` as a `.npy` file.
pub fn get(
    file: &Path,
    key: &str,
    output: Option<&Path>,
    raw: bool,
    limits: &Limits,
    durability: tensorkit::Durability,
) -> Result<String> {
    let opened = crate::open(file, limits)?;
    let found = find(opened.tensor_set(), key, file)?;
    // --raw: a GGUF quantized tensor's blocks as stored, as bytes; a tensor stored as its
    // elements is its own raw bytes.
    let blocks = match (raw, found.blocks()) {
        (true, Some((_, bytes, shape))) => Some(tensorkit::TensorView::new(
            bytes,
            tensorkit::Dtype::Uint8,
            &shape,
            tensorkit::ByteOrder::Little,
        )?),
        (true, None) => {
            if let Some(encoding) = found.encoding() {
                return Err(Error::UnknownTarget {
                    what: format!(
                        "--raw gives the stored blocks of GGUF quantized tensors; {key:?} is stored as {encoding}"
                    ),
                });
            }
            None
        }
        (false, _) => None,
    };
    let (dtype, shape) = match &blocks {
        Some(v) => (v.dtype(), v.shape().to_vec()),
        None => (found.dtype(), found.shape().to_vec()),
    };
    if let Some(path) = output {
        let mut f = tensor_core::atomic::AtomicFile::create_with(path, durability)?;
        match &blocks {
            Some(v) => crate::npy::write_view(v, key, limits, &mut f)?,
            None => crate::npy::write(found, key, &mut f)?,
        }
        f.commit()?;
        // Packed types are written one element per byte, as ml_dtypes holds them.
        let (bytes, how) = if dtype.is_packed() {
            (
                tensor_dtype::shape::element_count(&shape)?,
                ", one element per byte",
            )
        } else {
            (tensor_dtype::shape::byte_len(dtype, &shape)?, "")
        };
        return Ok(format!(
            "wrote {} ({dtype} {}, {bytes} bytes of data{how})\n",
            path.display(),
            report::shape_text(&shape),
        ));
    }
    let mut held = None;
    let v = match blocks {
        Some(v) => v,
        None => elements(found, &mut held)?,
    };
    let le = v.to_le_bytes();
    let n = usize::try_from(v.element_count()).unwrap_or(usize::MAX);
    let row = v
        .shape()
        .last()
        .map_or(1, |&d| usize::try_from(d).unwrap_or(1))
        .max(1);
    let mut out = format!(
        "# {} {} {}\n",
        key,
        v.dtype(),
        report::shape_text(v.shape())
    );
    let mut start = 0;
    while start < n {
        let values = scalar::decode(v.dtype(), &le, ByteOrder::Little, start, row);
        let line: Vec<String> = values
            .into_iter()
            .map(|s| scalar_text(s, v.dtype()))
            .collect();
        out.push_str(&line.join(" "));
        out.push('\n');
        start += row;
    }
    Ok(out)
}

/// Tensor `t`'s elements in memory: its file's bytes where it stores them as they are
/// (checked against the file's checksum first), decoded into `held` otherwise.
fn elements<'f>(
    t: TensorRef<'f>,
    held: &'f mut Option<tensorkit::Tensor>,
) -> Result<tensorkit::TensorView<'f>> {
    if let Ok(v) = t.view() {
        t.verify()?;
        return Ok(v);
    }
    Ok(held.insert(t.to_tensor()?).view())
}

/// Real and imaginary parts of a value, for numeric comparison.
fn parts(s: Scalar) -> (f64, f64) {
    match s {
        Scalar::Bool(b) => (f64::from(u8::from(b)), 0.0),
        Scalar::Int(i) => (i as f64, 0.0),
        Scalar::Uint(u) => (u as f64, 0.0),
        Scalar::Float(f) => (f, 0.0),
        Scalar::Complex(re, im) => (re, im),
    }
}

/// Folds the differences between `xs` and `ys` into `worst` (NaN matching NaN counts as
/// equal); `worst` becomes `None` when one holds NaN where the other does not.
fn fold_differences(worst: &mut Option<f64>, xs: Vec<Scalar>, ys: Vec<Scalar>) {
    for (x, y) in xs.into_iter().zip(ys) {
        let ((xr, xi), (yr, yi)) = (parts(x), parts(y));
        for (p, q) in [(xr, yr), (xi, yi)] {
            if p.is_nan() || q.is_nan() {
                if p.is_nan() != q.is_nan() {
                    *worst = None;
                    return;
                }
            } else if p != q
                && let Some(w) = worst
            {
                *w = w.max((p - q).abs());
            }
        }
    }
}

/// The largest difference between `a`'s values and `b`'s, or `None` when one holds NaN
/// where the other does not. `a` is held in memory, `b` streamed in runs: one decoded tensor
/// at a time (bitmasks, whose elements are bits, are compared whole).
fn max_difference(a: TensorRef<'_>, b: TensorRef<'_>) -> Result<Option<f64>> {
    let mut held_a = None;
    let va = elements(a, &mut held_a)?;
    let le = va.to_le_bytes();
    let (da, db) = (va.dtype(), b.dtype());
    let mut worst = Some(0f64);
    if db.is_packed() || da.is_packed() {
        let mut held_b = None;
        let vb = elements(b, &mut held_b)?;
        let n = usize::try_from(va.element_count()).unwrap_or(usize::MAX);
        let xs = scalar::decode(da, &le, ByteOrder::Little, 0, n);
        let ys = scalar::decode(db, &vb.to_le_bytes(), ByteOrder::Little, 0, n);
        fold_differences(&mut worst, xs, ys);
        return Ok(worst);
    }
    let width = db.byte_width().max(1);
    let mut at = 0usize;
    b.stream(&mut |c| {
        let count = c.len() / width;
        if worst.is_some() {
            let xs = scalar::decode(da, &le, ByteOrder::Little, at, count);
            let ys = scalar::decode(db, c, ByteOrder::Little, 0, count);
            fold_differences(&mut worst, xs, ys);
        }
        at += count;
        Ok(())
    })?;
    Ok(worst)
}

/// SHA-256 of a tensor's little-endian elements, bools normalised to 0/1, streamed.
fn digest(t: TensorRef<'_>) -> Result<[u8; 32]> {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    t.write_canonical(&mut h)?;
    Ok(h.finalize().into())
}

/// `diff`: tensor by tensor, by name (or by position for unnamed tensors). Returns the
/// report and whether anything differs beyond `tolerance`.
pub fn diff(a: &Path, b: &Path, tolerance: f64, limits: &Limits) -> Result<(String, bool)> {
    let (fa, fb) = (crate::open(a, limits)?, crate::open(b, limits)?);
    let (sa, sb) = (fa.tensor_set(), fb.tensor_set());
    let (na, nb) = (sa.names(), sb.names());
    let mut out = format!(
        "--- {} ({})\n+++ {} ({})\n",
        a.display(),
        sa.format().id(),
        b.display(),
        sb.format().id()
    );
    let mut differ = false;
    let tbs: Vec<TensorRef<'_>> = sb.tensors().collect();
    for (ta, name) in sa.tensors().zip(&na) {
        let Some(j) = nb.iter().position(|n| n == name) else {
            differ = true;
            let _ = writeln!(out, "- {name}: only in the first file");
            continue;
        };
        let tb = tbs[j];
        if ta.shape() != tb.shape() {
            differ = true;
            let _ = writeln!(
                out,
                "! {name}: shape {} vs {}",
                report::shape_text(ta.shape()),
                report::shape_text(tb.shape())
            );
            continue;
        }
        let dtypes = if ta.dtype() == tb.dtype() {
            String::new()
        } else {
            format!(" ({} vs {})", ta.dtype(), tb.dtype())
        };
        // Identical tensors are found by streaming both through a hash (bounded memory);
        // only tensors that differ are loaded to measure by how much.
        if ta.dtype() == tb.dtype() && digest(ta)? == digest(tb)? {
            let _ = writeln!(out, "= {name}: identical");
            continue;
        }
        match max_difference(ta, tb)? {
            Some(0.0) => {
                let _ = writeln!(out, "= {name}: equal values{dtypes}");
            }
            Some(d) if d <= tolerance => {
                let _ = writeln!(out, "~ {name}: within tolerance, max |a-b| = {d:e}{dtypes}");
            }
            Some(d) => {
                differ = true;
                let _ = writeln!(out, "! {name}: max |a-b| = {d:e}{dtypes}");
            }
            None => {
                differ = true;
                let _ = writeln!(
                    out,
                    "! {name}: NaN in one file where the other has a number{dtypes}"
                );
            }
        }
    }
    for name in nb.iter().filter(|n| !na.contains(n)) {
        differ = true;
        let _ = writeln!(out, "+ {name}: only in the second file");
    }
    if sa.metadata() != sb.metadata() {
        let _ = writeln!(out, "(file metadata differs)");
    }
    Ok((out, differ))
}

/// The output format for `merge`/`split`: `--to`, else the output's extension, else (for
/// split) the input's format when it can be written, or the newest generation of it that
/// can (zTensor 1.x files split into zTensor 2).
fn format_for(output: &Path, to: Option<&str>, fallback: Option<Format>) -> Result<Format> {
    match (to, Format::from_extension(output), fallback) {
        (None, None, Some(f)) if f.info().writes => Ok(f),
        (None, None, Some(f)) => {
            Format::from_extension(Path::new(&format!("file.{}", f.extension())))
                .map_or_else(|| crate::convert::target(output, to), Ok)
        }
        _ => crate::convert::target(output, to),
    }
}

/// `merge`: every tensor of every input into one file. Names must not repeat; file metadata
/// is merged key by key and a key with two different values is an error. With `progress`,
/// a bar follows the writing of large outputs on a terminal.
pub fn merge(
    inputs: &[PathBuf],
    output: &Path,
    args: &crate::cli::Target,
    progress: bool,
    limits: &Limits,
    durability: tensorkit::Durability,
) -> Result<String> {
    let target = format_for(output, args.to.as_deref(), None)?;
    let options = args.write_options(target, durability)?;
    // A directory `split` wrote (or its index, or an older manifest) stands for its files,
    // in the original order, with the real names. A file named twice — `parts/*` names the
    // index and every part it lists — is one file, read once, under the index's name for it.
    let manifests: Vec<Option<Vec<(PathBuf, String)>>> = inputs
        .iter()
        .map(|i| split_manifest(i, limits))
        .collect::<Result<_>>()?;
    let listed: HashSet<PathBuf> = manifests
        .iter()
        .flatten()
        .flatten()
        .map(|(f, _)| same_file_key(f))
        .collect();
    let mut files: Vec<(PathBuf, Option<String>)> = Vec::new();
    let mut taken: HashSet<PathBuf> = HashSet::new();
    for (input, parts) in inputs.iter().zip(manifests) {
        let entries: Vec<(PathBuf, Option<String>)> = match parts {
            Some(parts) => parts.into_iter().map(|(f, n)| (f, Some(n))).collect(),
            None => vec![(input.clone(), None)],
        };
        for (f, n) in entries {
            let key = same_file_key(&f);
            // A part a manifest lists comes in where the manifest stands, under its name.
            let manifest_has_it = n.is_none() && listed.contains(&key);
            if !manifest_has_it && taken.insert(key) {
                files.push((f, n));
            }
        }
    }
    let inputs: Vec<PathBuf> = files.iter().map(|(f, _)| f.clone()).collect();
    let inputs = &inputs[..];
    let opened: Vec<tensorkit::File> = inputs
        .iter()
        .map(|p| crate::open(p, limits))
        .collect::<Result<_>>()?;
    let mut merged = TensorSet::new(target, *limits);
    let mut seen: Vec<(String, PathBuf)> = Vec::new();
    for ((path, file), (_, real_name)) in inputs.iter().zip(&opened).zip(&files) {
        let set = file.tensor_set();
        let mut names = set.names();
        if let (Some(real), [_]) = (real_name, &mut names[..]) {
            names[0].clone_from(real);
        }
        for (k, ty) in set.metadata_types() {
            merged
                .metadata_types_mut()
                .entry(k.clone())
                .or_insert_with(|| ty.clone());
        }
        if let Some(m) = set.metadata() {
            let into = merged
                .metadata_mut()
                .get_or_insert_with(serde_json::Map::new);
            for (k, v) in m.clone() {
                match into.get(&k) {
                    Some(old) if *old != v => {
                        return Err(Error::UnknownTarget {
                            what: format!(
                                "cannot merge: metadata key {k:?} is {old} in one input and {v} in {}",
                                path.display()
                            ),
                        });
                    }
                    _ => {
                        into.insert(k, v);
                    }
                }
            }
        }
        for (t, name) in set.tensors().zip(names) {
            if let Some((_, first)) = seen.iter().find(|(n, _)| *n == name) {
                return Err(Error::UnknownTarget {
                    what: format!(
                        "cannot merge: tensor {name:?} is in both {} and {}",
                        first.display(),
                        path.display()
                    ),
                });
            }
            seen.push((name.clone(), path.clone()));
            merged.push(t, name);
        }
    }
    let dropped = crate::convert::save_with_progress(&merged, output, options, progress)?;
    let mut text = format!(
        "merged {} tensors from {} files into {} ({})\n",
        merged.len(),
        inputs.len(),
        output.display(),
        target.id()
    );
    for d in dropped {
        let _ = writeln!(text, "left out: {d}");
    }
    Ok(text)
}

/// The manifest `split` wrote beside the files before it wrote a Hugging Face index: the
/// real tensor names, in order. `merge` still reads it.
pub const SPLIT_MANIFEST: &str = "tensorkit-split.json";

/// File-name stems are kept to this many bytes (file systems allow 255); longer names are
/// cut and end in a hash of the whole name.
const MAX_STEM: usize = 96;

/// The files and real names `split` recorded, when `input` is a directory holding its
/// index (the one `*.index.json` there) or [`SPLIT_MANIFEST`] (what earlier versions
/// wrote), or is one of those itself.
fn split_manifest(input: &Path, limits: &Limits) -> Result<Option<Vec<(PathBuf, String)>>> {
    let is_manifest = |p: &Path| p.file_name().is_some_and(|n| n == SPLIT_MANIFEST);
    let manifest = if input.is_dir() {
        let old = input.join(SPLIT_MANIFEST);
        if old.is_file() {
            old
        } else {
            let indexes: Vec<PathBuf> = std::fs::read_dir(input)
                .map_err(|e| tensor_core::Error::io(format!("reading {}", input.display()), e))?
                .filter_map(|e| Some(e.ok()?.path()))
                .filter(|p| tensorkit::shards::is_index(p))
                .collect();
            match &indexes[..] {
                [one] => one.clone(),
                _ => return Ok(None),
            }
        }
    } else if is_manifest(input) || tensorkit::shards::is_index(input) {
        input.to_path_buf()
    } else {
        return Ok(None);
    };
    if !is_manifest(&manifest) {
        let index = tensorkit::shards::Index::read(&manifest, limits)?;
        return Ok(Some(
            index
                .entries()
                .map(|(name, file)| (file, name.to_owned()))
                .collect(),
        ));
    }
    let dir = manifest.parent().unwrap_or(Path::new("."));
    let text = std::fs::read_to_string(&manifest)
        .map_err(|e| tensor_core::Error::io(format!("reading {}", manifest.display()), e))?;
    let bad = |why: &str| Error::UnknownTarget {
        what: format!("{}: {why}", manifest.display()),
    };
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(&e.to_string()))?;
    v["tensors"]
        .as_array()
        .ok_or_else(|| bad("no \"tensors\" list"))?
        .iter()
        .map(|t| {
            let name = t["name"]
                .as_str()
                .ok_or_else(|| bad("a tensor without a name"))?;
            let file = t["file"]
                .as_str()
                .ok_or_else(|| bad("a tensor without a file"))?;
            if file.contains(['/', '\\']) || file.starts_with('.') {
                return Err(bad(&format!(
                    "file {file:?} is not a plain name in the directory"
                )));
            }
            Ok((dir.join(file), name.to_owned()))
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

/// What identifies a file however it is named: its canonical path where it exists, else
/// the path as given (opening it then reports the error).
fn same_file_key(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A file name for a tensor: its name with path separators and other awkward characters
/// replaced, cut to [`MAX_STEM`] bytes (ending in a hash of the name) when longer.
fn file_stem(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s = if s.is_empty() || s.starts_with('.') {
        format!("_{s}")
    } else {
        s
    };
    if s.len() <= MAX_STEM {
        return s;
    }
    let mut cut = MAX_STEM - 17;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    let hash = <sha2::Sha256 as sha2::Digest>::digest(name.as_bytes())
        .iter()
        .fold(String::new(), |mut h, b| {
            let _ = write!(h, "{b:02x}");
            h
        });
    format!("{}~{}", &s[..cut], &hash[..16])
}

/// `split --max-tensors N | --max-size BYTES`: a GGUF split set in `dir`, cut, named and
/// keyed as `gguf-split` does it, named after the input (`DIR/<stem>-00001-of-0000N.gguf`;
/// a shard's own suffix is dropped first).
pub fn split_gguf(
    input: &Path,
    dir: &Path,
    limit: tensorkit::gguf::split::Limit,
    args: &crate::cli::Target,
    limits: &Limits,
    durability: tensorkit::Durability,
) -> Result<String> {
    let opened = crate::open(input, limits)?;
    let set = opened.tensor_set();
    let target = format_for(Path::new(""), args.to.as_deref(), Some(set.format()))?;
    if target != Format::GGUF {
        return Err(Error::UnknownTarget {
            what: format!(
                "--max-tensors and --max-size cut GGUF split sets; this would write {} (give --to gguf, or use `convert --max-shard-size` for a Hugging Face shard set)",
                target.id()
            ),
        });
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| tensor_core::Error::io(format!("creating {}", dir.display()), e))?;
    let stem = match tensorkit::gguf::split::parse_shard_path(input) {
        Some((prefix, _, _)) => prefix.file_name().map(std::ffi::OsStr::to_owned),
        None => input.file_stem().map(std::ffi::OsStr::to_owned),
    }
    .unwrap_or_else(|| "model".into());
    let (set, kept) = args
        .write_options(target, durability)?
        .prepare(set, target)?;
    let (shards, left_out) =
        tensorkit::shards::write_gguf_split(&set, &dir.join(stem), limit, durability)?;
    let mut text = String::new();
    for note in kept.iter().chain(&left_out) {
        let _ = writeln!(text, "left out: {note}");
    }
    for s in &shards {
        let _ = writeln!(text, "{}", s.display());
    }
    let _ = writeln!(
        text,
        "split {} tensors into {} GGUF shards",
        set.len(),
        shards.len()
    );
    Ok(text)
}

/// `split`: one file per tensor in `dir`, named after the tensor.
pub fn split(
    input: &Path,
    dir: &Path,
    args: &crate::cli::Target,
    limits: &Limits,
    durability: tensorkit::Durability,
) -> Result<String> {
    let opened = crate::open(input, limits)?;
    let mut set = opened.tensor_set().clone();
    if args.duplicates == crate::cli::Duplicates::Suffix {
        set.disambiguate();
    }
    let target = format_for(Path::new(""), args.to.as_deref(), Some(set.format()))?;
    let options = args.write_options(target, durability)?;
    std::fs::create_dir_all(dir)
        .map_err(|e| tensor_core::Error::io(format!("creating {}", dir.display()), e))?;
    // The index maps each name to its file: names must not repeat.
    set.check_unique_names(target.id())?;
    let names = set.names();
    let mut text = String::new();
    // Compared without case, for file systems that ignore it.
    let mut used = std::collections::HashSet::new();
    let mut weight_map = Vec::with_capacity(names.len());
    for (t, name) in set.tensors().zip(&names) {
        let stem = file_stem(name);
        let mut unique = stem.clone();
        let mut n = 1;
        while !used.insert(unique.to_lowercase()) {
            n += 1;
            unique = format!("{stem}~{n}");
        }
        let file = format!("{unique}.{}", target.extension());
        let path = dir.join(&file);
        weight_map.push((name.clone(), file));
        let mut single = TensorSet::new(target, *set.limits());
        *single.metadata_mut() = set.metadata().cloned();
        single.metadata_types_mut().clone_from(set.metadata_types());
        single.push(t, name.clone());
        tensorkit::save_set(&path, &single, &options)?;
        let _ = writeln!(text, "{}\t{}", escape_field(name), path.display());
    }
    // The Hugging Face index of the parts, named after the input: `tensorkit::open` reads
    // the parts through it as one set, and `merge DIR` puts them back in order.
    let stem = input
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty())
        .unwrap_or("split");
    let index =
        tensorkit::shards::index_path(&dir.join(format!("{stem}.{}", target.extension())), target);
    tensorkit::shards::write_index(&index, &set, weight_map, durability)?;
    let _ = writeln!(text, "{}", index.display());
    let _ = writeln!(
        text,
        "split {} tensors into {} ({})",
        set.len(),
        dir.display(),
        target.id()
    );
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ls_names_keep_their_line_and_field() {
        assert_eq!(escape_field("a\tb\nc\\d\re"), "a\\tb\\nc\\\\d\\re");
        assert_eq!(escape_field("encoder.w"), "encoder.w");
    }
}
