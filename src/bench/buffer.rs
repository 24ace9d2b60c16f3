//! Page-aligned anonymous memory for the memory and disk benchmarks (mmap), with transparent huge pages
//! asked for or refused (madvise), and first touch by the thread that will measure it, so that
//! the pages live on that thread's NUMA node.

use std::ptr::NonNull;

/// Whether a buffer asks for transparent huge pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HugePages {
    /// madvise(MADV_HUGEPAGE): 2 MiB pages where the kernel can give them.
    On,
    /// madvise(MADV_NOHUGEPAGE): 4 KiB pages.
    Off,
}

impl HugePages {
    pub fn name(self) -> &'static str {
        self.pages().name()
    }

    /// The pages a record says its buffers asked for.
    pub fn pages(self) -> crate::results::params::Pages {
        match self {
            HugePages::On => crate::results::params::Pages::Thp,
            HugePages::Off => crate::results::params::Pages::Small,
        }
    }
}

/// An anonymous mapping, unmapped on drop.
pub struct Buffer {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the buffer is plain memory owned by this value; moving it between threads is sound.
unsafe impl Send for Buffer {}
// SAFETY: shared references only hand out raw pointers; kernels partition the memory.
unsafe impl Sync for Buffer {}

impl Buffer {
    /// Maps `len` bytes (rounded up to 2 MiB so that huge pages can cover it), applies the huge
    /// page advice, and touches every page with zeros from the calling thread.
    pub fn new(len: usize, huge: HugePages) -> std::io::Result<Buffer> {
        Buffer::new_with(len, huge, |_, _| Ok(()))
    }

    /// [`Buffer::new`], with `place(ptr, len)` run on the mapping before its first touch (a
    /// NUMA binding: the pages are then faulted in where it says).
    pub fn new_with(
        len: usize,
        huge: HugePages,
        place: impl FnOnce(*mut u8, usize) -> std::io::Result<()>,
    ) -> std::io::Result<Buffer> {
        const ALIGN: usize = 2 << 20;
        let len = len.max(1).div_ceil(ALIGN) * ALIGN;
        // SAFETY: anonymous private mapping, no file; the result is checked below.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let advice = match huge {
            HugePages::On => libc::MADV_HUGEPAGE,
            HugePages::Off => libc::MADV_NOHUGEPAGE,
        };
        // SAFETY: ptr/len is the mapping just created. Advice failing (THP disabled) is harmless:
        // the buffer then uses 4 KiB pages, and `huge_page_bytes` reports what it got.
        unsafe { libc::madvise(ptr, len, advice) };
        if let Err(e) = place(ptr as *mut u8, len) {
            // SAFETY: the mapping just created, not yet handed out.
            unsafe { libc::munmap(ptr, len) };
            return Err(e);
        }
        // SAFETY: the mapping is len bytes, readable and writable.
        unsafe { std::ptr::write_bytes(ptr as *mut u8, 0, len) };
        Ok(Buffer {
            ptr: NonNull::new(ptr as *mut u8).expect("mmap returned a non-null pointer"),
            len,
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Bytes of this buffer backed by huge pages, from /proc/self/smaps (None when unreadable).
    pub fn huge_page_bytes(&self) -> Option<u64> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let start = self.ptr.as_ptr() as usize;
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ')
                && let Some((a, b)) = range.split_once('-')
                && let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
            {
                inside = a <= start && start < b;
                continue;
            }
            if inside && let Some(v) = line.strip_prefix("AnonHugePages:") {
                return v
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .map(|k| k * 1024);
            }
        }
        None
    }
}

/// Asks for transparent huge pages (madvise MADV_HUGEPAGE) on the whole 2 MiB pages inside
/// `data`, for memory not yet touched (a fresh `vec![0; n]` or a Vec's spare capacity): the
/// pages faulted in afterwards are huge where the kernel allows it. Only advice: where THP is
/// off, or `data` holds no whole huge page, nothing changes, and the values are never touched.
pub fn advise_huge_pages<T>(data: &[T]) {
    const HUGE: usize = 2 << 20;
    let start = data.as_ptr() as usize;
    let end = start.saturating_add(std::mem::size_of_val(data));
    let first = start.div_ceil(HUGE).saturating_mul(HUGE);
    let last = end / HUGE * HUGE;
    if first < last {
        // SAFETY: the range lies inside `data`'s own memory, and MADV_HUGEPAGE changes only
        // how its pages are backed, never their contents; failure (THP disabled) is harmless.
        unsafe {
            libc::madvise(
                first as *mut libc::c_void,
                last - first,
                libc::MADV_HUGEPAGE,
            )
        };
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: ptr/len is exactly the mapping created in `new`, unmapped once.
        unsafe { libc::munmap(self.ptr.as_ptr() as *mut libc::c_void, self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_zeroed_and_rounded() {
        let b = Buffer::new(3 << 20, HugePages::On).unwrap();
        assert_eq!(b.len(), 4 << 20);
        assert_eq!(b.as_ptr() as usize % 4096, 0);
        // SAFETY: within the mapping.
        assert_eq!(unsafe { *b.as_ptr().add(b.len() - 1) }, 0);
        let off = Buffer::new(1 << 20, HugePages::Off).unwrap();
        assert_eq!(off.huge_page_bytes().unwrap_or(0), 0);
    }

    #[test]
    fn huge_page_advice_keeps_the_values() {
        let mut v = vec![0.5f64; 1 << 20];
        v[12345] = 2.0;
        advise_huge_pages(&v);
        assert_eq!(v[12345], 2.0);
        assert_eq!(v.iter().filter(|&&x| x == 0.5).count(), (1 << 20) - 1);
        // Small, empty and unaligned slices ask for nothing and do not fail.
        advise_huge_pages(&v[1..3]);
        advise_huge_pages::<f64>(&[]);
        let mut w: Vec<u8> = Vec::with_capacity(5 << 20);
        advise_huge_pages(w.spare_capacity_mut());
        w.resize(5 << 20, 7);
        assert!(w.iter().all(|&x| x == 7));
    }
}
