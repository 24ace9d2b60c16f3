//! Frames: a 4-byte big-endian length, then that many bytes of JSON, bounded before anything
//! is allocated, and read against a deadline for the whole frame (a peer that trickles bytes
//! is cut off as surely as a silent one). The network benchmark's control connection and the
//! cluster's channel both speak in frames.

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// Why a frame could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("the peer closed the connection")]
    Closed,
    #[error("the peer sent nothing for too long")]
    Timeout,
    #[error("a {0}-byte control message exceeds the {1}-byte limit")]
    TooLong(u32, u32),
    #[error("malformed control message: {0}")]
    Malformed(String),
    #[error(
        "a message failed authentication: forged, altered or replayed, or sent without the run's --token"
    )]
    Forged,
    #[error("{0}")]
    Io(io::Error),
}

impl From<io::Error> for FrameError {
    fn from(e: io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::BrokenPipe => FrameError::Closed,
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => FrameError::Timeout,
            _ => FrameError::Io(e),
        }
    }
}

/// Encodes any message type as one frame (the cluster coordinator's messages use the same
/// framing with a larger limit).
pub fn encode_frame<T: Serialize>(msg: &T) -> Vec<u8> {
    frame(&serde_json::to_vec(msg).expect("control messages serialise"))
        .expect("a control message is far below 4 GiB")
}

/// `body` behind its 4-byte big-endian length.
fn frame(body: &[u8]) -> io::Result<Vec<u8>> {
    let len = u32::try_from(body.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a frame of 4 GiB or more"))?;
    let mut frame = Vec::with_capacity(4 + body.len());
    frame.extend_from_slice(&len.to_be_bytes());
    frame.extend_from_slice(body);
    Ok(frame)
}

/// Reads one frame of at most `max` bytes (checked before allocation) as a `T`.
pub fn read_frame<T: DeserializeOwned>(r: &mut impl Read, max: u32) -> Result<T, FrameError> {
    parse(&read_raw(r, max)?)
}

/// Parses a frame's body.
pub fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<T, FrameError> {
    serde_json::from_slice(body).map_err(|e| FrameError::Malformed(e.to_string()))
}

/// Reads one frame's body, of at most `max` bytes (checked before allocation).
pub fn read_raw(r: &mut impl Read, max: u32) -> Result<Vec<u8>, FrameError> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    let len = u32::from_be_bytes(len);
    if len > max {
        return Err(FrameError::TooLong(len, max));
    }
    let mut body = vec![0u8; len as usize];
    r.read_exact(&mut body)?;
    Ok(body)
}

/// Reads one frame's body of at most `max` bytes that must be complete by `until`.
pub fn read_raw_until(stream: &TcpStream, until: Instant, max: u32) -> Result<Vec<u8>, FrameError> {
    read_raw(&mut Deadline { stream, until }, max)
}

/// Writes any message type as one frame.
pub fn write_frame<T: Serialize>(w: &mut impl Write, msg: &T) -> io::Result<()> {
    w.write_all(&encode_frame(msg))?;
    w.flush()
}

/// Writes `body` as one frame.
pub fn write_raw(w: &mut impl Write, body: &[u8]) -> io::Result<()> {
    w.write_all(&frame(body)?)?;
    w.flush()
}

/// Reads one frame of at most `max` bytes that must be complete by `until`.
pub fn read_frame_until<T: DeserializeOwned>(
    stream: &TcpStream,
    until: Instant,
    max: u32,
) -> Result<T, FrameError> {
    read_frame(&mut Deadline { stream, until }, max)
}

/// Reads from a stream with a deadline for the whole message, not for each read.
struct Deadline<'a> {
    stream: &'a TcpStream,
    until: Instant,
}

impl Read for Deadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self
            .until
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or(io::ErrorKind::TimedOut)?;
        self.stream.set_read_timeout(Some(left))?;
        let mut s = self.stream;
        s.read(buf)
    }
}

/// Waits up to `timeout` for `stream` to have something to read, without reading it.
pub fn readable(stream: &TcpStream, timeout: Duration) -> bool {
    fd_readable(stream.as_raw_fd(), timeout)
}

/// Waits up to `timeout` (at least 1 ms, at most 60 s) for the socket `fd` to be readable.
pub fn fd_readable(fd: std::os::fd::RawFd, timeout: Duration) -> bool {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = timeout.as_millis().clamp(1, 60_000) as libc::c_int;
    // SAFETY: one valid pollfd for a socket that outlives the call.
    unsafe { libc::poll(&mut pfd, 1, ms) > 0 }
}
