//! A Hugging Face shard set (written by `huggingface_hub`, `testdata/safetensors/reference/sharded`) opens
//! as one file; the weight map is the allowlist; any list of files opens as one.

use std::path::{Path, PathBuf};
use tensorkit::{ErrorKind, Kinded, ReadOptions};

fn shard_dir() -> PathBuf {
    tensor_testkit::testdata().join("safetensors/reference/sharded")
}

/// A copy of the shard set whose index says `weight_map`.
fn with_weight_map(dir: &Path, weight_map: &serde_json::Value) -> PathBuf {
    for e in std::fs::read_dir(shard_dir()).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    let index = dir.join("model.safetensors.index.json");
    let v = serde_json::json!({"metadata": {"total_size": 584, "origin": "test"}, "weight_map": weight_map});
    std::fs::write(&index, v.to_string()).unwrap();
    index
}

#[test]
fn an_index_opens_its_shards_as_one_file() {
    let _running = crate::running();
    let file = tensorkit::open(shard_dir().join("model.safetensors.index.json")).unwrap();
    let names: Vec<String> = file.tensors().map(|t| t.name().into_owned()).collect();
    assert_eq!(
        names,
        [
            "model.embed.weight",
            "model.layers.0.w",
            "model.layers.1.w",
            "lm_head.bias"
        ]
    );
    // Each shard's mapping is named, for writers to copy from.
    assert_eq!(file.mapped_files(), 3);
    let embed = file.get("model.embed.weight").unwrap().to_tensor().unwrap();
    let expected: Vec<f32> = (0..40u8).map(f32::from).collect();
    assert_eq!(&*embed.view().typed::<f32>().unwrap(), &expected[..]);
    // The shards' own bookkeeping is not carried over.
    assert!(
        file.metadata()
            .is_none_or(|m| !m.contains_key("total_size"))
    );
}

#[test]
fn the_weight_map_is_the_allowlist() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    // lm_head.bias sits in shard 3 but the map leaves it out: it is not read.
    let index = with_weight_map(
        dir.path(),
        &serde_json::json!({
            "model.embed.weight": "model-00001-of-00003.safetensors",
            "model.layers.1.w": "model-00003-of-00003.safetensors",
        }),
    );
    let file = tensorkit::open(&index).unwrap();
    assert_eq!(file.len(), 2);
    assert!(file.get("lm_head.bias").is_err());
    assert_eq!(file.metadata().unwrap()["origin"], "test");
}

#[test]
fn a_mapped_tensor_missing_from_its_shard_is_an_error_naming_both() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    let index = with_weight_map(
        dir.path(),
        &serde_json::json!({"model.embed.weight": "model-00002-of-00003.safetensors"}),
    );
    let e = tensorkit::open(&index).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("model.embed.weight") && text.contains("model-00002-of-00003"),
        "{text}"
    );
    let index = with_weight_map(
        dir.path(),
        &serde_json::json!({"x": "../elsewhere.safetensors"}),
    );
    assert_eq!(
        tensorkit::open(&index).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
}

#[test]
fn any_list_of_files_opens_as_one_and_names_must_not_repeat() {
    let _running = crate::running();
    let shards: Vec<PathBuf> = (1..=3)
        .map(|i| shard_dir().join(format!("model-0000{i}-of-00003.safetensors")))
        .collect();
    let file = tensorkit::open_many(&shards, &ReadOptions::default()).unwrap();
    assert_eq!(file.len(), 4);
    let twice = [shards[0].clone(), shards[0].clone()];
    let e = tensorkit::open_many(&twice, &ReadOptions::default()).unwrap_err();
    assert!(e.to_string().contains("model.embed.weight"), "{e}");
    assert!(tensorkit::open_many(Vec::<PathBuf>::new(), &ReadOptions::default()).is_err());
}

