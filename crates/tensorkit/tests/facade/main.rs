//! Integration tests of the facade: the front door over every conformance file, and memory
//! bounds on hostile input.

mod container;
mod front_door;
mod grib;
mod memory;
mod remote;
mod shards;
