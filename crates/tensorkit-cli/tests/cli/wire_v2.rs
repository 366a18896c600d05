//! Tensogram wire version 2 files written by tensogram 0.14.0, 0.15.0 and 0.16.1
//! (`testdata/tensogram/reference/v2`): every command reads them (as migrated to version 3,
//! every version 2 hash checked), `validate` says what it found, `migrate` writes a
//! version 3 file that holds the same tensors bit for bit, and damage is an error.

use crate::support::{expect_error_contract, inspect_json, tensorkit};
use libtest_mimic::{Failed, Trial};
use std::path::{Path, PathBuf};
use tensor_testkit::{files_with_extension, testdata};

fn fixtures() -> Vec<PathBuf> {
    files_with_extension(&testdata().join("tensogram/reference/v2"), "tgm")
}

fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn commands_read_it(file: &Path) -> Result<(), Failed> {
    let path = file.to_string_lossy();
    let sidecar = tensor_testkit::sidecar(file)?;
    let ours = inspect_json(file)?;
    let listed = ours["tensors"].as_array().ok_or("no tensors")?;
    let objects: Vec<&serde_json::Value> = sidecar["messages"]
        .as_array()
        .ok_or("sidecar: messages")?
        .iter()
        .flat_map(|m| m["objects"].as_array().into_iter().flatten())
        .collect();
    if listed.len() != objects.len() {
        return Err(format!("{} tensors, {} written", listed.len(), objects.len()).into());
    }
    for (t, o) in listed.iter().zip(&objects) {
        if t["sha256_le"] != o["sha256"] || t["dtype"] != o["dtype"] || t["shape"] != o["shape"] {
            return Err(format!("{}: differs from what the writer decoded", t["name"]).into());
        }
    }
    let validated = tensorkit(&["validate", &path, "--level", "full"]);
    let said = text(&validated);
    if !validated.status.success() || !said.contains("wire_version_2") || !said.contains("valid") {
        return Err(format!("validate: {said}").into());
    }
    let verified = tensorkit(&["verify", &path]);
    let hashed = !path.contains("nohash");
    if verified.status.success() != hashed {
        return Err(format!("verify: {}", text(&verified)).into());
    }
    let dir = tempfile::tempdir()?;
    let v3 = dir.path().join("v3.tgm");
    let v3s = v3.to_string_lossy();
    let migrated = tensorkit(&["migrate", &path, &v3s]);
    if !migrated.status.success() || !text(&migrated).contains("migrated") {
        return Err(format!("migrate: {}", text(&migrated)).into());
    }
    let check = tensorkit(&["validate", &v3s, "--level", "full", "--canonical"]);
    if !check.status.success() || text(&check).contains("wire_version_2") {
        return Err(format!("the migrated file: {}", text(&check)).into());
    }
    let diff = tensorkit(&["diff", &path, &v3s]);
    if !diff.status.success() {
        return Err(format!("diff: {}", text(&diff)).into());
    }
    // Migrating a version 3 file is refused: there is nothing to do.
    let again = tensorkit(&[
        "migrate",
        &v3s,
        &dir.path().join("again.tgm").to_string_lossy(),
    ]);
    expect_error_contract(&again, false)?;
    Ok(())
}

/// A flipped byte in the middle of the file is an error for every reading command (a hash,
/// a frame or a descriptor that no longer holds), and `migrate` leaves no file.
fn damage_is_an_error(file: &Path) -> Result<(), Failed> {
    let mut bytes = std::fs::read(file)?;
    let at = bytes.len() / 2;
    bytes[at] ^= 0x20;
    let dir = tempfile::tempdir()?;
    let damaged = dir.path().join("damaged.tgm");
    std::fs::write(&damaged, &bytes)?;
    let d = damaged.to_string_lossy();
    let out = dir.path().join("out.tgm");
    let name = file.to_string_lossy();
    let unhashed = name.contains("nohash") || name.contains("unaligned");
    for args in [vec!["inspect", &*d], vec!["verify", &*d]] {
        // A flip inside an unhashed payload reads as other values: only files with hashes
        // promise to notice.
        if tensorkit(&args).status.success() && !unhashed {
            return Err(format!("{args:?} succeeded on a damaged file").into());
        }
    }
    let migrated = tensorkit(&["migrate", &d, &out.to_string_lossy()]);
    if migrated.status.success() {
        if !unhashed {
            return Err("migrate succeeded on a damaged file".into());
        }
    } else {
        expect_error_contract(&migrated, false)?;
        if out.exists() {
            return Err("migrate left a file behind".into());
        }
    }
    Ok(())
}

/// The unhashed file with object 1's shape patched from `[7]` to `[23]` (same CBOR length):
/// its payload is 32 bytes short of what the descriptor says.
fn outgrown_descriptor(dir: &Path) -> Result<PathBuf, Failed> {
    let file = testdata().join("tensogram/reference/v2/v2_0.16.1_nohash.tgm");
    let mut bytes = std::fs::read(file)?;
    let pattern = b"eshape\x81\x07";
    let at: Vec<usize> = bytes
        .windows(pattern.len())
        .enumerate()
        .filter(|(_, w)| w == pattern)
        .map(|(i, _)| i)
        .collect();
    if at.is_empty() {
        return Err("the fixture has no shape [7]".into());
    }
    for i in at {
        bytes[i + pattern.len() - 1] = 0x17;
    }
    let damaged = dir.join("outgrown.tgm");
    std::fs::write(&damaged, &bytes)?;
    Ok(damaged)
}

