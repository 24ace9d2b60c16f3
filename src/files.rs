//! The files peakbench writes and the files it reads from users: every output and every input
//! document goes through here.
//!
//! An output is written to a new temporary file in the target's directory, created with
//! O_CREAT|O_EXCL and an unpredictable name (a symlink planted there is never followed), then
//! renamed over the target (a symlink at the target is replaced, never written through). A
//! target that is a character device or a pipe (`/dev/null`, a FIFO) is written into, never
//! replaced — renaming over `/dev/null` as root would leave a regular file there for every
//! program after — and so is a name of one of peakbench's own descriptors (`/dev/stdout`,
//! `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`), whatever it is open on: through the
//! descriptor itself, a redirection to a file included. A block device is refused. An input must be a regular file of
//! bounded size and is read through a bounded reader.
//!
//! One rule for where outputs go, checked before anything runs ([`check_output_file`],
//! [`check_output_dir`]): the directory of an output file must exist — peakbench never creates
//! it, as a misspelt path should not silently become a new tree. The exceptions are places the
//! user did not name (the results database's default directory) and a directory that is itself
//! the output (`report --png DIR`), which is created when its parent exists.

use crate::error::UsageError;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The user error of an output `path` whose directory `dir` is missing: one message for every
/// output option.
fn no_directory(path: &Path, dir: &Path) -> UsageError {
    UsageError(format!(
        "cannot write {}: directory {} does not exist; create it first",
        path.display(),
        dir.display()
    ))
}

/// The directory an output `path` goes into (`.` for a bare name).
fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Checks that its parent directory exists (and is a directory) for an output at `path`.
fn check_parent(path: &Path) -> Result<(), UsageError> {
    let dir = parent_of(path);
    if dir.is_dir() {
        Ok(())
    } else if dir.exists() {
        Err(UsageError(format!(
            "cannot write {}: {} is not a directory",
            path.display(),
            dir.display()
        )))
    } else {
        Err(no_directory(path, dir))
    }
}

/// Checks, before anything runs, that an output file can be created at `path` (`-`, standard
/// output, always can): its directory exists and it is not itself a directory.
pub fn check_output_file(path: &Path) -> Result<(), UsageError> {
    if path.as_os_str() == "-" {
        return Ok(());
    }
    if let Some(fd) = descriptor(path) {
        // SAFETY: F_GETFD on a descriptor number reads its flags and touches no memory.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
            return Err(UsageError(format!(
                "cannot write {}: descriptor {fd} is not open; give a file name or -",
                path.display()
            )));
        }
        return Ok(());
    }
    check_parent(path)?;
    if path.is_dir() {
        return Err(UsageError(format!(
            "cannot write {}: it is a directory; give a file name",
            path.display()
        )));
    }
    if is_block_device(path) {
        return Err(UsageError(block_device(path)));
    }
    Ok(())
}

/// Whether `path` is (or links to) a block device, which no output may go to.
fn is_block_device(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}

/// The refusal of an output on a block device.
fn block_device(path: &Path) -> String {
    format!(
        "cannot write {}: it is a block device, which an output would overwrite; give a file name",
        path.display()
    )
}

/// How long an output FIFO's reader is waited for before the FIFO is refused.
const FIFO_READER: std::time::Duration = std::time::Duration::from_secs(5);

