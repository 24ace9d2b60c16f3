//! The file (or device) a disk benchmark reads and writes, and the rules that keep other data
//! safe: peakbench writes only files it creates (a temporary file in `--dir`, or a `--file` that
//! did not exist), an existing file only with `--allow-overwrite`, a block device only with
//! `--destructive`; what it created is removed when the run ends, fails or is interrupted.

use super::DiskError;
use crate::bench::buffer::{Buffer, HugePages};
use crate::bench::rng::SplitMix64;
use crate::runner::stop;
use crate::sysinfo::blockdev::{BlockDevice, describe};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// Where to benchmark.
#[derive(Debug, Clone)]
pub enum Place {
    /// A new temporary file in this directory.
    Dir(PathBuf),
    /// This path: a new file, or an existing file/device with the matching flag.
    File {
        path: PathBuf,
        allow_overwrite: bool,
        destructive: bool,
    },
}

/// The open target.
pub struct Target {
    pub path: PathBuf,
    pub file: File,
    /// The same file opened through the page cache, for records that are not whole logical
    /// blocks (O_DIRECT cannot move them); `file` itself when the target is not direct.
    buffered: Option<File>,
    pub size: u64,
    pub direct: bool,
    /// O_DIRECT alignment: the device's logical block size (512 when sysfs does not say).
    pub align: u64,
    pub device: Option<BlockDevice>,
    /// The file system holding the file (None on a raw device).
    pub file_system: Option<String>,
    pub is_block_device: bool,
    /// Removed on drop: peakbench created it.
    created: bool,
    /// The option that chose it, `--dir` or `--file` (named in what to do after an error).
    option: &'static str,
}

