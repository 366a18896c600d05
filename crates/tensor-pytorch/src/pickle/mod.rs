//! Python's pickle, read by a machine that builds values and never calls anything but its
//! own descriptions of what torch's rebuild functions make.

mod globals;
mod machine;
mod value;

pub use machine::{Persistent, Pickled, load, sequence, storage_of};
pub use value::{Dict, Global, NpArray, NpType, Storage, Tensor, TorchDtype, Value};