/// Opens `path` for writing in place when it is (or links to) a character device or a pipe —
/// such a target is written into, never replaced — and `None` for anything else (a file, a
/// missing name), which is written atomically. The type is checked again on the opened file, so
/// a swap between the look and the open cannot make a regular file be written in place.
fn open_in_place(path: &Path) -> std::io::Result<Option<std::fs::File>> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::FileTypeExt;
    if let Some(fd) = descriptor(path) {
        return own_descriptor(fd, path).map(Some);
    }
    let special = |t: std::fs::FileType| t.is_char_device() || t.is_fifo();
    match std::fs::metadata(path) {
        Ok(m) if m.file_type().is_block_device() => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            block_device(path),
        )),
        Ok(m) if special(m.file_type()) => {
            // No O_CREAT and no O_TRUNC: nothing is created, nothing is cut. O_NONBLOCK: a FIFO
            // that nobody reads fails to open (ENXIO) instead of blocking; its reader is given
            // FIFO_READER to come, then the FIFO is refused rather than waited on forever.
            let open = || {
                std::fs::OpenOptions::new()
                    .write(true)
                    .custom_flags(libc::O_NONBLOCK)
                    .open(path)
            };
            let deadline = std::time::Instant::now() + FIFO_READER;
            let file = loop {
                match open() {
                    Err(e)
                        if e.raw_os_error() == Some(libc::ENXIO)
                            && std::time::Instant::now() < deadline =>
                    {
                        std::thread::sleep(std::time::Duration::from_millis(10));
                    }
                    Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                        return Err(std::io::Error::new(
                            e.kind(),
                            format!(
                                "{} is a FIFO that no process reads (none came within {} s); start its reader first",
                                path.display(),
                                FIFO_READER.as_secs()
                            ),
                        ));
                    }
                    r => break r?,
                }
            };
            // Written as any file from here on (a reader that is slow is waited for).
            // SAFETY: F_GETFL/F_SETFL on a descriptor this function owns; no memory is passed.
            unsafe {
                let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
                if flags >= 0 {
                    libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
                }
            }
            Ok(special(file.metadata()?.file_type()).then_some(file))
        }
        _ => Ok(None),
    }
}

/// The descriptor of this process that `path` names (`/dev/stdout`, `/dev/stderr`,
/// `/dev/fd/N`, `/proc/self/fd/N`), whatever it is open on. Renamed over as any file, as root
/// with standard output redirected to a file, `/dev/stdout` became a regular file for every
/// program after, and the output went there instead of to the redirection.
fn descriptor(path: &Path) -> Option<libc::c_int> {
    let name = path.to_str()?;
    match name {
        "/dev/stdout" => Some(1),
        "/dev/stderr" => Some(2),
        _ => name
            .strip_prefix("/dev/fd/")
            .or_else(|| name.strip_prefix("/proc/self/fd/"))?
            .parse()
            .ok(),
    }
}

/// A new descriptor for this process's descriptor `fd` (named by `path`), written at its
/// offset as the descriptor is: what the shell redirected it to gets the output.
fn own_descriptor(fd: libc::c_int, path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::fd::FromRawFd;
    // What peakbench printed to standard output comes first.
    std::io::stdout().flush()?;
    // SAFETY: dup takes a descriptor number and touches no memory; a number that is not an
    // open descriptor fails with EBADF.
    let copy = unsafe { libc::dup(fd) };
    if copy < 0 {
        let e = std::io::Error::last_os_error();
        return Err(std::io::Error::new(
            e.kind(),
            format!("{}: descriptor {fd} is not open ({e})", path.display()),
        ));
    }
    // SAFETY: `copy` is a descriptor dup just opened for this File alone, which closes it.
    Ok(unsafe { std::fs::File::from_raw_fd(copy) })
}

/// Whether `path` is (or links to) a pipe or a character device, or names one of this
/// process's descriptors: an output written into in place ([`write_output`]), which takes each
/// write as more of its stream.
pub fn is_stream(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    path == Path::new("-")
        || descriptor(path).is_some()
        || std::fs::metadata(path)
            .is_ok_and(|m| m.file_type().is_char_device() || m.file_type().is_fifo())
}

