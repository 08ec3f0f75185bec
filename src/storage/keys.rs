//! Typed object keys: the one place their layout is written. Outputs live under
//! `edits/<edit id>/<attempt>/<asset>-<index>.<extension>`; the attempt in the key
//! means a stale attempt can never overwrite the outputs of the current one.
//!
//! An output made of several files (an HLS master playlist and its media playlists
//! and segments) is stored as its one output key, with the rest under
//! `edits/<edit id>/<attempt>/<asset>-<index>/` (its companions' folder), where its
//! relative names resolve when it is downloaded (`api::files`).

use std::fmt;

use crate::media::MediaFormat;

/// Where one output file of one attempt at an edit is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputKey<'a> {
    pub edit_id: &'a str,
    pub attempt: u32,
    /// The asset it came from, in request order.
    pub asset: usize,
    /// Its place among that asset's outputs.
    pub index: usize,
    pub format: MediaFormat,
}

impl fmt::Display for OutputKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "edits/{}/{}/{}-{}.{}",
            self.edit_id,
            self.attempt,
            self.asset,
            self.index,
            self.format.extension()
        )
    }
}

impl OutputKey<'_> {
    /// The folder the output's companion files are stored under, `/` at the end.
    pub fn companions(&self) -> String {
        companions_of(&self.to_string())
    }
}

/// The companions' folder of the output stored under `key` (`…/0-1.m3u8` →
/// `…/0-1/`).
pub fn companions_of(key: &str) -> String {
    let stem = key.rsplit_once('.').map_or(key, |(stem, _)| stem);
    format!("{stem}/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_key_names_the_edit_the_attempt_the_asset_and_the_index() {
        let key = OutputKey {
            edit_id: "ed_1",
            attempt: 3,
            asset: 0,
            index: 12,
            format: MediaFormat::Webp,
        };
        assert_eq!(key.to_string(), "edits/ed_1/3/0-12.webp");
        assert_eq!(key.companions(), "edits/ed_1/3/0-12/");
    }
}
