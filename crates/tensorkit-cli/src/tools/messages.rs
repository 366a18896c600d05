//! What `copy` and `reshuffle` share when they work message by message on a Tensogram file:
//! its messages opened over its mapped bytes, errors naming the file, and a metadata value as
//! the `-w` clauses and `[key]` templates compare it.

use super::select;
use crate::error::{Error, Result};
use std::path::Path;
use tensor_core::Limits;
use tensorkit::Format;
use tensorkit::frame::{Message, Messages, MetaValue};

/// A Tensogram error of the file at `input`, naming it.
pub(super) fn wrap(input: &Path) -> impl Fn(tensorkit::frame::Error) -> Error + '_ {
    move |e| tensorkit::Error::format(input, Format::TENSOGRAM.id(), e)
}

/// Every message of `bytes`, the file at `input`, opened within `limits` (the hashes of
/// the frames that describe the data checked).
pub(super) fn open<'a>(input: &Path, bytes: &'a [u8], limits: &Limits) -> Result<Vec<Message<'a>>> {
    let options = tensorkit::ReadOptions {
        limits: *limits,
        ..tensorkit::ReadOptions::default()
    };
    Ok(Messages::open_with(bytes, &options)
        .map_err(wrap(input))?
        .into_messages())
}

/// A metadata value as text ([`select::cbor_text`]).
pub(super) fn text(v: &MetaValue) -> String {
    select::cbor_text(&tensor_core::cbor::Value::from(v))
}
