//! Helpers shared by the test modules.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

pub(crate) use tensor_testkit::{files_with_extension, same_json_value as same_value, testdata};

/// Runs the built `tensorkit` binary.
pub(crate) fn tensorkit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tensorkit"))
        .args(args)
        .output()
        .expect("the tensorkit binary runs")
}

/// `inspect --json FILE`, parsed; fails unless the command succeeded.
pub(crate) fn inspect_json(file: &Path) -> Result<Value, String> {
    let out = tensorkit(&["inspect", "--json", &file.to_string_lossy()]);
    if !out.status.success() {
        return Err(format!(
            "exit {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("stdout is not JSON: {e}"))
}

/// Checks that a failed run followed the error contract: exit 2, exactly one stderr line
/// `error[<kind>]: ...`, and with `--json` an error object on stdout. Returns the kind.
pub(crate) fn expect_error_contract(out: &Output, json: bool) -> Result<String, String> {
    let code = out.status.code();
    if code != Some(2) {
        return Err(format!(
            "expected exit 2, got {code:?}; stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    if lines.len() != 1 || !lines[0].starts_with("error[") {
        return Err(format!(
            "expected one `error[kind]: ...` line, got {stderr:?}"
        ));
    }
    let kind = lines[0]["error[".len()..]
        .split(']')
        .next()
        .unwrap_or_default()
        .to_owned();
    if json {
        let v: Value = serde_json::from_slice(&out.stdout)
            .map_err(|e| format!("--json error output is not JSON: {e}"))?;
        if v["error"]["kind"] != kind.as_str() || !v["error"]["message"].is_string() {
            return Err(format!("bad JSON error object: {v}"));
        }
    }
    Ok(kind)
}

/// The canonical dtype name of a reference (safetensors / bintensors) spelling.
pub(crate) fn canonical_dtype(reference: &str) -> Option<&'static str> {
    Some(match reference {
        "BOOL" => "bool",
        "U8" => "uint8",
        "I8" => "int8",
        "F8_E5M2" => "float8_e5m2",
        "F8_E4M3" => "float8_e4m3",
        "I16" => "int16",
        "U16" => "uint16",
        "F16" => "float16",
        "BF16" => "bfloat16",
        "I32" => "int32",
        "U32" => "uint32",
        "F32" => "float32",
        "F64" => "float64",
        "I64" => "int64",
        "U64" => "uint64",
        canonical => return tensor_dtype_name(canonical),
    })
}

/// A name that is already canonical (zTensor 0.1 uses tensorkit's own spellings).
fn tensor_dtype_name(name: &str) -> Option<&'static str> {
    name.parse::<tensor_dtype::Dtype>()
        .ok()
        .map(tensor_dtype::Dtype::name)
}

/// Writes a safetensors file with one float32 tensor `t` of `n` elements (0, 1, 2...) and,
/// when given, a metadata key `note`.
pub(crate) fn write_f32_safetensors(
    path: &Path,
    n: usize,
    note: Option<&str>,
) -> std::io::Result<()> {
    let metadata = note.map_or_else(String::new, |v| {
        format!(r#""__metadata__":{{"note":"{v}"}},"#)
    });
    let header = format!(
        r#"{{{metadata}"t":{{"dtype":"F32","shape":[{n}],"data_offsets":[0,{}]}}}}"#,
        4 * n
    );
    let data: Vec<u8> = (0..n).flat_map(|i| (i as f32).to_le_bytes()).collect();
    std::fs::write(path, safetensors_file(&header, &data))
}

/// A safetensors file: the length prefix, `header` padded with spaces to a multiple of 8 (as
/// writers pad it), then `data`.
pub(crate) fn safetensors_file(header: &str, data: &[u8]) -> Vec<u8> {
    let mut header = header.to_owned();
    while !header.len().is_multiple_of(8) {
        header.push(' ');
    }
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(data);
    bytes
}
