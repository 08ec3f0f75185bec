//! Reading and setting a tag's value: libtiff's `TIFFGetField` and `TIFFSetField` are
//! variadic, so the compiler cannot check that the pointers handed to them are of the
//! types libtiff writes through — a `u16` where libtiff writes a `u32` is a write past
//! the value. Every call here first asks libtiff's own field table (`TIFFFieldWithTag`)
//! how it hands the tag out — the size of its value and of its count, if any — and
//! makes the call only when those are the sizes of the Rust types asked for; any other
//! tag reads as absent.

use std::ffi::c_int;
use std::mem::size_of;

use crate::media::image::codec::sys::tiff::{
    TIFFFieldSetGetCountSize, TIFFFieldSetGetSize, TIFFFieldWithTag, TIFFGetField,
    TIFFGetFieldDefaulted, TIFFSetField,
};
use crate::media::image::codec::tiff::file::TiffFile;

/// A value type `TIFFGetField` can write: a plain integer of libtiff's field table.
pub(super) trait Value: Copy + Default {}
impl Value for u8 {}
impl Value for u16 {}
impl Value for u32 {}

/// A count type of libtiff's field table (`uint16_t` or `uint32_t`).
pub(super) trait Count: Value + Into<u64> {}
impl Count for u16 {}
impl Count for u32 {}

impl TiffFile<'_> {
    /// Whether libtiff hands `tag` out as values of `value` bytes, after a count of
    /// `count` bytes (0: a single value, no count).
    pub(super) fn hands_out(&self, tag: u32, count: usize, value: usize) -> bool {
        // SAFETY: the file is open; the field description is libtiff's, never freed
        // while the file is open.
        unsafe {
            let field = TIFFFieldWithTag(self.tiff, tag);
            !field.is_null()
                && usize::try_from(TIFFFieldSetGetCountSize(field)) == Ok(count)
                && usize::try_from(TIFFFieldSetGetSize(field)) == Ok(value)
        }
    }

    /// A tag of one value as stored: `None` when absent (or not of type `T`).
    pub(super) fn field<T: Value>(&self, tag: u32) -> Option<T> {
        if !self.hands_out(tag, 0, size_of::<T>()) {
            return None;
        }
        let mut value = T::default();
        // SAFETY: libtiff writes one value of `T`'s size, as its field table says.
        let found = unsafe { TIFFGetField(self.tiff, tag, &mut value as *mut T) };
        (found != 0).then_some(value)
    }

    /// A tag of one value, or its default where the TIFF specification gives one.
    pub(super) fn defaulted<T: Value>(&self, tag: u32) -> Option<T> {
        if !self.hands_out(tag, 0, size_of::<T>()) {
            return None;
        }
        let mut value = T::default();
        // SAFETY: libtiff writes one value of `T`'s size, as its field table says.
        let found = unsafe { TIFFGetFieldDefaulted(self.tiff, tag, &mut value as *mut T) };
        (found != 0).then_some(value)
    }

    /// A tag whose value libtiff hands out as a count (of type `N`) and a pointer into
    /// its own copy of the directory, valid while the file is open.
    pub(super) fn array<N: Count, T: Value>(&self, tag: u32) -> Option<&[T]> {
        if !self.hands_out(tag, size_of::<N>(), size_of::<T>()) {
            return None;
        }
        let (mut count, mut data) = (N::default(), std::ptr::null::<T>());
        // SAFETY: libtiff writes a count of `N`'s size and a pointer to values of
        // `T`'s size, as its field table says.
        let found = unsafe {
            TIFFGetField(
                self.tiff,
                tag,
                &mut count as *mut N,
                &mut data as *mut *const T,
            )
        };
        let count = usize::try_from(count.into()).ok()?;
        if found == 0 || data.is_null() || count == 0 {
            return None;
        }
        // SAFETY: `data` points at `count` values owned by libtiff while `self` lives.
        Some(unsafe { std::slice::from_raw_parts(data, count) })
    }

    /// Sets a tag of a 16-bit count and 16-bit values (ExtraSamples); false when
    /// libtiff takes the tag otherwise or refuses the values.
    pub(super) fn set_u16_array(&mut self, tag: u32, values: &[u16]) -> bool {
        let Ok(count) = u16::try_from(values.len()) else {
            return false;
        };
        if !self.hands_out(tag, size_of::<u16>(), size_of::<u16>()) {
            return false;
        }
        // SAFETY: the count goes through C's variadic promotion as an int, the values
        // as a pointer to `count` u16s, which libtiff copies.
        unsafe { TIFFSetField(self.tiff, tag, c_int::from(count), values.as_ptr()) != 0 }
    }
}
