//! Every command that reads files reads URLs too: `inspect`, `ls`, `get`, `verify`,
//! `validate`, `diff` and `convert` against the counting server on 127.0.0.1, the output the
//! same as for the local file, and `--verbose` reporting what the reads cost.

use crate::support::{tensorkit, testdata};
use libtest_mimic::{Failed, Trial};
use tensor_testkit::http::Server;

fn stdout(args: &[&str]) -> (i32, String, String) {
    let o = tensorkit(args);
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn same_output_as_local() -> Result<(), Failed> {
    let root = testdata();
    let server = Server::start(&root);
    for rel in [
        "tensogram/conformance/multi_object_mixed.tgm",
        "safetensors/conformance/all_dtypes.safetensors",
        "ztensor/conformance/v2/v2_zstd_seekable.zt",
    ] {
        let local = root.join(rel);
        if !local.exists() {
            return Err(format!("missing fixture {rel}").into());
        }
        let local = local.to_string_lossy().into_owned();
        let url = server.url(rel);
        for cmd in [
            &["inspect"][..],
            &["inspect", "--json"],
            &["ls"],
            &["verify"],
            &["validate"],
        ] {
            let mut a: Vec<&str> = cmd.to_vec();
            a.push(&local);
            let mut b: Vec<&str> = cmd.to_vec();
            b.push(&url);
            let (ca, oa, _) = stdout(&a);
            let (cb, ob, eb) = stdout(&b);
            if ca != cb || oa.replace(&local, "FILE") != ob.replace(&url, "FILE") {
                return Err(format!(
                    "{cmd:?} {rel}: local exit {ca}:\n{oa}\nremote exit {cb}:\n{ob}\n{eb}"
                )
                .into());
            }
        }
        let (code, text, err) = stdout(&["diff", &local, &url]);
        if code != 0 {
            return Err(format!("diff {rel}: exit {code}: {text} {err}").into());
        }
    }
    Ok(())
}

fn get_and_convert_with_verbose() -> Result<(), Failed> {
    let root = testdata();
    let server = Server::start(&root);
    let url = server.url("tensogram/conformance/multi_object_mixed.tgm");
    let (code, text, err) = stdout(&["get", &url, "t2m", "--verbose"]);
    if code != 0 || text.is_empty() || !err.contains("remote: ") || !err.contains("requests") {
        return Err(format!("get: exit {code}: {text}\n{err}").into());
    }
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("x.tgm");
    let out_s = out.to_string_lossy().into_owned();
    let (code, text, err) = stdout(&["convert", &url, &out_s, "--quiet", "-v"]);
    if code != 0 || !err.contains("bytes received") {
        return Err(format!("convert: exit {code}: {text}\n{err}").into());
    }
    let local = root
        .join("tensogram/conformance/multi_object_mixed.tgm")
        .to_string_lossy()
        .into_owned();
    let (code, text, err) = stdout(&["diff", &local, &out_s]);
    if code != 0 {
        return Err(format!("converted file differs: {text}\n{err}").into());
    }
    let (code, _, err) = stdout(&["inspect", &server.url("nothing.tgm")]);
    if code == 0 || !err.contains("not found") {
        return Err(format!("missing object: exit {code}: {err}").into());
    }
    Ok(())
}

/// Hostile servers: one that trickles its bytes is stopped at `--timeout`, one that answers
/// with a gzip bomb is refused at once; each error names the URL (exit 2, the error
/// contract).
fn hostile_servers_end_in_bounded_time() -> Result<(), Failed> {
    use std::time::{Duration, Instant};
    use tensor_testkit::http::Faults;
    let root = testdata();
    let server = Server::start(&root);
    let url = server.url("safetensors/conformance/all_dtypes.safetensors");
    for (faults, args, says) in [
        (
            Faults {
                trickle: Some(Duration::from_millis(100)),
                ..Faults::default()
            },
            vec!["ls", "--timeout", "2"],
            "not done within 2 s",
        ),
        (
            Faults {
                trickle: Some(Duration::from_millis(100)),
                ..Faults::default()
            },
            vec!["validate", "--timeout", "1.5"],
            "not done within 1.5 s",
        ),
        (
            Faults {
                content_encoding: Some("gzip".into()),
                ..Faults::default()
            },
            vec!["ls"],
            "Content-Encoding",
        ),
    ] {
        server.set_faults(faults);
        let mut a = args.clone();
        a.push(&url);
        let started = Instant::now();
        let run = tensorkit(&a);
        let took = started.elapsed();
        let kind = crate::support::expect_error_contract(&run, false)?;
        let err = String::from_utf8_lossy(&run.stderr);
        if kind != "io"
            || !err.contains(&url)
            || !err.contains(says)
            || took > Duration::from_secs(8)
        {
            return Err(format!("{args:?}: {kind} after {took:?}: {err}").into());
        }
    }
    let (code, _, err) = stdout(&["ls", "--timeout", "0", &url]);
    if code != 2 || !err.contains("positive number of seconds") {
        return Err(format!("--timeout 0: exit {code}: {err}").into());
    }
    Ok(())
}

pub(crate) fn trials() -> Vec<Trial> {
    vec![
        Trial::test(
            "remote::hostile_servers_end_in_bounded_time",
            hostile_servers_end_in_bounded_time,
        ),
        Trial::test("remote::same_output_as_local", same_output_as_local),
        Trial::test(
            "remote::get_and_convert_with_verbose",
            get_and_convert_with_verbose,
        ),
        Trial::test("remote::hub_paths", hub_paths),
    ]
}

/// `hf://` paths: a model repository laid out as the Hub serves it (`<org>/<repo>/resolve/
/// <revision>/<file>`) on the counting server, named by `HF_ENDPOINT`; the token from
/// `HF_TOKEN` or the token file reaches it (the server refuses requests without it), a
/// revision after `@` is honoured, and a sharded checkpoint lists from its index.
fn hub_paths() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let repo = dir.path().join("org/model/resolve/main");
    let pinned = dir.path().join("org/model/resolve/v1");
    std::fs::create_dir_all(&repo)?;
    std::fs::create_dir_all(&pinned)?;
    let source = testdata().join("safetensors/conformance/all_dtypes.safetensors");
    std::fs::copy(&source, repo.join("model.safetensors"))?;
    std::fs::copy(
        testdata().join("pytorch/reference/module_state.pt"),
        pinned.join("pytorch_model.bin"),
    )?;
    let split = tensorkit(&[
        "convert",
        "--quiet",
        &source.to_string_lossy(),
        &repo.join("sharded.safetensors").to_string_lossy(),
        "--max-shard-size",
        "300",
    ]);
    let server = Server::start(dir.path());
    server.set_faults(tensor_testkit::http::Faults {
        bearer: Some("hf_secret".into()),
        ..Default::default()
    });
    let endpoint = server.url("").trim_end_matches('/').to_owned();
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_tensorkit"));
        c.args(args)
            .env("HF_ENDPOINT", &endpoint)
            .env_remove("HF_TOKEN")
            .env("HF_HOME", dir.path().join("no-home"));
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().expect("the tensorkit binary runs")
    };
    let local = stdout(&["ls", &source.to_string_lossy()]).1;
    let with_token = run(
        &["ls", "hf://org/model/model.safetensors"],
        &[("HF_TOKEN", "hf_secret")],
    );
    if !with_token.status.success() || String::from_utf8_lossy(&with_token.stdout) != local {
        return Err(format!(
            "hf:// with HF_TOKEN: {}",
            String::from_utf8_lossy(&with_token.stderr)
        )
        .into());
    }
    if !server
        .log()
        .iter()
        .all(|l| l.contains("authorization=bearer"))
    {
        return Err(format!("a request went without the token: {:?}", server.log()).into());
    }
    // No token: the server's 401 is an error that says what was refused.
    let without = run(&["ls", "hf://org/model/model.safetensors"], &[]);
    if without.status.code() != Some(2) {
        return Err(format!("without a token: exit {:?}", without.status.code()).into());
    }
    // The token file of HF_HOME, and a revision.
    let home = dir.path().join("hf-home");
    std::fs::create_dir_all(&home)?;
    std::fs::write(home.join("token"), "hf_secret\n")?;
    let home = home.to_string_lossy().into_owned();
    let pinned_run = run(
        &["ls", "hf://org/model@v1/pytorch_model.bin"],
        &[("HF_HOME", &home)],
    );
    if !pinned_run.status.success()
        || !String::from_utf8_lossy(&pinned_run.stdout).contains("0.weight")
    {
        return Err(format!(
            "hf://...@v1 with the token file: {}",
            String::from_utf8_lossy(&pinned_run.stderr)
        )
        .into());
    }
    // A sharded checkpoint, from its index.
    if split.status.success() {
        let index = std::fs::read_dir(&repo)?
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .find(|n| n.ends_with(".index.json"))
            .ok_or("split wrote no index")?;
        server.reset();
        let listed = run(
            &["ls", &format!("hf://org/model/{index}")],
            &[("HF_TOKEN", "hf_secret")],
        );
        let local_set = stdout(&["ls", &repo.join(&index).to_string_lossy()]).1;
        if !listed.status.success() || String::from_utf8_lossy(&listed.stdout) != local_set {
            return Err(format!(
                "the sharded set: {}",
                String::from_utf8_lossy(&listed.stderr)
            )
            .into());
        }
        // The index, then each shard's header: a few requests, no tensor's bytes.
        let shards = std::fs::read_dir(&repo)?
            .filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().starts_with("sharded-"))
            })
            .count() as u64;
        if server.requests() > 1 + 2 * shards {
            return Err(format!(
                "{} requests for an index and {shards} shards",
                server.requests()
            )
            .into());
        }
    } else {
        return Err(format!("split: {}", String::from_utf8_lossy(&split.stderr)).into());
    }
    Ok(())
}
