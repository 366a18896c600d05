//! How much the kernel reads for one read-ahead hint.
//!
//! Linux caps what one `madvise(MADV_WILLNEED)` (or `posix_fadvise(WILLNEED)`, or
//! `readahead(2)`) reads at the device's read-ahead window: its `read_ahead_kb`, or its
//! largest request (`max_sectors_kb`) where that is larger. A hint for a longer range reads
//! the first window and drops the rest, so a loader that wants a whole range read hints it
//! one window at a time ([`MmapSource::will_need`](crate::MmapSource::will_need)).

use std::fs::File;

/// The kernel's default read-ahead window, 128 KiB: the step used where the device's own
/// cannot be found. Never larger than the real cap, so no part of a range goes unhinted.
pub(crate) const DEFAULT_WINDOW: u64 = 128 << 10;

/// The largest step: a hint this long keeps the disk busy for milliseconds, enough to hide
/// the call's cost on any device.
const MAX_WINDOW: u64 = 64 << 20;

/// The read-ahead window of the device `file` lives on, in bytes: the larger of its
/// `read_ahead_kb` and `max_sectors_kb` (sysfs, found from the file's device number; a
/// partition's are its disk's), [`DEFAULT_WINDOW`] where neither is found, at most
/// 64 MiB.
pub(crate) fn window(file: &File) -> u64 {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt;
        if let Ok(meta) = file.metadata() {
            let kib = device_window_kib(meta.dev()).unwrap_or(0);
            return (kib.saturating_mul(1024)).clamp(DEFAULT_WINDOW, MAX_WINDOW);
        }
    }
    let _ = file;
    DEFAULT_WINDOW
}

/// The device's window in KiB from sysfs; `None` where the device has no queue there (a
/// network or virtual file system).
#[cfg(target_os = "linux")]
fn device_window_kib(dev: u64) -> Option<u64> {
    let (major, minor) = split_dev(dev);
    let device = std::path::PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    // A whole disk has its queue beside it; a partition's is its disk's, one folder up.
    let queue = [device.join("queue"), device.join("../queue")]
        .into_iter()
        .find(|q| q.is_dir())?;
    let read = |name: &str| -> Option<u64> {
        std::fs::read_to_string(queue.join(name))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    let (ahead, request) = (read("read_ahead_kb"), read("max_sectors_kb"));
    ahead.max(request)
}

/// A Linux device number's major and minor halves (glibc's `gnu_dev_major`/`gnu_dev_minor`).
#[cfg(target_os = "linux")]
fn split_dev(dev: u64) -> (u64, u64) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & 0xffff_f000);
    let minor = (dev & 0xff) | ((dev >> 12) & 0xffff_ff00);
    (major, minor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn device_numbers_split_as_glibc_splits_them() {
        assert_eq!(split_dev(0xfe00), (254, 0)); // /dev/vda
        assert_eq!(split_dev(0x0803), (8, 3)); // /dev/sda3
        // Numbers above 12 and 8 bits, as glibc's `makedev` packs them.
        let (major, minor) = (0x103f_u64, 0x1005_u64);
        let dev = ((major & 0xfff) << 8)
            | ((major & !0xfff) << 32)
            | (minor & 0xff)
            | ((minor & !0xff) << 12);
        assert_eq!(split_dev(dev), (major, minor));
    }

    #[test]
    fn a_files_window_is_within_bounds() {
        let file = File::open(std::env::current_exe().unwrap()).unwrap();
        let w = window(&file);
        assert!((DEFAULT_WINDOW..=MAX_WINDOW).contains(&w), "{w}");
    }
}