/// A descriptor whose shape its payload cannot fill: `migrate` refuses it (it used to write a
/// file our own `validate` refused) and leaves no file; `verify` and `validate` say
/// `malformed`, not `checksum_mismatch`.
fn a_descriptor_its_payload_cannot_fill_is_refused() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let damaged = outgrown_descriptor(dir.path())?;
    let d = damaged.to_string_lossy();
    let out = dir.path().join("out.tgm");
    let migrated = tensorkit(&["migrate", &d, &out.to_string_lossy()]);
    let kind = expect_error_contract(&migrated, false)?;
    if kind != "malformed" || out.exists() || !text(&migrated).contains("46 payload bytes") {
        return Err(format!("migrate: {kind}: {}", text(&migrated)).into());
    }
    let verified = tensorkit(&["verify", &d]);
    let kind = expect_error_contract(&verified, false)?;
    if kind != "malformed" || text(&verified).contains("Error:") {
        return Err(format!("verify: {kind}: {}", text(&verified)).into());
    }
    for level in ["quick", "default", "full"] {
        let validated = tensorkit(&["validate", &d, "--level", level]);
        if validated.status.code() != Some(2) {
            return Err(format!("validate --level {level}: {}", text(&validated)).into());
        }
    }
    Ok(())
}

/// Encoded objects (simple packing + szip, lz4, zstd...) whose descriptor says another
/// shape or dtype than their payload was encoded for: the payload's size does not show it,
/// and version 2 hashes cover payloads only, so `migrate` decodes every object against its
/// descriptor and refuses each, leaving no file (it wrote version 3 files of them).
fn encoded_objects_of_another_shape_or_dtype_are_refused() -> Result<(), Failed> {
    let file = testdata().join("tensogram/reference/v2/v2_0.16.1_packed.tgm");
    let bytes = std::fs::read(file)?;
    let dir = tempfile::tempdir()?;
    // Each change keeps the CBOR's length; applied where the metadata and where the data
    // object frame describe the object.
    let edits: [(&[u8], &[u8]); 4] = [
        (b"eshape\x82\x14\x18\x1e", b"eshape\x82\x14\x18\x1f"),
        (b"gfloat32eshape\x82\n\x18d", b"gfloat64eshape\x82\n\x18d"),
        (b"eshape\x81\x19\x01\x00", b"eshape\x81\x19\x01\x01"),
        (b"eshape\x81\x18@", b"eshape\x81\x18A"),
    ];
    for (i, (from, to)) in edits.into_iter().enumerate() {
        let mut patched = bytes.clone();
        let mut found = 0;
        let mut at = 0;
        while let Some(k) = patched[at..].windows(from.len()).position(|w| w == from) {
            patched[at + k..at + k + to.len()].copy_from_slice(to);
            at += k + to.len();
            found += 1;
        }
        if found != 2 {
            return Err(format!("change {i}: found {found} times, not twice").into());
        }
        let input = dir.path().join(format!("changed_{i}.tgm"));
        let out = dir.path().join(format!("out_{i}.tgm"));
        std::fs::write(&input, &patched)?;
        let migrated = tensorkit(&["migrate", &input.to_string_lossy(), &out.to_string_lossy()]);
        let kind = expect_error_contract(&migrated, false)?;
        if kind != "malformed" || out.exists() || !text(&migrated).contains(&format!("object {i}"))
        {
            return Err(format!("change {i}: {kind}: {}", text(&migrated)).into());
        }
    }
    Ok(())
}

/// `verify` of a file without hashes still decodes every tensor: exit 3 (nothing verified)
/// when they decode, 2 when one does not.
fn verify_without_hashes_decodes_every_tensor() -> Result<(), Failed> {
    let file = testdata().join("tensogram/reference/v2/v2_0.16.1_nohash.tgm");
    let sound = tensorkit(&["verify", &file.to_string_lossy()]);
    if sound.status.code() != Some(3) {
        return Err(format!("verify of an unhashed file: {}", text(&sound)).into());
    }
    let dir = tempfile::tempdir()?;
    let damaged = outgrown_descriptor(dir.path())?;
    let out = tensorkit(&["verify", &damaged.to_string_lossy()]);
    if out.status.code() != Some(2) {
        return Err(format!("verify of an undecodable unhashed file: {}", text(&out)).into());
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    let mut trials = vec![
        Trial::test(
            "wire_v2::a_descriptor_its_payload_cannot_fill_is_refused",
            a_descriptor_its_payload_cannot_fill_is_refused,
        ),
        Trial::test(
            "wire_v2::verify_without_hashes_decodes_every_tensor",
            verify_without_hashes_decodes_every_tensor,
        ),
        Trial::test(
            "wire_v2::encoded_objects_of_another_shape_or_dtype_are_refused",
            encoded_objects_of_another_shape_or_dtype_are_refused,
        ),
    ];
    for f in fixtures() {
        let stem = tensor_testkit::stem(&f);
        let g = f.clone();
        trials.push(Trial::test(format!("wire_v2::read::{stem}"), move || {
            commands_read_it(&g)
        }));
        trials.push(Trial::test(format!("wire_v2::damage::{stem}"), move || {
            damage_is_an_error(&f)
        }));
    }
    assert!(trials.len() >= 20, "tensogram v2 fixtures missing");
    trials
}
