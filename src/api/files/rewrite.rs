//! Playlists and storyboard cues made whole at download time (docs/API.md, "HLS and
//! storyboards"). A stored HLS playlist names its media playlists, init sections and
//! segments by relative names; a stored DASH manifest names the same init sections and
//! segments, relative to the folder of the HLS output stored just before it; a stored
//! storyboard VTT names its sheet `sheet.<ext>`.
//! Served as they are, those names could not work: a relative name resolved next to
//! a signed URL carries no signature. So each is replaced, as the file is served, by
//! the absolute signed download URL of the object it names, expiring with the URL
//! the file itself was fetched by — a whole stream (or a VTT and its sheet) stays
//! playable exactly as long as the link to its master playlist (or VTT), and a fresh
//! read of the edit renews the whole tree.
//!
//! Names resolve inside the output's own objects only: an output key's relative
//! names against its companions' folder (`…/0-0.m3u8` → `…/0-0/`), a companion's
//! against its own folder; a name that would leave the edit's attempt folder
//! (absolute, `..`, a scheme) is left as it is, which signs nothing.

use std::time::{Duration, UNIX_EPOCH};

use crate::format::MediaFormat;
use crate::storage::{companions_of, Storage};

/// Whether a stored file of this format is rewritten when served.
pub fn rewritten(format: Option<MediaFormat>) -> bool {
    matches!(
        format,
        Some(MediaFormat::Hls | MediaFormat::Mpd | MediaFormat::Vtt)
    )
}

/// `text`, stored under `key` and fetched with a link expiring at `expires` (unix
/// seconds, already verified), with every name it holds replaced by its signed URL.
pub fn rewrite(
    storage: &Storage,
    key: &str,
    format: MediaFormat,
    text: &str,
    expires: u64,
) -> String {
    let now = UNIX_EPOCH + Duration::from_secs(expires);
    let sign = |target: &str| storage.download_url_until(target, now);
    rename(key, format, text, &sign)
}

