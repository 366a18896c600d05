//! SZ3, as Tensogram stores it: one SZ3 stream of a one-dimensional field of float64 values
//! (SZ3's C++ as the reference's own bindings, `tensogram-sz3-sys`, bundle it, every call
//! made inside a C++ try block: a malformed stream is an error, never an abort), under an
//! absolute, relative or PSNR error bound. The stream records its own configuration and
//! dimensions; the reader checks them against the values the object holds before anything
//! is decoded.
//!
//! As with zfp, the reference reads every payload as float64 values in the machine's byte
//! order and writes the decoded values in the descriptor's byte order; this reader does the
//! same, and the pipeline writes SZ3 for little-endian float64 only.

use crate::error::{Error, Result};
use crate::float64_field;

const CODEC: &str = "sz3";

/// The error bound (`sz3_error_bound_mode` and `sz3_error_bound`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    /// The largest absolute error (`abs`).
    Absolute(f64),
    /// The largest error relative to the value range (`rel`).
    Relative(f64),
    /// The peak signal-to-noise ratio to keep, in dB (`psnr`).
    Psnr(f64),
}

impl Bound {
    /// The name `sz3_error_bound_mode` gives it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Bound::Absolute(_) => "abs",
            Bound::Relative(_) => "rel",
            Bound::Psnr(_) => "psnr",
        }
    }

    /// Its value (`sz3_error_bound`).
    #[must_use]
    pub fn value(self) -> f64 {
        match self {
            Bound::Absolute(v) | Bound::Relative(v) | Bound::Psnr(v) => v,
        }
    }

    /// The bound `sz3_error_bound_mode` names, with `value`.
    #[must_use]
    pub fn parse(mode: &str, value: f64) -> Option<Bound> {
        Some(match mode {
            "abs" => Bound::Absolute(value),
            "rel" => Bound::Relative(value),
            "psnr" => Bound::Psnr(value),
            _ => return None,
        })
    }
}

#[cfg(feature = "sz3")]
fn failed(reason: impl Into<String>) -> Error {
    Error::Corrupt {
        codec: CODEC,
        reason: reason.into(),
    }
}

/// Compresses `data`, float64 values in the machine's byte order, under `bound`.
pub fn compress(data: &[u8], bound: Bound) -> Result<Vec<u8>> {
    let values = float64_field::values(CODEC, data)?;
    if values.is_empty() {
        return Ok(Vec::new());
    }
    encode(&values, bound)
}

/// Decodes the stream `src` of `dst.len() / 8` float64 values into `dst`, each in
/// `big_endian` order or the machine's.
pub fn decompress_into(src: &[u8], dst: &mut [u8], big_endian: bool) -> Result<()> {
    let n = float64_field::count(CODEC, dst.len())?;
    if !float64_field::has_values(CODEC, src, n)? {
        return Ok(());
    }
    let mut values = tensor_core::buffer::try_filled(n, 0f64, "SZ3 values")?;
    decode(src, &mut values)?;
    float64_field::write(&values, dst, big_endian);
    Ok(())
}

#[cfg(feature = "sz3")]
fn encode(values: &[f64], bound: Bound) -> Result<Vec<u8>> {
    ffi::compress(values, bound)
}

/// The length an SZ3 stream's own framing gives it, when the framing can be read: a 16-byte
/// header (magic number, data version, and the compressed data's length as a `u64`), the
/// compressed data, then the configuration, whose first byte is its own length. SZ3 writes
/// exactly this; its decoder reads the configuration without knowing where the stream ends,
/// so a stream cut in its last bytes (or followed by others) would decode as if sound.
#[cfg(feature = "sz3")]
fn framed_len(src: &[u8]) -> Option<u64> {
    let data = u64::from_le_bytes(src.get(8..16)?.try_into().ok()?);
    let conf_at = usize::try_from(16u64.checked_add(data)?).ok()?;
    let conf = u64::from(*src.get(conf_at)?);
    (conf_at as u64).checked_add(conf)
}

/// Decodes `src` into `values`, after checking that the stream ends where its framing says
/// and that its own configuration (float64 values, one dimension) gives `values`' count.
#[cfg(feature = "sz3")]
fn decode(src: &[u8], values: &mut [f64]) -> Result<()> {
    match framed_len(src) {
        Some(n) if n == src.len() as u64 => {}
        Some(n) => {
            return Err(failed(format!(
                "the stream is {} bytes; its header and configuration say {n}",
                src.len()
            )));
        }
        None => {
            return Err(failed(format!(
                "the stream is {} bytes, too few for the header and configuration it declares",
                src.len()
            )));
        }
    }
    let (dims, data_type) = ffi::stream_shape(src)?;
    if data_type != ffi::FLOAT64 {
        return Err(failed(format!(
            "the stream holds SZ3 data type {data_type}, not float64"
        )));
    }
    if dims != [values.len()] {
        return Err(failed(format!(
            "the stream's dimensions are {dims:?}; the object holds {} values",
            values.len()
        )));
    }
    ffi::decompress(src, values)
}