#[test]
fn shard_sets_are_written_in_the_hugging_face_layout_or_not_at_all() {
    let _running = crate::running();
    let dir = tempfile::tempdir().unwrap();
    let src = tensorkit::open(shard_dir().join("model.safetensors.index.json")).unwrap();
    let out = dir.path().join("model.safetensors");
    let options = tensorkit::WriteOptions {
        max_shard_size: Some(200),
        ..tensorkit::WriteOptions::default()
    };
    tensorkit::save(&out, &src, &options).unwrap();
    let index: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("model.safetensors.index.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(index["metadata"]["total_size"], 584);
    assert_eq!(
        index["weight_map"]["model.embed.weight"],
        "model-00001-of-00003.safetensors"
    );
    assert_eq!(
        index["weight_map"]["lm_head.bias"],
        "model-00003-of-00003.safetensors"
    );
    let back = tensorkit::open(dir.path().join("model.safetensors.index.json")).unwrap();
    for t in src.tensors() {
        assert_eq!(
            back.get(&t.name()).unwrap().to_tensor().unwrap(),
            t.to_tensor().unwrap()
        );
    }
    // A tensor the target cannot hold, in the last shard: no shard and no index are left.
    let fail = tempfile::tempdir().unwrap();
    let ok = tensorkit::Tensor::from_elements(&[64], &[0f32; 64]).unwrap();
    let bad = tensorkit::Tensor::new(
        vec![0; 16],
        tensorkit::Dtype::Complex128,
        &[1],
        tensorkit::ByteOrder::Little,
    )
    .unwrap();
    let e = tensorkit::save_tensors(
        fail.path().join("m.safetensors"),
        [("ok", ok.view()), ("bad", bad.view())],
        &tensorkit::WriteOptions {
            max_shard_size: Some(256),
            ..tensorkit::WriteOptions::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert_eq!(std::fs::read_dir(fail.path()).unwrap().count(), 0);
}

/// An edit in place that a killed process left journaled but unwritten is finished however
/// the file is reached next: through a shard index, in a list of files, or by `validate`.
/// (Each path maps local files one way, `open::map_local`; only the single-file path
/// finished it before.)
#[test]
fn a_killed_edit_is_finished_wherever_its_file_is_opened() {
    use tensorkit::{Edits, WriteOptions};
    type Open = fn(&Path, &Path, &Path);
    let dir = tempfile::tempdir().unwrap();
    let w = tensorkit::Tensor::from_elements(&[64], &[1.0f32; 64]).unwrap();
    let b = tensorkit::Tensor::from_elements(&[64], &[2.0f32; 64]).unwrap();
    let options = WriteOptions {
        max_shard_size: Some(256),
        header_reserve: Some(256),
        metadata: Some(
            [("note".to_owned(), serde_json::Value::from("old"))]
                .into_iter()
                .collect(),
        ),
        ..WriteOptions::default()
    };
    let model = dir.path().join("model.safetensors");
    tensorkit::save_tensors(&model, [("w", w.view()), ("b", b.view())], &options).unwrap();
    let index = tensorkit::shards::index_path(&model, tensorkit::Format::SAFETENSORS);
    let shard = dir.path().join("model-00002-of-00002.safetensors");
    // The bytes the second shard would have after `note=new` in place, from a copy.
    let copy = dir.path().join("copy.safetensors");
    std::fs::copy(&shard, &copy).unwrap();
    let edits = Edits {
        set: vec![("note".into(), serde_json::Value::from("new"), None)],
        ..Edits::default()
    };
    let report = tensorkit::edit(&copy, &edits, &tensorkit::EditOptions::default()).unwrap();
    assert_eq!(report.method, tensorkit::edit::Method::InPlace);
    let (before, after) = (
        std::fs::read(&shard).unwrap(),
        std::fs::read(&copy).unwrap(),
    );
    assert_eq!(before.len(), after.len());
    let patch = tensor_core::patch::Patch {
        writes: vec![(0, after.clone())],
        len: after.len() as u64,
    };
    let note = |f: &tensorkit::File| {
        f.metadata()
            .and_then(|m| m["note"].as_str().map(str::to_owned))
    };
    let ways: [(&str, Open); 3] = [
        ("index", |index, _, _| {
            tensorkit::open(index).unwrap().get("b").unwrap();
        }),
        ("list", |_, first, shard| {
            tensorkit::open_many([first, shard], &ReadOptions::default()).unwrap();
        }),
        ("validate", |_, _, shard| {
            let v = tensorkit::validate(
                shard,
                tensorkit::ValidateOptions::default(),
                &tensorkit::Limits::default(),
            )
            .unwrap();
            assert!(!v.failed(), "{:?}", v.problems);
        }),
    ];
    let first = dir.path().join("model-00001-of-00002.safetensors");
    for (way, open) in ways {
        std::fs::write(&shard, &before).unwrap();
        tensor_core::patch::stage(&shard, &patch, tensorkit::Durability::Cached).unwrap();
        assert!(tensor_core::patch::is_pending(&shard));
        open(&index, &first, &shard);
        assert!(
            !tensor_core::patch::is_pending(&shard),
            "{way}: the journal is still there"
        );
        assert_eq!(
            std::fs::read(&shard).unwrap(),
            after,
            "{way}: the edit was not finished"
        );
        assert_eq!(
            note(&tensorkit::open(&shard).unwrap()).as_deref(),
            Some("new"),
            "{way}"
        );
    }
}