/// Checks, before anything runs, that `dir` can take output files: it is a directory, or it
/// is missing and its parent exists (then [`create_output_dir`] creates it).
///
/// A symbolic link is refused: the files written into the directory have fixed names, and
/// renamed through a link they would replace files in whatever directory it points to.
pub fn check_output_dir(dir: &Path) -> Result<(), UsageError> {
    if std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(UsageError(format!(
            "cannot write into {}: it is a symbolic link, and files are written only into a directory itself; give the directory it points to, or a new one",
            crate::text::printable(&dir.display().to_string())
        )));
    }
    if dir.is_dir() {
        return Ok(());
    }
    if dir.exists() {
        return Err(UsageError(format!(
            "cannot write into {}: it is not a directory; give a directory",
            dir.display()
        )));
    }
    check_parent(dir)
}

/// Creates the output directory `dir` checked by [`check_output_dir`] (not its parents).
/// A symbolic link put there since the check is refused as well.
pub fn create_output_dir(dir: &Path) -> std::io::Result<()> {
    match std::fs::create_dir(dir) {
        Err(e)
            if e.kind() == std::io::ErrorKind::AlreadyExists
                && std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) =>
        {
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(std::io::Error::new(
            e.kind(),
            format!(
                "{} is not a directory (a symbolic link or a file)",
                dir.display()
            ),
        )),
        r => r.map_err(|e| explained(e, parent_of(dir))),
    }
}

/// What a write error says about space, in words naming the place: the file system of `dir` is
/// full (ENOSPC) or the user's disk quota on it is used up (EDQUOT); None for any other error.
pub fn space_problem(e: &std::io::Error, dir: &Path) -> Option<String> {
    use std::io::ErrorKind;
    match e.kind() {
        ErrorKind::StorageFull => Some(format!("the file system of {} is full", dir.display())),
        ErrorKind::QuotaExceeded => Some(format!(
            "your disk quota on the file system of {} is used up",
            dir.display()
        )),
        _ => None,
    }
}

/// What the file system holding `dir` has left for an unprivileged writer: bytes, and inodes
/// where it counts them (None where it does not, as btrfs); None when it cannot be asked.
fn space_left(dir: &Path) -> Option<(u64, Option<u64>)> {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: statvfs fills the zeroed struct; c is a valid NUL-terminated path.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    (rc == 0).then(|| {
        let inodes = (st.f_files > 0).then_some(st.f_favail as u64);
        (st.f_bavail as u64 * st.f_frsize as u64, inodes)
    })
}

/// Free bytes for an unprivileged writer in the file system holding `dir`.
pub fn free_bytes(dir: &Path) -> Option<u64> {
    space_left(dir).map(|(bytes, _)| bytes)
}

/// Whether the file system holding `dir` has no byte or no inode left: what a library that
/// reports only "I/O error" (SQLite on its -shm file) failed for.
pub fn is_full(dir: &Path) -> bool {
    matches!(space_left(dir), Some((0, _)) | Some((_, Some(0))))
}

/// The error of a write into `dir`, said plainly when it is for want of space (with what to
/// do), else as it came.
pub fn explained(e: std::io::Error, dir: &Path) -> std::io::Error {
    match space_problem(&e, dir) {
        Some(problem) => std::io::Error::new(
            e.kind(),
            format!("{problem}; free space there or choose another directory"),
        ),
        None => e,
    }
}

/// Writes `bytes` to standard output and flushes it. A full file system behind a redirection
/// is said as such; nothing panics (as `print!` would).
pub fn write_stdout(bytes: &[u8]) -> std::io::Result<()> {
    write_stdout_with(|out| out.write_all(bytes))
}

/// [`write_stdout`] of what `write` writes, as it writes it.
pub fn write_stdout_with(
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    write(&mut out).and_then(|()| out.flush()).map_err(|e| {
        match space_problem(&e, Path::new("standard output")) {
            Some(_) if e.kind() == std::io::ErrorKind::QuotaExceeded => std::io::Error::new(
                e.kind(),
                "your disk quota on the file system standard output goes to is used up; free space there or redirect it elsewhere",
            ),
            Some(_) => std::io::Error::new(
                e.kind(),
                "the file system standard output goes to is full; free space there or redirect it elsewhere",
            ),
            None => e,
        }
    })
}