/// `text`, stored under `key`, with every name it holds (a playlist's URIs, a
/// storyboard cue's sheet) replaced by `name(key it resolves to)`: a signed URL for a
/// download, a path inside the ZIP for an archive (`api::archive`).
pub fn rename(key: &str, format: MediaFormat, text: &str, name: &dyn Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    for line in text.lines() {
        let rewritten = match format {
            MediaFormat::Vtt => cue_line(key, line, name),
            MediaFormat::Mpd => manifest_line(key, line, name),
            _ => playlist_line(key, line, name),
        };
        out.push_str(rewritten.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out
}

/// A playlist line with its URI signed: a URI line, or a tag's `URI="…"` attribute.
fn playlist_line(key: &str, line: &str, sign: &dyn Fn(&str) -> String) -> Option<String> {
    let trimmed = line.trim();
    if trimmed.is_empty() {
        return None;
    }
    if !trimmed.starts_with('#') {
        return resolve(key, trimmed).map(|target| sign(&target));
    }
    let start = line.find("URI=\"")? + "URI=\"".len();
    let len = line[start..].find('"')?;
    let target = resolve(key, &line[start..start + len])?;
    Some(format!(
        "{}{}{}",
        &line[..start],
        sign(&target),
        &line[start + len..]
    ))
}

/// A DASH manifest line with its segment's or init section's name signed (XML-escaped):
/// `SegmentURL@media` or `Initialization@sourceURL`, one a line as `media::video::dash`
/// writes them, resolved against the folder of the HLS output stored just before the
/// manifest (`…/0-0.m3u8` for `…/0-1.mpd`), whose segments it names.
fn manifest_line(key: &str, line: &str, sign: &dyn Fn(&str) -> String) -> Option<String> {
    let attribute = [" media=\"", " sourceURL=\""]
        .into_iter()
        .find(|a| line.contains(a))?;
    let start = line.find(attribute)? + attribute.len();
    let len = line[start..].find('"')?;
    let target = resolve(&ladder_of(key)?, &line[start..start + len])?;
    let signed = sign(&target).replace('&', "&amp;").replace('"', "&quot;");
    Some(format!(
        "{}{signed}{}",
        &line[..start],
        &line[start + len..]
    ))
}

/// The key of the HLS master whose segments the DASH manifest under `key` names: the
/// output stored just before it (`…/0-1.mpd` → `…/0-0.m3u8`).
pub fn ladder_of(key: &str) -> Option<String> {
    let (folder, file) = key.rsplit_once('/')?;
    let (asset, index) = file.strip_suffix(".mpd")?.split_once('-')?;
    let index = index.parse::<usize>().ok()?.checked_sub(1)?;
    Some(format!("{folder}/{asset}-{index}.m3u8"))
}

/// A storyboard cue's payload `sheet.<ext>#xywh=…` with the sheet's signed URL: the
/// sheet is the output stored just before the VTT (`…/0-0.jpeg` for `…/0-1.vtt`).
fn cue_line(key: &str, line: &str, sign: &dyn Fn(&str) -> String) -> Option<String> {
    let (name, fragment) = line.trim().split_once('#')?;
    let ext = name.strip_prefix("sheet.")?;
    MediaFormat::from_extension(ext)?;
    let (folder, file) = key.rsplit_once('/')?;
    let (asset, index) = file.strip_suffix(".vtt")?.split_once('-')?;
    let index = index.parse::<usize>().ok()?.checked_sub(1)?;
    let sheet = format!("{folder}/{asset}-{index}.{ext}");
    Some(format!("{}#{fragment}", sign(&sheet)))
}

/// The key a relative `name` in the file under `key` names, if it stays inside the
/// output's attempt folder (`edits/<id>/<attempt>/`).
fn resolve(key: &str, name: &str) -> Option<String> {
    let parts: Vec<&str> = key.split('/').collect();
    if parts.len() < 4 || parts[0] != "edits" {
        return None;
    }
    if name.is_empty()
        || name.starts_with('/')
        || name.contains(':')
        || name.contains('?')
        || name.contains('#')
        || name.contains('\\')
        || name
            .split('/')
            .any(|segment| segment.is_empty() || segment == "." || segment == "..")
    {
        return None;
    }
    let base = if parts.len() == 4 {
        companions_of(key)
    } else {
        format!("{}/", parts[..parts.len() - 1].join("/"))
    };
    Some(format!("{base}{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_inside_the_output_s_own_folder_only() {
        let master = "edits/e1/1/0-0.m3u8";
        assert_eq!(
            resolve(master, "v0/index.m3u8").as_deref(),
            Some("edits/e1/1/0-0/v0/index.m3u8")
        );
        let media = "edits/e1/1/0-0/v0/index.m3u8";
        assert_eq!(
            resolve(media, "seg1.m4s").as_deref(),
            Some("edits/e1/1/0-0/v0/seg1.m4s")
        );
        for bad in [
            "../x",
            "/etc/passwd",
            "http://a/b",
            "a//b",
            "./a",
            "a?b=1",
            "",
        ] {
            assert_eq!(resolve(media, bad), None, "{bad}");
        }
        assert_eq!(resolve("uploads/u1/content", "x"), None);
    }

    #[test]
    fn every_uri_of_a_playlist_is_signed_and_tags_are_kept() {
        let sign = |target: &str| format!("https://h/{target}?s=1");
        let line = |l: &str| playlist_line("edits/e/1/0-0/v0/index.m3u8", l, &sign);
        assert_eq!(
            line("seg0.m4s").as_deref(),
            Some("https://h/edits/e/1/0-0/v0/seg0.m4s?s=1")
        );
        assert_eq!(
            line("#EXT-X-MAP:URI=\"init_0.mp4\"").as_deref(),
            Some("#EXT-X-MAP:URI=\"https://h/edits/e/1/0-0/v0/init_0.mp4?s=1\"")
        );
        assert_eq!(line("#EXTINF:6.000000,"), None);
        assert_eq!(line(""), None);
    }

    #[test]
    fn a_manifest_names_the_segments_of_the_ladder_stored_just_before_it() {
        let sign = |target: &str| format!("https://h/{target}?e=1&s=2");
        let line = |l: &str| manifest_line("edits/e/1/0-1.mpd", l, &sign);
        assert_eq!(
            line("<SegmentURL media=\"v0/seg0.mp4\"/>").as_deref(),
            Some("<SegmentURL media=\"https://h/edits/e/1/0-0/v0/seg0.mp4?e=1&amp;s=2\"/>")
        );
        assert_eq!(
            line("<Initialization sourceURL=\"v1/init_1.mp4\"/>").as_deref(),
            Some(
                "<Initialization sourceURL=\"https://h/edits/e/1/0-0/v1/init_1.mp4?e=1&amp;s=2\"/>"
            )
        );
        assert_eq!(
            line("<AdaptationSet id=\"0\" mimeType=\"video/mp4\">"),
            None
        );
        assert_eq!(line("<SegmentURL media=\"../../x.mp4\"/>"), None);
        assert_eq!(
            manifest_line("edits/e/1/0-0.mpd", "<SegmentURL media=\"a\"/>", &sign),
            None
        );
    }

    #[test]
    fn a_cue_names_the_sheet_stored_just_before_its_vtt() {
        let sign = |target: &str| format!("https://h/{target}?s=1");
        let cue = |l: &str| cue_line("edits/e/1/0-1.vtt", l, &sign);
        assert_eq!(
            cue("sheet.jpeg#xywh=0,0,160,90").as_deref(),
            Some("https://h/edits/e/1/0-0.jpeg?s=1#xywh=0,0,160,90")
        );
        assert_eq!(cue("00:00:00.000 --> 00:00:01.000"), None);
        assert_eq!(cue("sheet.exe#xywh=0,0,1,1"), None);
        assert_eq!(cue_line("edits/e/1/0-0.vtt", "sheet.jpeg#x", &sign), None);
    }
}
