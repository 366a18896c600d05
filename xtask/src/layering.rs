//! The layering check: dependencies between our crates point down only.
//!
//! ```text
//! tensorkit-cli, tensorkit-py                the facade (its front door), core, dtype
//! tensorkit (facade)                         every library crate
//! tensor-frame                               descriptor, pipeline, dtype, core
//! tensor-ztensor, tensor-grib                pipeline, dtype, core
//! tensor-bintensors, tensor-stdlib-meta,
//! tensor-safetensors, tensor-gguf,
//! tensor-netcdf                              hdf5, dtype, core
//! tensor-pytorch, tensor-numpy               zip, dtype, core
//! tensor-keras                               zip, hdf5, dtype, core
//! tensor-onnx                                dtype, core
//! tensor-descriptor, tensor-pipeline,
//! tensor-hdf5, tensor-zip                    dtype, core (not each other)
//! tensor-dtype                               core
//! tensor-core                                nothing of ours
//! ```
//! Only the command, the Python package and the benchmarks depend on the facade; nothing depends on the CLI or
//! xtask, and format crates never depend on each
//! other. `tensor-testkit` (shared test helpers, on core and dtype) may be a dependency of
//! the crates' tests and of the benchmark suite (which is not published, and serves its
//! remote workload with the tests' HTTP server), and of nothing the crates ship. Every
//! dependency kind is checked.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

const CORE: &[&str] = &["tensor-core"];
const DTYPE: &[&str] = &["tensor-core", "tensor-dtype"];

/// A crate on core and dtype whose tests use the shared test helpers.
const TESTED: &[&str] = &["tensor-core", "tensor-dtype", "tensor-testkit"];
/// The facade and the CLI use every library crate, and the test helpers in their tests.
const CLI: &[&str] = &[
    "tensor-core",
    "tensor-dtype",
    "tensor-descriptor",
    "tensor-pipeline",
    "tensor-frame",
    "tensor-ztensor",
    "tensor-bintensors",
    "tensor-stdlib-meta",
    "tensor-safetensors",
    "tensor-grib",
    "tensor-gguf",
    "tensor-netcdf",
    "tensor-hdf5",
    "tensor-zip",
    "tensor-pytorch",
    "tensor-numpy",
    "tensor-keras",
    "tensor-onnx",
    "tensor-testkit",
];

/// The crates of ours each crate may depend on; a crate missing here fails the check.
fn allowed(krate: &str) -> Option<&'static [&'static str]> {
    Some(match krate {
        "tensor-core" | "xtask" => &[],
        "tensor-dtype" => CORE,
        "tensor-testkit" => DTYPE,
        "tensor-descriptor" | "tensor-pipeline" | "tensor-hdf5" | "tensor-zip"
        | "tensor-bintensors" | "tensor-stdlib-meta" | "tensor-safetensors" | "tensor-gguf"
        | "tensor-onnx" => TESTED,
        "tensor-netcdf" => &[
            "tensor-core",
            "tensor-dtype",
            "tensor-hdf5",
            "tensor-testkit",
        ],
        "tensor-keras" => &[
            "tensor-core",
            "tensor-dtype",
            "tensor-hdf5",
            "tensor-zip",
            "tensor-testkit",
        ],
        "tensor-pytorch" | "tensor-numpy" => &[
            "tensor-core",
            "tensor-dtype",
            "tensor-zip",
            "tensor-testkit",
        ],
        "tensor-ztensor" | "tensor-grib" => &[
            "tensor-core",
            "tensor-dtype",
            "tensor-pipeline",
            "tensor-testkit",
        ],
        "tensor-frame" => &[
            "tensor-core",
            "tensor-dtype",
            "tensor-descriptor",
            "tensor-pipeline",
            "tensor-testkit",
        ],
        "tensorkit" => CLI,
        // The command and the Python package stand on the facade's front door alone.
        "tensorkit-cli" | "tensorkit-py" => {
            &["tensor-core", "tensor-dtype", "tensor-testkit", "tensorkit"]
        }
        // The benchmark suite drives the facade.
        "tensorkit-bench" => &[
            "tensor-core",
            "tensor-dtype",
            "tensor-descriptor",
            "tensor-pipeline",
            "tensor-frame",
            "tensor-bintensors",
            "tensor-ztensor",
            "tensor-stdlib-meta",
            "tensor-grib",
            "tensor-gguf",
            "tensor-testkit",
            "tensorkit",
        ],
        _ => return None,
    })
}