#[cfg(feature = "sz3")]
#[allow(unsafe_code)]
mod ffi {
    //! The calls into SZ3: through `tensogram-sz3-sys`'s C shim, each made inside a C++ try
    //! block by `cpp/sz3_guard.cpp` (an exception is an error code here, never an abort).
    //! Every pointer handed over points into a Rust buffer that outlives the call, with its
    //! real length.

    use super::{Bound, failed};
    use crate::error::Result;
    use tensogram_sz3_sys as sys;

    /// SZ3's `dataType` of float64.
    pub(super) const FLOAT64: u8 = sys::impl_f64::DATA_TYPE_TYPE;

    unsafe extern "C" {
        fn tensorkit_sz3_bound_f64(config: sys::SZ3_Config, bound: *mut usize) -> i32;
        fn tensorkit_sz3_compress_f64(
            config: sys::SZ3_Config,
            data: *const f64,
            out: *mut u8,
            capacity: usize,
            written: *mut usize,
        ) -> i32;
        fn tensorkit_sz3_decompress_f64(src: *const u8, len: usize, out: *mut f64) -> i32;
    }

    /// The configuration tensogram compresses with: one dimension of `dims[0]` values,
    /// interpolation with Lorenzo fallback, SZ3's default quantisation, blocks of 128.
    fn config(dims: &mut [usize; 1], bound: Bound) -> sys::SZ3_Config {
        let (mode, abs, rel, psnr) = match bound {
            Bound::Absolute(v) => (sys::SZ3::EB_EB_ABS, v, 0.0, 0.0),
            Bound::Relative(v) => (sys::SZ3::EB_EB_REL, 0.0, v, 0.0),
            Bound::Psnr(v) => (sys::SZ3::EB_EB_PSNR, 0.0, 0.0, v),
        };
        sys::SZ3_Config {
            N: 1,
            dims: dims.as_mut_ptr(),
            num: dims[0],
            errorBoundMode: mode as u8,
            absErrorBound: abs,
            relErrorBound: rel,
            l2normErrorBound: 0.0,
            psnrErrorBound: psnr,
            cmprAlgo: sys::SZ3::ALGO_ALGO_INTERP_LORENZO as u8,
            lorenzo: true,
            lorenzo2: true,
            regression: true,
            openmp: false,
            dataType: FLOAT64,
            blockSize: 128,
            quantbinCnt: 65536,
        }
    }

    pub(super) fn compress(values: &[f64], bound: Bound) -> Result<Vec<u8>> {
        let mut dims = [values.len()];
        let c = config(&mut dims, bound);
        let mut capacity = 0usize;
        // SAFETY: `c.dims` points to `dims`, one element, alive for the call; `capacity`
        // is a valid place to write the bound.
        if unsafe { tensorkit_sz3_bound_f64(c, &raw mut capacity) } != 0 {
            return Err(failed("SZ3 could not size the compressed stream"));
        }
        let mut out = tensor_core::buffer::try_filled(capacity, 0u8, "an SZ3 stream")?;
        let mut written = 0usize;
        // SAFETY: `values` holds `c.num` float64 values; `out` has `capacity` bytes, the
        // size SZ3 gave for this configuration; `written` is a valid place to write.
        let status = unsafe {
            tensorkit_sz3_compress_f64(
                c,
                values.as_ptr(),
                out.as_mut_ptr(),
                capacity,
                &raw mut written,
            )
        };
        if status != 0 || written > capacity {
            return Err(failed("SZ3 failed to compress the values"));
        }
        out.truncate(written);
        Ok(out)
    }