/// Prints `text`, for a terminal, on standard output ([`write_stdout`]), every control and
/// format character but the line feed and the tab escaped ([`crate::text::printable_lines`]):
/// whatever a document, a peer or a tool put in it, nothing printed can move the cursor,
/// retitle the terminal or reorder the line. The error says it was standard output.
/// Machine-readable output (JSON, CSV) is written with [`write_stdout`] as it is.
pub fn print(text: &str) -> anyhow::Result<()> {
    use anyhow::Context;
    write_stdout(crate::text::printable_lines(text).as_bytes())
        .context("cannot write to standard output")
}

/// Writes `bytes` to `path` atomically, or to standard output for `-`. An error names no
/// temporary file, and one for want of space says which file system is full and what to do;
/// the temporary file is removed whatever fails.
pub fn write_output(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_output_with(path, |w| w.write_all(bytes))
}

/// [`write_output`] of what `write` writes, as it writes it (a document larger than memory
/// would hold twice is never whole in memory).
pub fn write_output_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    if path == Path::new("-") {
        return write_stdout_with(write);
    }
    if let Some(file) = open_in_place(path)? {
        let mut out = std::io::BufWriter::new(file);
        return write(&mut out).and_then(|()| out.flush());
    }
    let dir = parent_of(path);
    let name = path
        .file_name()
        .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
    // O_CREAT|O_EXCL (never through a symlink), 0666 less the umask as any file the user
    // creates; opened here rather than by tempfile, whose errors name the temporary file.
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".peakbench-tmp")
        .make_in(dir, |p| {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o666)
                .open(p)
        })
        .map_err(|e| explained(e, dir))?;
    // On failure the temporary file is removed when `tmp` is dropped.
    let mut out = std::io::BufWriter::new(tmp.as_file_mut());
    write(&mut out)
        .and_then(|()| out.flush())
        .map_err(|e| explained(e, dir))?;
    drop(out);
    tmp.persist(path)
        .map(|_| ())
        .map_err(|e| explained(e.error, dir))
}

/// Opens `path` for a stream of lines written as they come (`--json-stream`): standard output
/// for `-`, a pipe or a character device in place, else a file created or emptied, never
/// through a symbolic link (O_NOFOLLOW) and never a block device.
pub fn open_stream(path: &Path) -> std::io::Result<Box<dyn Write + Send>> {
    if path == Path::new("-") {
        return Ok(Box::new(std::io::stdout()));
    }
    if let Some(file) = open_in_place(path)? {
        return Ok(Box::new(file));
    }
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o666)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                std::io::Error::new(
                    e.kind(),
                    format!(
                        "{} is a symbolic link, which a stream is never written through; give the file itself",
                        path.display()
                    ),
                )
            } else {
                explained(e, parent_of(path))
            }
        })?;
    Ok(Box::new(file))
}

/// The largest input document read by default, and the option that raises it.
pub const DEFAULT_MAX_INPUT: u64 = 256 << 20;

/// Why an input document cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is not a regular file ({kind}); give a regular file")]
    NotAFile { path: String, kind: &'static str },
    #[error("{path} is larger than {limit} bytes, the most peakbench reads here; {raise}")]
    TooLarge {
        path: String,
        limit: u64,
        raise: &'static str,
    },
}

/// What a file that is not a regular file is, in words.
fn kind_of(t: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "another kind of file"
    }
}