impl Drop for Target {
    fn drop(&mut self) {
        if self.created {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The directory holding `path` (`.` for a bare name).
fn dir_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The error of `doing` something to the file at `path` (`doing` names the file), chosen by
/// `option`. Running out of space (ENOSPC, EDQUOT) on a file system says which one is full; on
/// a block device ENOSPC means an I/O past its end, an ordinary I/O error.
fn io_error(
    path: &Path,
    e: std::io::Error,
    doing: String,
    option: &'static str,
    block_device: bool,
) -> DiskError {
    if !block_device && let Some(problem) = crate::files::space_problem(&e, dir_of(path)) {
        return DiskError::Full {
            doing,
            problem,
            option,
        };
    }
    match e.raw_os_error() {
        Some(libc::EROFS) => DiskError::ReadOnly(path.display().to_string()),
        Some(libc::EACCES) | Some(libc::EPERM) => DiskError::Permission(path.display().to_string()),
        _ => DiskError::Io(format!("cannot {doing}: {e}")),
    }
}

fn open_flags(direct: bool) -> i32 {
    if direct { libc::O_DIRECT } else { 0 }
}

/// How to open a target: `name` tells the temporary files of one run apart (`disk-0`,
/// `copy-1`…), `flags` are added to the open (O_SYNC, O_DSYNC). A direct target is opened a
/// second time through the page cache, for records that are not whole logical blocks.
#[derive(Debug, Clone, Copy)]
pub struct Opening<'a> {
    pub name: &'a str,
    pub direct: bool,
    pub flags: i32,
}

/// Where a target of `place` goes and what it is, checked without touching anything: its
/// path (a temporary file's named `name`), whether peakbench creates it, whether it is a block
/// device, and the option that chose it; and that `bytes` fit the free space where files are
/// created.
pub fn resolve(
    place: &Place,
    name: &str,
    bytes: u64,
) -> Result<(PathBuf, bool, bool, &'static str), DiskError> {
    let option = match place {
        Place::Dir(_) => "--dir",
        Place::File { .. } => "--file",
    };
    let (path, created, is_block_device) = match place {
        Place::Dir(dir) => {
            if !dir.exists() {
                return Err(DiskError::DirMissing {
                    dir: dir.display().to_string(),
                    option,
                });
            }
            if !dir.is_dir() {
                return Err(DiskError::NotADir(dir.display().to_string()));
            }
            let name = format!(".peakbench-{name}-{}.tmp", std::process::id());
            (dir.join(name), true, false)
        }
        Place::File {
            path,
            allow_overwrite,
            destructive,
        } => match std::fs::metadata(path) {
            Ok(m) if m.file_type().is_block_device() => {
                if !destructive {
                    return Err(DiskError::BlockDeviceNeedsDestructive(
                        path.display().to_string(),
                    ));
                }
                (path.clone(), false, true)
            }
            // A directory, a character device, a FIFO or a socket is no test file.
            Ok(m) if !m.is_file() => return Err(DiskError::NotAFile(path.display().to_string())),
            Ok(_) if !allow_overwrite => {
                return Err(DiskError::FileExists(path.display().to_string()));
            }
            Ok(_) => (path.clone(), false, false),
            Err(_) => {
                let dir = dir_of(path);
                if !dir.is_dir() {
                    return Err(DiskError::DirMissing {
                        dir: dir.display().to_string(),
                        option,
                    });
                }
                (path.clone(), true, false)
            }
        },
    };
    let dir = dir_of(&path);
    if created
        && let Some(free) = crate::files::free_bytes(dir)
        && free < need_with_margin(bytes)
    {
        return Err(DiskError::NoSpace {
            path: dir.display().to_string(),
            need: need_with_margin(bytes),
            free,
            option,
        });
    }
    Ok((path, created, is_block_device, option))
}

/// Opens (creating where allowed) the target of `size` bytes.
pub fn open(place: &Place, size: u64, how: Opening) -> Result<Target, DiskError> {
    let direct = how.direct;
    let (path, created, is_block_device, option) = resolve(place, how.name, size)?;
    let fail = |e, doing: &str| {
        let doing = format!("{doing} {}", path.display());
        io_error(&path, e, doing, option, is_block_device)
    };
    let mut opts = OpenOptions::new();
    opts.read(true)
        .write(true)
        .custom_flags(open_flags(direct) | how.flags);
    if created {
        opts.create_new(true);
    }
    let file = match opts.open(&path) {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) && direct => {
            if created {
                let _ = std::fs::remove_file(&path);
            }
            return Err(DiskError::DirectUnsupported(path.display().to_string()));
        }
        Err(e) if created => return Err(fail(e, "create the test file")),
        Err(e) => return Err(fail(e, "open")),
    };
    // Removed again, whatever fails next, once it is a Target.
    let mut target = Target {
        path: path.clone(),
        file,
        buffered: None,
        size,
        direct,
        align: 512,
        device: None,
        file_system: None,
        is_block_device,
        created,
        option,
    };
    if direct {
        let mut again = OpenOptions::new();
        again.read(true).write(true).custom_flags(how.flags);
        target.buffered = Some(again.open(&path).map_err(|e| fail(e, "open"))?);
    }
    let file = &target.file;
    let meta = file.metadata().map_err(|e| fail(e, "stat"))?;
    // What was opened is what was checked: a path swapped since (for a symlink to a block
    // device, or another file) is refused before anything is written to it.
    let shown = || path.display().to_string();
    if meta.file_type().is_block_device() != is_block_device {
        return Err(if is_block_device {
            DiskError::NotAFile(shown())
        } else {
            DiskError::BlockDeviceNeedsDestructive(shown())
        });
    }
    if !is_block_device && !meta.is_file() {
        return Err(DiskError::NotAFile(shown()));
    }
    if let Some(again) = &target.buffered {
        let m = again.metadata().map_err(|e| fail(e, "stat"))?;
        if (m.dev(), m.ino()) != (meta.dev(), meta.ino()) {
            return Err(DiskError::NotAFile(shown()));
        }
    }
    let dev = if is_block_device {
        meta.rdev()
    } else {
        meta.dev()
    };
    let device = describe(libc::major(dev), libc::minor(dev));
    if !is_block_device {
        target.file_system = Some(file_system(file));
    }
    let align = device
        .as_ref()
        .and_then(|d| d.logical_block_bytes)
        .unwrap_or(512) as u64;
    target.size = if is_block_device {
        let mut bytes: u64 = 0;
        // SAFETY: BLKGETSIZE64 writes one u64 to the pointer given.
        let rc = unsafe { libc::ioctl(file.as_raw_fd(), 0x8008_1272, &mut bytes) };
        if rc != 0 {
            return Err(DiskError::Io(format!(
                "cannot read the size of {}",
                path.display()
            )));
        }
        size.min(bytes)
    } else {
        size
    };
    target.align = align;
    target.device = device;
    Ok(target)
}

impl Target {
    /// Lays the file out: every byte written with incompressible data (never sparse), synced,
    /// and checked with st_blocks. Stops on Ctrl-C.
    pub fn precondition(&mut self) -> Result<(), DiskError> {
        if !self.is_block_device
            && let Ok(m) = self.file.metadata()
            && m.len() >= self.size
            && m.blocks() * 512 >= self.size
        {
            return Ok(());
        }
        const CHUNK: usize = 1 << 20;
        let buf = Buffer::new(CHUNK, HugePages::Off).map_err(|e| DiskError::Io(e.to_string()))?;
        // SAFETY: the buffer holds CHUNK bytes and is only used here.
        let bytes = unsafe { std::slice::from_raw_parts_mut(buf.as_ptr(), CHUNK) };
        let mut rng = SplitMix64(0x5eed);
        let mut off = 0u64;
        while off < self.size {
            if stop::requested() {
                return Err(DiskError::Interrupted);
            }
            rng.fill(bytes);
            let len = (CHUNK as u64).min(self.size - off) as usize;
            let len = len.div_ceil(self.align as usize) * self.align as usize;
            // SAFETY: bytes[..len] lies in the 2 MiB-rounded buffer; fd is open for writing.
            let n = unsafe {
                libc::pwrite(
                    self.file.as_raw_fd(),
                    bytes.as_ptr() as *const libc::c_void,
                    len,
                    off as i64,
                )
            };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::EINVAL) && self.direct {
                    return Err(DiskError::DirectUnsupported(
                        self.path.display().to_string(),
                    ));
                }
                return Err(self.io_error(
                    e,
                    format!(
                        "lay out the {}-byte test file {} ({off} bytes written)",
                        self.size,
                        self.path.display()
                    ),
                ));
            }
            off += n as u64;
        }
        let laid_out = format!("lay out the test file {}", self.path.display());
        self.file
            .sync_all()
            .map_err(|e| self.io_error(e, laid_out.clone()))?;
        if !self.is_block_device {
            let m = self
                .file
                .metadata()
                .map_err(|e| self.io_error(e, laid_out.clone()))?;
            if m.blocks() * 512 < self.size {
                return Err(DiskError::Io(format!(
                    "{} is still sparse after layout ({} of {} bytes allocated)",
                    self.path.display(),
                    m.blocks() * 512,
                    self.size
                )));
            }
        }
        Ok(())
    }

    /// The descriptor for records of `block` bytes: O_DIRECT where they are whole logical
    /// blocks, else the page cache's; and whether that is the page cache's.
    pub fn fd_for(&self, block: u64) -> (std::os::unix::io::RawFd, bool) {
        match &self.buffered {
            Some(b) if self.falls_back(block) => (b.as_raw_fd(), true),
            _ => (self.file.as_raw_fd(), !self.direct),
        }
    }

    /// Whether records of `block` bytes go through the page cache although O_DIRECT was asked
    /// for.
    pub fn falls_back(&self, block: u64) -> bool {
        self.direct && !block.is_multiple_of(self.align)
    }

    /// Whether peakbench created the file (and will remove it).
    pub fn created(&self) -> bool {
        self.created
    }

    /// The error of `doing` something to the target (`doing` names it): a full file system
    /// says which one and what to do.
    pub fn io_error(&self, e: std::io::Error, doing: String) -> DiskError {
        io_error(&self.path, e, doing, self.option, self.is_block_device)
    }
}
/// The free space a file of `size` bytes needs: itself and 5 % (file system metadata); a size
/// whose margin cannot be counted needs more than any file system has.
fn need_with_margin(size: u64) -> u64 {
    size.saturating_add(size / 20)
}