    /// The dimensions and data type an SZ3 stream records, read without decoding it (the
    /// shim checks every size it reads against `src`'s length).
    pub(super) fn stream_shape(src: &[u8]) -> Result<(Vec<usize>, u8)> {
        // SAFETY: `src` is valid for `src.len()` bytes; the shim never throws from here.
        let c = unsafe { sys::sz3_decompress_config(src.as_ptr().cast(), src.len()) };
        if c.N == 0 || c.dims.is_null() {
            return Err(failed("not an SZ3 stream, or one cut short"));
        }
        // SAFETY: a configuration with N > 0 carries `N` dimensions at `dims`, allocated by
        // the shim and freed exactly once, here, after they are copied.
        let dims = unsafe {
            let dims = std::slice::from_raw_parts(c.dims, usize::from(c.N)).to_vec();
            sys::sz3_dealloc_size_t(c.dims);
            dims
        };
        Ok((dims, c.dataType))
    }

    /// Decodes `src`, whose configuration [`stream_shape`] found to be `values.len()`
    /// float64 values, into `values`.
    ///
    /// SZ3's decoder is not safe on damaged input: besides throwing (caught by the shim), it
    /// reads and writes out of bounds and aborts on many damaged streams. So it runs in a
    /// child process (`fork`, Linux and other Unix systems) that decodes into memory shared
    /// with this one and exits: a crash, an abort or a hang of the child (killed after
    /// [`deadline`]) is an error here, and the process carries on. Its standard output and
    /// error go to /dev/null (SZ3 prints its complaints there).
    pub(super) fn decompress(src: &[u8], values: &mut [f64]) -> Result<()> {
        let shared = Shared::new(std::mem::size_of_val(values))?;
        let deadline = deadline(src.len(), values.len());
        // SAFETY: fork duplicates this process; the child only runs `decode_in_child`,
        // which ends in `_exit` without returning into Rust code, and the parent waits for
        // the child (or kills it) before `shared` is read or unmapped.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(failed(format!(
                "could not start SZ3's decoder: {}",
                std::io::Error::last_os_error()
            )));
        }
        if pid == 0 {
            decode_in_child(src, &shared);
        }
        wait_for(pid, deadline)?;
        shared.copy_to(values);
        Ok(())
    }

    /// How long SZ3 may take to decode `len` bytes into `n` values: generous (SZ3 decodes
    /// at hundreds of MB/s), so that only a decoder that went astray meets it.
    fn deadline(len: usize, n: usize) -> std::time::Duration {
        let work = (len as u64).saturating_add(n as u64 * 8);
        std::time::Duration::from_secs(10 + work / (20 << 20))
    }

    /// The child: quiet, decode into `shared`, exit with 0 (decoded) or 1 (SZ3 threw).
    fn decode_in_child(src: &[u8], shared: &Shared) -> ! {
        // SAFETY: plain system calls on file descriptors and signal dispositions;
        // `/dev/null` is a NUL-terminated literal. The decode writes the stream's float64 values into `shared`, which
        // holds exactly as many (the caller checked the stream's configuration); `_exit` ends the child without running Rust destructors or
        // atexit handlers of the parent's state.
        unsafe {
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY);
            if null >= 0 {
                libc::dup2(null, 1);
                libc::dup2(null, 2);
            }
            // The host's crash handlers (Python's faulthandler, a fuzzer's) are not run for
            // the child: it dies of the signal, and the parent reports it.
            for signal in [
                libc::SIGSEGV,
                libc::SIGBUS,
                libc::SIGILL,
                libc::SIGFPE,
                libc::SIGABRT,
            ] {
                libc::signal(signal, libc::SIG_DFL);
            }
            let status = tensorkit_sz3_decompress_f64(src.as_ptr(), src.len(), shared.ptr.cast());
            libc::_exit(i32::from(status != 0));
        }
    }

    /// Waits for the child `pid`; an error unless it exited with 0 before `deadline`.
    fn wait_for(pid: libc::pid_t, deadline: std::time::Duration) -> Result<()> {
        let start = std::time::Instant::now();
        let mut pause = std::time::Duration::from_micros(50);
        loop {
            let mut status = 0;
            // SAFETY: waits for our own child; `status` is a valid place to write.
            let got = unsafe { libc::waitpid(pid, &raw mut status, libc::WNOHANG) };
            if got == pid {
                return if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
                    Ok(())
                } else if libc::WIFEXITED(status) {
                    Err(failed("SZ3 refused the stream as malformed"))
                } else {
                    Err(failed(format!(
                        "SZ3's decoder crashed on the stream (signal {}): it is damaged",
                        libc::WTERMSIG(status)
                    )))
                };
            }
            if got < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(failed(format!("could not wait for SZ3's decoder: {e}")));
                }
            }
            if start.elapsed() > deadline {
                // SAFETY: kills and reaps our own child.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, &raw mut status, 0);
                }
                return Err(failed(format!(
                    "SZ3's decoder ran past {} s on the stream: it is damaged",
                    deadline.as_secs()
                )));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(std::time::Duration::from_millis(20));
        }
    }

    /// Anonymous memory shared with a child process: where it writes the decoded values.
    struct Shared {
        ptr: *mut libc::c_void,
        len: usize,
    }

    impl Shared {
        fn new(len: usize) -> Result<Shared> {
            let len = len.max(1);
            // SAFETY: a new anonymous mapping; nothing else refers to it.
            let ptr = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if ptr == libc::MAP_FAILED {
                return Err(crate::Error::Core(tensor_core::Error::OutOfMemory {
                    what: "SZ3 values",
                    bytes: len as u64,
                }));
            }
            Ok(Shared { ptr, len })
        }

        /// Copies the decoded values out (the child has exited: nothing writes any more).
        fn copy_to(&self, values: &mut [f64]) {
            // SAFETY: the mapping holds at least `size_of_val(values)` bytes, readable,
            // and no other process writes it any more; `values` does not overlap it.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    self.ptr.cast::<u8>(),
                    values.as_mut_ptr().cast::<u8>(),
                    std::mem::size_of_val(values),
                );
            }
        }
    }

    impl Drop for Shared {
        fn drop(&mut self) {
            // SAFETY: unmaps the mapping made in `new`, once.
            unsafe {
                libc::munmap(self.ptr, self.len);
            }
        }
    }
}

