//! Files of formats tensorkit does not read (pickles other than torch's): every command says what they look like, as an
//! unknown format, and none is taken for a length-prefixed tensor format (their ninth byte
//! passes BinTensors' recognition, a 0 or 1 after a length).

use crate::support::{expect_error_contract, tensorkit};
use libtest_mimic::{Failed, Trial};

/// The first bytes of each kind of file, as their writers lay them out, and what the error
/// must call it.
fn files() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    // pickle protocol 2 of {"w": 1}.
    let pickle = b"\x80\x02}q\x00X\x01\x00\x00\x00wq\x01K\x01s.".to_vec();
    vec![("pickle", pickle, "a Python pickle")]
}

fn named_by_every_command() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    for (name, bytes, says) in files() {
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes)?;
        let p = path.to_string_lossy();
        for command in [
            vec!["ls", &p],
            vec!["inspect", &p],
            vec!["inspect", "--json", &p],
            vec!["validate", &p],
            vec!["verify", &p],
        ] {
            let run = tensorkit(&command);
            let json = command.contains(&"--json");
            let stderr = String::from_utf8_lossy(&run.stderr);
            let stdout = String::from_utf8_lossy(&run.stdout);
            if command[0] == "validate" {
                // validate reports the file as unknown, never as a format it read.
                if run.status.code() != Some(2)
                    || !format!("{stdout}{stderr}").contains(says)
                    || stdout.contains("bintensors")
                {
                    return Err(format!("{name}: validate: {stdout}{stderr}").into());
                }
                continue;
            }
            let kind = expect_error_contract(&run, json)?;
            if kind != "unsupported"
                || !stderr.contains("not a format tensorkit reads (it looks like")
                || !stderr.contains(says)
            {
                return Err(format!("{name}: {command:?}: {kind}: {stderr}").into());
            }
        }
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    vec![Trial::test(
        "foreign::files_of_other_formats_are_named",
        named_by_every_command,
    )]
}