/// The name of the file system holding `file`, from its magic number (`fstatfs`), or
/// `unknown (0x…)`.
pub fn file_system(file: &File) -> String {
    // SAFETY: statfs is plain data, all zeros a valid value.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor and a pointer to a statfs the call fills.
    if unsafe { libc::fstatfs(file.as_raw_fd(), &mut st) } != 0 {
        return "unknown (fstatfs failed)".into();
    }
    let magic = st.f_type as u64 & 0xffff_ffff;
    let name = match magic {
        0xEF53 => "ext4",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x0102_1994 => "tmpfs",
        0x794C_7630 => "overlayfs",
        0x6969 => "nfs",
        0x2FC1_2FC1 => "zfs",
        0xF2F5_2010 => "f2fs",
        0x4D44 => "vfat",
        0x2011_BAB0 => "exfat",
        0x5346_544E => "ntfs",
        0xFF53_4D42 => "cifs",
        0xFE53_4D42 => "smb2",
        0x6573_5546 => "fuse",
        0x00C3_6400 => "ceph",
        0x0BD0_0BD0 => "lustre",
        0x4750_4653 => "gpfs",
        0x0102_1997 => "9p",
        0x5265_4973 => "reiserfs",
        0x3153_464A => "jfs",
        0x7461_636F => "ocfs2",
        _ => return format!("unknown (0x{magic:x})"),
    };
    name.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The free-space check cannot be bypassed by a size whose margin overflows.
    #[test]
    fn the_margin_of_a_huge_size_does_not_wrap() {
        assert_eq!(need_with_margin(2000), 2100);
        assert_eq!(need_with_margin(u64::MAX), u64::MAX);
        assert_eq!(need_with_margin(u64::MAX - u64::MAX / 40), u64::MAX);
    }
}