#[cfg(not(feature = "sz3"))]
fn encode(_: &[f64], _: Bound) -> Result<Vec<u8>> {
    Err(Error::not_built(CODEC))
}

#[cfg(not(feature = "sz3"))]
fn decode(_: &[u8], _: &mut [f64]) -> Result<()> {
    Err(Error::not_built(CODEC))
}

#[cfg(all(test, feature = "sz3"))]
mod tests {
    use super::*;

    #[test]
    fn an_absolute_bound_holds_and_bad_streams_are_errors() {
        let data: Vec<u8> = (0..2000)
            .flat_map(|i| (250.0 + 20.0 * (f64::from(i) / 17.0).sin()).to_ne_bytes())
            .collect();
        let c = compress(&data, Bound::Absolute(1e-3)).unwrap();
        assert!(c.len() < data.len());
        let mut out = vec![0u8; data.len()];
        decompress_into(&c, &mut out, false).unwrap();
        for (a, b) in data.chunks(8).zip(out.chunks(8)) {
            let (a, b) = (
                f64::from_ne_bytes(a.try_into().unwrap()),
                f64::from_ne_bytes(b.try_into().unwrap()),
            );
            assert!((a - b).abs() <= 1e-3, "{a} against {b}");
        }
        assert!(decompress_into(&c, &mut vec![0u8; 8 * 1999], false).is_err());
        assert!(decompress_into(&c[..c.len() / 3], &mut out, false).is_err());
        assert!(decompress_into(b"not an SZ3 stream", &mut out, false).is_err());
    }

    /// Every byte of a stream flipped in turn, and every cut: SZ3 throws C++ exceptions,
    /// reads out of bounds or aborts on many of them (one in six flips crashed it when it
    /// ran in this process), which must come back as errors; the rest decode to something.
    #[test]
    fn damaged_streams_are_errors_never_aborts() {
        let data: Vec<u8> = (0..4000)
            .flat_map(|i| (f64::from(i) * 0.01).cos().to_ne_bytes())
            .collect();
        let c = compress(&data, Bound::Relative(1e-4)).unwrap();
        let mut out = vec![0u8; data.len()];
        let mut refused = 0;
        for at in (0..c.len()).step_by(2) {
            for flip in [0x01u8, 0xff] {
                let mut d = c.clone();
                d[at] ^= flip;
                refused += usize::from(decompress_into(&d, &mut out, false).is_err());
            }
        }
        // Every cut is an error, the last bytes' too (SZ3 itself reads the configuration
        // there without knowing where the stream ends), and so are bytes after the stream.
        decompress_into(&c, &mut out, false).unwrap();
        for cut in (0..c.len()).step_by(3).chain(c.len() - 9..c.len()) {
            assert!(
                decompress_into(&c[..cut], &mut out, false).is_err(),
                "a cut at {cut} of {}",
                c.len()
            );
        }
        for extra in 1..=8 {
            let mut longer = c.clone();
            longer.resize(c.len() + extra, 0);
            assert!(
                decompress_into(&longer, &mut out, false).is_err(),
                "+{extra}"
            );
        }
        assert!(refused > 0);
    }
}
