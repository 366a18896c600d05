//! Zip archives, the container of PyTorch checkpoints (`torch.save` since 1.6), NumPy's
//! `.npz` and Keras' `.keras`: read over a file's bytes with every size checked before
//! anything is allocated, stored entries handed out zero-copy, deflated ones inflated within
//! [`Limits`](tensor_core::Limits) and checked against their CRC-32; written with stored
//! entries, as numpy's `savez` writes them.
//!
//! A reader of untrusted archives refuses what only a hostile archive does: entries whose
//! bytes overlap (the layout of overlapping zip bombs), names that repeat or climb out of a
//! folder (`../`, absolute), a local header that names another entry than the directory,
//! sizes past the archive, encryption. Why this is not the `zip` crate:
//! `docs/decisions/0021-zip-and-pickle-read-by-our-own-code.md`.
//!
//! ```
//! use tensor_zip::{Archive, Writer};
//! let mut w = Writer::new(std::io::Cursor::new(Vec::new()))?;
//! w.stored("a.npy", 3, |out| out.write_all(b"abc"))?;
//! let bytes = w.finish()?.into_inner();
//! let archive = Archive::open(&bytes, &tensor_core::Limits::default())?;
//! let entry = archive.find("a.npy").unwrap();
//! assert_eq!(&*archive.read_verified(entry, &tensor_core::Limits::default())?, b"abc");
//! # Ok::<(), tensor_zip::Error>(())
//! ```
#![forbid(unsafe_code)]

mod error;
mod read;
mod write;

pub use error::{Error, Result};
pub use read::{Archive, Entry, Method, crc32, first_entry_name};
pub use write::Writer;
