//! A decoder's side as the u32 every picture here has.

use crate::media::error::MediaError;

pub(super) fn to_u32(n: usize) -> Result<u32, MediaError> {
    u32::try_from(n)
        .map_err(|_| MediaError::InvalidMedia(format!("a side of {n} pixels is too large")))
}