/// Each workspace crate and the workspace crates it depends on (any kind), from
/// `cargo metadata` output.
pub(crate) fn edges(metadata: &Value) -> BTreeMap<String, Vec<String>> {
    let packages = metadata["packages"].as_array().cloned().unwrap_or_default();
    let ours: Vec<String> = packages
        .iter()
        .filter_map(|p| Some(p["name"].as_str()?.to_owned()))
        .collect();
    packages
        .iter()
        .filter_map(|p| {
            let name = p["name"].as_str()?.to_owned();
            let mut deps: Vec<String> = p["dependencies"]
                .as_array()?
                .iter()
                .filter_map(|d| d["name"].as_str())
                .filter(|d| ours.iter().any(|o| o == d))
                .map(str::to_owned)
                .collect();
            deps.sort();
            deps.dedup();
            Some((name, deps))
        })
        .collect()
}

/// Every rule the edges break, one line each.
pub(crate) fn violations(edges: &BTreeMap<String, Vec<String>>) -> Vec<String> {
    let mut out = Vec::new();
    for (krate, deps) in edges {
        let Some(ok) = allowed(krate) else {
            out.push(format!("{krate}: not in the layering table (xtask/src/layering.rs); add it with its allowed dependencies"));
            continue;
        };
        for d in deps {
            if !ok.contains(&d.as_str()) {
                out.push(format!(
                    "{krate} -> {d}: not allowed ({krate} may depend on: {})",
                    if ok.is_empty() {
                        "none of our crates".to_owned()
                    } else {
                        ok.join(", ")
                    }
                ));
            }
        }
    }
    out
}

/// Crates that are never published and may use the shared test helpers outright.
const UNPUBLISHED_TOOLS: &[&str] = &["tensorkit-bench"];

