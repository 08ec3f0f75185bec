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

/// Where one chunked encode run across nodes keeps its source and its chunks
/// (`--chunk-across-nodes`): `edits/<edit id>/scratch/<step>-<plan>/`. The edit's whole
/// scratch folder ([`ScratchKey::of_edit`]) is deleted when the edit ends, and with
/// the edit's other objects at its retention.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScratchKey<'a> {
    pub edit_id: &'a str,
    /// Which encode of the edit (asset, command, file).
    pub step: &'a str,
    /// The digest of the source and the chunks' recipes.
    pub plan: &'a str,
}

impl ScratchKey<'_> {
    /// The scratch folder of edit `edit_id`, `/` at the end.
    pub fn of_edit(edit_id: &str) -> String {
        format!("edits/{edit_id}/scratch/")
    }

    /// The encode's source, stored once for every node.
    pub fn source(&self) -> String {
        let folder = Self::of_edit(self.edit_id);
        format!("{folder}{}-{}/source", self.step, self.plan)
    }

    /// Chunk `index` as claim `attempt` stored it: a key per claim, so a stale claim's
    /// late write never replaces the chunk that was recorded.
    pub fn chunk(&self, index: i32, attempt: i32, format: MediaFormat) -> String {
        let folder = Self::of_edit(self.edit_id);
        let extension = format.extension();
        format!(
            "{folder}{}-{}/chunk-{index}-{attempt}.{extension}",
            self.step, self.plan
        )
    }
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

    #[test]
    fn scratch_keys_live_in_the_edits_scratch_folder_and_name_the_claim() {
        let key = ScratchKey {
            edit_id: "ed_1",
            step: "0-1-0",
            plan: "ab12",
        };
        assert_eq!(key.source(), "edits/ed_1/scratch/0-1-0-ab12/source");
        let chunk = key.chunk(2, 3, MediaFormat::Ogv);
        assert_eq!(chunk, "edits/ed_1/scratch/0-1-0-ab12/chunk-2-3.ogv");
        assert!(chunk.starts_with(&ScratchKey::of_edit("ed_1")));
    }
}
