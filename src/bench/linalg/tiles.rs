//! C as the threads of a multiply write it ([`super::gemm`], [`super::grid`]): each thread
//! its own tiles, which no other thread reads or writes, through one shared view.

use std::marker::PhantomData;

use super::kernels::Element;

/// A column-major matrix that the threads of a multiply write in parts no two share.
pub(super) struct Tiles<'a, T> {
    ptr: *mut T,
    len: usize,
    pub ld: usize,
    _data: PhantomData<&'a mut [T]>,
}

// SAFETY: a Tiles is made from an exclusive borrow of its values, and its users write only
// parts of it that no other thread touches (each thread its own rows of its group's columns).
unsafe impl<T: Send> Send for Tiles<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Tiles<'_, T> {}

impl<'a, T: Element> Tiles<'a, T> {
    pub fn new(data: &'a mut [T], ld: usize) -> Tiles<'a, T> {
        Tiles {
            ptr: data.as_mut_ptr(),
            len: data.len(),
            ld,
            _data: PhantomData,
        }
    }

    /// The first value of the rows × cols part whose first value is at `at` (checked inside
    /// the matrix's values), for the micro-kernel to write.
    ///
    /// # Safety
    /// No other thread may read or write that part while the pointer is used.
    pub unsafe fn part(&self, at: usize, rows: usize, cols: usize) -> *mut T {
        let end = cols
            .checked_sub(1)
            .and_then(|c| c.checked_mul(self.ld))
            .and_then(|x| x.checked_add(at + rows));
        assert!(end.is_some_and(|e| e <= self.len), "a tile outside C");
        // SAFETY: `at` is inside the values (checked above).
        unsafe { self.ptr.add(at) }
    }

    /// Column `j`'s `rows` values from row `i`, checked inside the matrix's values.
    ///
    /// # Safety
    /// No other thread may read or write them while the slice lives.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn column(&self, i: usize, j: usize, rows: usize) -> &mut [T] {
        let at = i + j * self.ld;
        assert!(at + rows <= self.len, "a column outside C");
        // SAFETY: inside the values (checked above), and this thread's alone (the caller's
        // promise).
        unsafe { std::slice::from_raw_parts_mut(self.ptr.add(at), rows) }
    }

    /// C's rows r0..r1 of columns c0..c1 times β (zeros where β is zero, whatever they held).
    ///
    /// # Safety
    /// As [`Tiles::column`], for the whole part.
    pub unsafe fn scale(&self, (r0, r1): (usize, usize), (c0, c1): (usize, usize), beta: T) {
        if beta == T::ONE {
            return;
        }
        for j in c0..c1 {
            // SAFETY: the caller's part.
            scale_column(unsafe { self.column(r0, j, r1 - r0) }, beta);
        }
    }
}

/// `col` times β (zeros where β is zero, whatever it held: a NaN of an unset C too); nothing
/// done where β is one.
pub(super) fn scale_column<T: Element>(col: &mut [T], beta: T) {
    if beta == T::ZERO {
        col.fill(T::ZERO);
    } else if beta != T::ONE {
        col.iter_mut().for_each(|x| *x *= beta);
    }
}