/// Non-dev dependencies on the shared test helpers: they must never ship.
pub(crate) fn testkit_outside_tests(metadata: &Value) -> Vec<String> {
    let packages = metadata["packages"].as_array().cloned().unwrap_or_default();
    packages
        .iter()
        .flat_map(|p| {
            let name = p["name"].as_str().unwrap_or_default().to_owned();
            let tool = UNPUBLISHED_TOOLS.contains(&name.as_str());
            p["dependencies"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .filter(move |d| d["name"] == "tensor-testkit" && d["kind"] != "dev" && !tool)
                .map(move |_| format!("{name} -> tensor-testkit: allowed only as a dev-dependency"))
        })
        .collect()
}

/// Where README.md's crate table and the workspace disagree: a crate the table lacks, or a
/// row naming no crate. Rows are the table's lines that start with `` | `name` | ``.
pub(crate) fn readme_mismatches(readme: &str, crates: &[&str]) -> Vec<String> {
    let rows: Vec<&str> = readme
        .lines()
        .filter_map(|l| l.strip_prefix("| `")?.split_once("` |").map(|(n, _)| n))
        .collect();
    let mut out: Vec<String> = crates
        .iter()
        .filter(|c| !rows.contains(c))
        .map(|c| format!("README.md: the crate table has no row for {c}"))
        .collect();
    out.extend(
        rows.iter().filter(|r| !crates.contains(r)).map(|r| {
            format!("README.md: the crate table names {r}, which is not in the workspace")
        }),
    );
    out
}

pub(crate) fn run(root: &Path) -> Result<String, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(root)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .output()
        .map_err(|e| format!("running cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let metadata: Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata output: {e}"))?;
    let edges = edges(&metadata);
    let mut v = violations(&edges);
    v.extend(testkit_outside_tests(&metadata));
    let readme = std::fs::read_to_string(root.join("README.md"))
        .map_err(|e| format!("reading README.md: {e}"))?;
    let names: Vec<&str> = edges.keys().map(String::as_str).collect();
    v.extend(readme_mismatches(&readme, &names));
    v.extend(crate::architecture::check(root, &names)?);
    v.extend(crate::cycles::check(root)?);
    if v.is_empty() {
        let n: usize = edges.values().map(Vec::len).sum();
        Ok(format!(
            "layering: {} crates, {n} internal edges, all pointing down; no import circle in any crate or the Python package ({} known left); README.md lists them all; ARCHITECTURE.md's format table is true",
            edges.len(),
            crate::cycles::known()
        ))
    } else {
        Err(format!("layering violations:\n  {}", v.join("\n  ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_readme_table_must_name_every_crate_and_no_other() {
        let readme = "| crate | what |\n|---|---|\n| `a` | one |\n| `gone` | old |\n";
        assert_eq!(
            readme_mismatches(readme, &["a", "b"]),
            [
                "README.md: the crate table has no row for b",
                "README.md: the crate table names gone, which is not in the workspace"
            ]
        );
        assert!(readme_mismatches(readme, &["a", "gone"]).is_empty());
    }

    fn pkg(name: &str, deps: &[&str]) -> Value {
        json!({"name": name, "dependencies": deps.iter().map(|d| json!({"name": d})).collect::<Vec<_>>()})
    }

    #[test]
    fn downward_edges_pass() {
        let m = json!({"packages": [
            pkg("tensor-core", &["thiserror"]),
            pkg("tensor-dtype", &["tensor-core", "half"]),
            pkg("tensorkit", &["tensor-core", "tensor-dtype"]),
            pkg("tensorkit-cli", &["tensor-core", "tensor-dtype", "clap"]),
            pkg("xtask", &["serde_json"]),
        ]});
        let e = edges(&m);
        assert_eq!(e["tensor-dtype"], vec!["tensor-core"]);
        assert!(violations(&e).is_empty(), "{:?}", violations(&e));
    }

    #[test]
    fn test_helpers_never_ship() {
        let m = json!({"packages": [
            {"name": "tensor-bintensors", "dependencies": [{"name": "tensor-testkit", "kind": "dev"}]},
            {"name": "tensor-ztensor", "dependencies": [{"name": "tensor-testkit", "kind": null}]},
        ]});
        let v = testkit_outside_tests(&m);
        assert_eq!(
            v,
            vec!["tensor-ztensor -> tensor-testkit: allowed only as a dev-dependency"]
        );
    }

    #[test]
    fn upward_sideways_and_unknown_edges_fail() {
        let m = json!({"packages": [
            pkg("tensor-core", &["tensor-dtype"]),
            pkg("tensor-dtype", &["tensor-core"]),
            pkg("tensor-ztensor", &["tensor-bintensors"]),
            pkg("tensor-bintensors", &["tensorkit"]),
            pkg("tensor-descriptor", &["tensor-pipeline"]),
            pkg("tensor-pipeline", &[]),
            pkg("tensorkit", &["tensorkit-cli"]),
            pkg("tensorkit-cli", &["xtask"]),
            pkg("xtask", &[]),
            pkg("tensor-mystery", &[]),
        ]});
        let v = violations(&edges(&m));
        for needle in [
            "tensor-core -> tensor-dtype",
            "tensor-ztensor -> tensor-bintensors",
            "tensor-bintensors -> tensorkit",
            "tensor-descriptor -> tensor-pipeline",
            "tensorkit -> tensorkit-cli",
            "tensorkit-cli -> xtask",
            "tensor-mystery: not in the layering table",
        ] {
            assert!(
                v.iter().any(|l| l.starts_with(needle)),
                "{needle} not in {v:?}"
            );
        }
        assert_eq!(v.len(), 7, "{v:?}");
    }
}
