//! Cues drawn into the frames by libass (ffmpeg's `ass` filter): an ASS script
//! written here from the cues, and the bundled font beside it in a directory of the
//! run's own, which the filter is pointed at (`fontsdir`), so every node draws the
//! same glyphs without a system font and ffmpeg reads nothing outside the job.
//!
//! The script's coordinates are the picture's own pixels (`PlayResX/Y` = the shown
//! size), so the font size, outline and margin are fractions of the picture's height
//! and the text scales with it: white DejaVu Sans, 6.5 % of the height, a black
//! outline, bottom centre 5 % above the edge. A cue of two lines stays in the bottom
//! fifth of the picture.

use std::path::Path;

use super::cues::{Cue, Subtitles};
use crate::media::image::text::FONT_BYTES;
use crate::media::video::chunked::x264::graph_path;

/// The font's family name, as the script's style names it.
const FONT_NAME: &str = "DejaVu Sans";

/// Writes the script of `subs` for a picture shown at `size` and the bundled font
/// into a new directory under `dir`; the filter that draws them.
pub async fn burn_filter(
    subs: &Subtitles,
    size: (u32, u32),
    dir: &Path,
) -> std::io::Result<String> {
    let own = dir.join(format!("subtitles-{}", uuid::Uuid::new_v4().simple()));
    tokio::fs::create_dir_all(&own).await?;
    let script = own.join("cues.ass");
    tokio::fs::write(&script, script_text(subs, size)).await?;
    let fonts = own.join("fonts");
    tokio::fs::create_dir_all(&fonts).await?;
    tokio::fs::write(fonts.join("DejaVuSans.ttf"), FONT_BYTES).await?;
    Ok(format!(
        "ass=filename={}:fontsdir={}",
        graph_path(&script),
        graph_path(&fonts)
    ))
}

/// The ASS script of `subs` for a picture `size` pixels large.
fn script_text(subs: &Subtitles, (width, height): (u32, u32)) -> String {
    let h = f64::from(height.max(2));
    let font = (h * 0.065).round().max(8.0);
    let outline = (font / 12.0).max(1.0);
    let margin_v = (h * 0.05).round();
    let margin_h = (f64::from(width) * 0.04).round();
    let mut out = format!(
        "[Script Info]\nScriptType: v4.00+\nPlayResX: {width}\nPlayResY: {height}\n\
         ScaledBorderAndShadow: yes\nWrapStyle: 0\n\n[V4+ Styles]\n\
         Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, \
         Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, \
         Shadow, Alignment, MarginL, MarginR, MarginV, Encoding\n\
         Style: Default,{FONT_NAME},{font},&H00FFFFFF,&H00FFFFFF,&H00000000,&H00000000,0,0,0,0,100,100,0,0,1,{outline:.1},0,2,{margin_h},{margin_h},{margin_v},1\n\n\
         [Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n"
    );
    for cue in &subs.cues {
        out.push_str(&format!(
            "Dialogue: 0,{},{},Default,,0,0,0,,{}\n",
            clock(cue.start),
            clock(cue.end),
            ass_text(cue)
        ));
    }
    out
}

/// `ms` as ASS's `h:mm:ss.cc`, to the nearest hundredth.
fn clock(ms: u64) -> String {
    let cs = (ms + 5) / 10;
    let (h, m, s) = (cs / 360_000, cs / 6000 % 60, cs / 100 % 60);
    format!("{h}:{m:02}:{s:02}.{:02}", cs % 100)
}

/// A cue's text as an ASS event's: `<i>`, `<b>`, `<u>` as their overrides, other
/// tags dropped, lines joined by `\N`. Braces (which open overrides) become
/// parentheses and a backslash is kept from starting an escape by a word joiner.
fn ass_text(cue: &Cue) -> String {
    let mut out = String::new();
    let mut rest = cue.text.as_str();
    while let Some(c) = rest.chars().next() {
        if c == '<' {
            if let Some(end) = rest.find('>') {
                let tag = &rest[1..end];
                let (off, name) = match tag.strip_prefix('/') {
                    Some(name) => (true, name),
                    None => (false, tag),
                };
                if let Some(letter @ ("i" | "b" | "u")) = name.split(['.', ' ']).next() {
                    out.push_str(&format!("{{\\{letter}{}}}", u8::from(!off)));
                }
                rest = &rest[end + 1..];
                continue;
            }
        }
        match c {
            '\n' => out.push_str("\\N"),
            '{' => out.push('('),
            '}' => out.push(')'),
            '\\' => out.push_str("\\\u{2060}"),
            c => out.push(c),
        }
        rest = &rest[c.len_utf8()..];
    }
    out.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", "\\h")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_is_in_the_picture_s_pixels_with_markup_and_braces_made_safe() {
        let subs = Subtitles {
            cues: vec![Cue {
                start: 1234,
                end: 3_723_456,
                text: "<i>Hi</i> {x} a\\N\n<v Bob>b &amp; c".into(),
            }],
        };
        let script = script_text(&subs, (320, 240));
        assert!(
            script.contains("PlayResX: 320\nPlayResY: 240\n"),
            "{script}"
        );
        assert!(
            script.contains("Style: Default,DejaVu Sans,16,"),
            "{script}"
        );
        assert!(
            script.contains("Dialogue: 0,0:00:01.23,1:02:03.46,Default,,0,0,0,,{\\i1}Hi{\\i0} (x) a\\\u{2060}N\\Nb & c\n"),
            "{script}"
        );
    }
}