/// Reads the file at `path`: a regular file of at most `limit` bytes (a device, a pipe or a
/// larger file is refused before anything is read; `raise` says how to raise the limit).
pub fn read_input(path: &Path, limit: u64, raise: &'static str) -> Result<Vec<u8>, InputError> {
    let shown = path.display().to_string();
    let io = |source| InputError::Io {
        path: shown.clone(),
        source,
    };
    // O_NONBLOCK: opening a FIFO for reading waits for a writer; with it the open returns at
    // once and the type check below refuses the FIFO (a regular file ignores the flag).
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(InputError::NotAFile {
            path: shown,
            kind: kind_of(meta.file_type()),
        });
    }
    if meta.len() > limit {
        return Err(InputError::TooLarge {
            path: shown,
            limit,
            raise,
        });
    }
    // The file may grow while it is read: never past the limit.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLarge {
            path: shown,
            limit,
            raise,
        });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A symlink at the output or at any name its temporary file once had (the old
    /// `.NAME.peakbench-tmp-PID`) is never written through.
    #[test]
    fn outputs_never_follow_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let out = dir.path().join("out.json");
        symlink(&victim, &out).unwrap();
        symlink(
            &victim,
            dir.path()
                .join(format!(".out.json.peakbench-tmp-{}", std::process::id())),
        )
        .unwrap();
        write_output(&out, b"{}").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(
            !std::fs::symlink_metadata(&out)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&out).unwrap(), b"{}");
        // Nothing left behind but the planted link, the victim and the output.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
        // Readable by others as any file the user creates (umask 022 here: 0644).
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & 0o600, 0o600, "{mode:o}");
    }

    /// A character device or a pipe at the output, or a symlink to one, is written into and
    /// stays what it was (renaming over `/dev/null` as root replaced it with a regular file for
    /// every program after); a block device is refused before it is opened.
    #[test]
    fn devices_and_pipes_are_written_into_never_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let null = dir.path().join("null");
        symlink("/dev/null", &null).unwrap();
        write_output(&null, b"{}").unwrap();
        assert!(std::fs::symlink_metadata(&null).unwrap().is_symlink());
        let dev = std::fs::symlink_metadata("/dev/null").unwrap();
        assert!(dev.file_type().is_char_device(), "/dev/null was replaced");

        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        write_output(&fifo, b"{\"a\":1}").unwrap();
        assert_eq!(reader.join().unwrap(), b"{\"a\":1}");
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
        assert!(check_output_file(&fifo).is_ok());

        // A block device node made here (root only): refused, checked and written alike.
        let block = dir.path().join("block");
        let c = std::ffi::CString::new(block.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path that outlives the call; loop0's numbers (7, 0).
        if unsafe { libc::mknod(c.as_ptr(), libc::S_IFBLK | 0o600, libc::makedev(7, 0)) } == 0 {
            let e = check_output_file(&block).unwrap_err().to_string();
            assert!(e.contains("block device"), "{e}");
            let e = write_output(&block, b"{}").unwrap_err().to_string();
            assert!(e.contains("block device"), "{e}");
            assert!(
                std::fs::symlink_metadata(&block)
                    .unwrap()
                    .file_type()
                    .is_block_device()
            );
        }
    }

    #[test]
    fn inputs_are_bounded_regular_files() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small.json");
        std::fs::write(&small, vec![b' '; 2048]).unwrap();
        let raise = "raise it with --max-input SIZE";
        assert_eq!(read_input(&small, 4096, raise).unwrap().len(), 2048);
        let e = read_input(&small, 1024, raise).unwrap_err().to_string();
        assert!(e.contains("1024 bytes") && e.contains("--max-input"), "{e}");
        // A FIFO with no writer: refused at once, not waited on.
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo reads it and keeps nothing.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_input(&fifo, 1024, raise).unwrap_err();
        assert!(matches!(e, InputError::NotAFile { .. }), "{e}");
        let e = read_input(Path::new("/dev/zero"), 1024, raise).unwrap_err();
        assert!(matches!(e, InputError::NotAFile { .. }), "{e}");
        assert!(read_input(dir.path(), 1024, raise).is_err());
        assert!(read_input(&dir.path().join("absent"), 1024, raise).is_err());
    }
}
