//! A format defined outside tensorkit ([`super::toy`]), registered, goes through the front
//! door as the built-in ones do: recognised by its content, listed, read, written, converted
//! to and from every built-in format of this build, validated, verified and edited. These
//! tests run in every build of the facade, one format alone included.

use super::toy;
use tensorkit::{Dtype, Format, Tensor, WriteOptions};

fn sample() -> (Tensor, Tensor) {
    (
        Tensor::from_elements(&[2, 3], &[1.5f32, -2.0, 0.25, 8.0, 1e-3, -0.0]).unwrap(),
        Tensor::from_elements(&[4], &[7i32, -7, 0, i32::MAX]).unwrap(),
    )
}

/// A toy file at `dir/name` holding [`sample`], with metadata.
fn toy_file(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let (w, ids) = sample();
    let path = dir.join(name);
    let options = WriteOptions {
        metadata: Some(
            serde_json::json!({"origin": "toy"})
                .as_object()
                .unwrap()
                .clone(),
        ),
        ..WriteOptions::for_format(toy::format())
    };
    tensorkit::save_tensors(&path, [("w", w.view()), ("ids", ids.view())], &options).unwrap();
    path
}

#[test]
fn a_registered_format_is_recognised_by_its_content_and_named_by_its_id_and_extension() {
    let _running = super::running();
    let toy = toy::format();
    assert_eq!(toy.id(), "toy");
    assert_eq!(Format::from_id("toy"), Some(toy));
    assert_eq!(
        Format::from_extension(std::path::Path::new("a/b.TOY")),
        Some(toy)
    );
    assert!(Format::all().contains(&toy) && Format::writable().contains(&toy));
    // An id already taken is refused: the registry holds one format per id.
    let again = tensorkit::register(&toy::TOY).unwrap_err();
    assert!(again.to_string().contains("registered already"), "{again}");

    let dir = tempfile::tempdir().unwrap();
    // Named `.bin`: the content, not the name, tells the format.
    let path = toy_file(dir.path(), "weights.bin");
    assert!(std::fs::read(&path).unwrap().starts_with(b"TOYTNSR1"));
    let file = tensorkit::open(&path).unwrap();
    assert_eq!(file.format(), toy);
    let listed: Vec<(String, Dtype, Vec<u64>)> = file
        .tensors()
        .map(|t| (t.name().into_owned(), t.dtype(), t.shape().to_vec()))
        .collect();
    assert_eq!(
        listed,
        [
            ("w".to_owned(), Dtype::Float32, vec![2, 3]),
            ("ids".to_owned(), Dtype::Int32, vec![4]),
        ]
    );
    let (w, ids) = sample();
    assert_eq!(file.get("w").unwrap().to_tensor().unwrap(), w);
    assert_eq!(file.get("ids").unwrap().view().unwrap().to_tensor(), ids);
    assert_eq!(file.metadata().unwrap()["origin"], "toy");
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(tensorkit::open_bytes(&bytes).unwrap().format(), toy);
}

#[test]
fn a_registered_format_converts_to_and_from_every_built_in_one() {
    let _running = super::running();
    let toy = toy::format();
    let dir = tempfile::tempdir().unwrap();
    let source = tensorkit::open(toy_file(dir.path(), "w.toy")).unwrap();
    let (w, ids) = sample();
    let built_in: Vec<Format> = Format::writable_any()
        .into_iter()
        .filter(|f| *f != toy)
        .collect();
    for format in built_in {
        let there = dir.path().join(format!("w.{}", format.extension()));
        tensorkit::save(&there, &source, &WriteOptions::for_format(format)).unwrap();
        let read = tensorkit::open(&there).unwrap();
        assert_eq!(read.format(), format);
        // And back: the built-in format's tensors into the registered one.
        let back = dir.path().join(format!("{}.toy", format.id()));
        tensorkit::save(&back, &read, &WriteOptions::default()).unwrap();
        let back = tensorkit::open(&back).unwrap();
        assert_eq!(back.format(), toy);
        assert_eq!(back.get("w").unwrap().to_tensor().unwrap(), w, "{format:?}");
        assert_eq!(
            back.get("ids").unwrap().to_tensor().unwrap(),
            ids,
            "{format:?}"
        );
    }
}

#[test]
fn a_registered_format_is_validated_verified_and_edited_as_any_other() {
    let _running = super::running();
    let toy = toy::format();
    let dir = tempfile::tempdir().unwrap();
    let path = toy_file(dir.path(), "w.toy");

    let v = tensorkit::validate(
        &path,
        tensorkit::ValidateOptions::default(),
        &tensorkit::Limits::default(),
    )
    .unwrap();
    assert_eq!((v.format, v.tensors, v.failed()), (Some(toy), 2, false));
    let checked = tensorkit::verify(&path, &tensorkit::Limits::default()).unwrap();
    assert_eq!(checked.checks, tensorkit::Checks::None);
    assert_eq!(checked.tensors_read, Some(2));
    assert!(matches!(
        checked.problem,
        Some(tensorkit::Error::NothingVerified { .. })
    ));

    // A file cut short is a problem of its own format's reader, found and said.
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.path().join("cut.toy");
    std::fs::write(&cut, &bytes[..20]).unwrap();
    let v = tensorkit::validate(
        &cut,
        tensorkit::ValidateOptions::default(),
        &tensorkit::Limits::default(),
    )
    .unwrap();
    assert_eq!(v.format, Some(toy));
    assert!(v.failed());
    assert!(
        v.problems[0].message.contains("cut short"),
        "{:?}",
        v.problems
    );

    // The format has no header to edit in place: an edit rewrites the file through it.
    let edits = tensorkit::Edits {
        rename: vec![("ids".into(), "labels".into())],
        ..tensorkit::Edits::default()
    };
    let report = tensorkit::edit(&path, &edits, &tensorkit::EditOptions::default()).unwrap();
    assert_eq!(report.format, toy);
    assert_eq!(report.method, tensorkit::edit::Method::Copy);
    let edited = tensorkit::open(&path).unwrap();
    assert_eq!(edited.format(), toy);
    assert_eq!(
        edited.get("labels").unwrap().to_tensor().unwrap(),
        sample().1
    );
    assert_eq!(edited.metadata().unwrap()["origin"], "toy");
}
