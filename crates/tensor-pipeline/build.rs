//! With feature `sz3`: compiles `cpp/sz3_guard.cpp`, which calls SZ3 (through the
//! `tensogram-sz3-sys` crate's shim) inside try blocks, so that a C++ exception is an error
//! code, never an abort.

fn main() {
    println!("cargo:rerun-if-changed=cpp/sz3_guard.cpp");
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "sz3")]
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .file("cpp/sz3_guard.cpp")
        .compile("tensorkit_sz3_guard");
}
