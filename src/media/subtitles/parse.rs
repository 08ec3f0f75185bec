//! SRT and WebVTT read into cues. A file starting `WEBVTT` is WebVTT (its header,
//! `NOTE`, `STYLE` and `REGION` blocks skipped, cue settings ignored); any other is
//! SRT (an optional number line, a timing line, the text). Both allow CRLF line ends
//! and a byte-order mark. What cannot be read fails at its line (1-based), so the
//! caller can say where.

use super::cues::{Cue, Subtitles};

/// The largest subtitles file taken: 1 MiB (hours of dialogue).
pub const MAX_BYTES: u64 = 1 << 20;

/// Why a file is not subtitles, and at which line (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubtitlesError {
    pub line: usize,
    pub reason: String,
}

impl std::fmt::Display for SubtitlesError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

fn fail<T>(line: usize, reason: impl Into<String>) -> Result<T, SubtitlesError> {
    Err(SubtitlesError {
        line,
        reason: reason.into(),
    })
}

/// The cues of `bytes`, an SRT or WebVTT file in UTF-8.
pub fn parse(bytes: &[u8]) -> Result<Subtitles, SubtitlesError> {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let line = 1 + bytes[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            return fail(line, "the text is not UTF-8");
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let webvtt = lines[0].starts_with("WEBVTT");
    if webvtt {
        let rest = &lines[0]["WEBVTT".len()..];
        if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
            return fail(1, "a WebVTT file starts with the line `WEBVTT`");
        }
    }
    let cues = blocks(&lines, webvtt)?;
    if cues.is_empty() {
        return fail(lines.len(), "the file holds no cue");
    }
    Ok(Subtitles { cues })
}

/// The cues of the blank-line-separated blocks of `lines`.
fn blocks(lines: &[&str], webvtt: bool) -> Result<Vec<Cue>, SubtitlesError> {
    let mut cues = Vec::new();
    let mut i = 0;
    if webvtt {
        // The header runs to the first blank line.
        while i < lines.len() && !lines[i].trim().is_empty() {
            i += 1;
        }
    }
    while i < lines.len() {
        if lines[i].trim().is_empty() {
            i += 1;
            continue;
        }
        let start = i;
        while i < lines.len() && !lines[i].trim().is_empty() {
            i += 1;
        }
        let block = &lines[start..i];
        if webvtt
            && ["NOTE", "STYLE", "REGION"]
                .iter()
                .any(|w| is_word(block[0], w))
        {
            continue;
        }
        cues.push(cue(block, start + 1, webvtt)?);
    }
    Ok(cues)
}

/// Whether `line` is `word` alone or followed by a space or tab.
fn is_word(line: &str, word: &str) -> bool {
    line.strip_prefix(word)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
}

/// One cue block starting at line `first` (1-based).
fn cue(block: &[&str], first: usize, webvtt: bool) -> Result<Cue, SubtitlesError> {
    // The timing line is the first, or the second after an identifier (SRT: a number).
    let at = match block[0].contains("-->") {
        true => 0,
        false if block.len() > 1 && block[1].contains("-->") => {
            if !webvtt && block[0].trim().parse::<u64>().is_err() {
                return fail(first, "an SRT cue starts with its number, then its times");
            }
            1
        }
        false if !webvtt && block[0].trim().parse::<u64>().is_ok() => {
            return fail(
                first + 1,
                "a cue's times (`00:00:01,000 --> 00:00:02,000`) are missing",
            );
        }
        false => return fail(first, "expected a cue's times (`start --> end`)"),
    };
    let line = first + at;
    let (start, end) = timing(block[at], webvtt).ok_or_else(|| SubtitlesError {
        line,
        reason: format!("cannot read the times `{}`", block[at].trim()),
    })?;
    if end < start {
        return fail(line, "the cue ends before it starts");
    }
    if let Some(extra) = block[at + 1..].iter().position(|l| l.contains("-->")) {
        return fail(
            line + 1 + extra,
            "a cue's text holds `-->`: a blank line is missing before this cue",
        );
    }
    Ok(Cue {
        start,
        end,
        text: block[at + 1..].join("\n"),
    })
}

/// `start --> end` in milliseconds; WebVTT's cue settings after `end` ignored.
fn timing(line: &str, webvtt: bool) -> Option<(u64, u64)> {
    let (start, rest) = line.split_once("-->")?;
    let mut rest = rest.split_whitespace();
    let end = rest.next()?;
    if !webvtt && rest.next().is_some() {
        // SRT has no settings, but some writers put coordinates here: ignore them too.
    }
    Some((time(start.trim())?, time(end)?))
}

/// `[hh:]mm:ss.mmm` (WebVTT) or `hh:mm:ss,mmm` (SRT; either separator accepted).
fn time(text: &str) -> Option<u64> {
    let (clock, millis) = text.split_once(['.', ','])?;
    if millis.len() != 3 || !millis.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let parts: Vec<&str> = clock.split(':').collect();
    let number = |p: &str| -> Option<u64> {
        (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            .then(|| p.parse().ok())
            .flatten()
    };
    let (h, m, s) = match parts[..] {
        [m, s] => (0, number(m)?, number(s)?),
        [h, m, s] => (number(h)?, number(m)?, number(s)?),
        _ => return None,
    };
    if m > 59 || s > 59 {
        return None;
    }
    Some(((h * 60 + m) * 60 + s) * 1000 + millis.parse::<u64>().ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_srt_file_reads_as_its_cues_with_crlf_and_a_bom() {
        let srt = "\u{feff}1\r\n00:00:00,500 --> 00:00:01,250\r\nHello\r\n<i>there</i>\r\n\r\n2\r\n00:01:02,000 --> 01:00:00,000\r\nBye\r\n";
        let subs = parse(srt.as_bytes()).unwrap();
        assert_eq!(subs.cues.len(), 2);
        assert_eq!(
            subs.cues[0],
            Cue {
                start: 500,
                end: 1250,
                text: "Hello\n<i>there</i>".into()
            }
        );
        assert_eq!(subs.cues[0].plain_text(), "Hello\nthere");
        assert_eq!((subs.cues[1].start, subs.cues[1].end), (62_000, 3_600_000));
    }

    #[test]
    fn a_webvtt_file_skips_its_header_notes_and_settings() {
        let vtt = "WEBVTT - a title\nKind: captions\n\nNOTE a note\nover lines\n\nintro\n00:01.000 --> 00:02.500 align:start line:0\nOne &amp; two\n\n00:00:03.000 --> 00:00:04.000\n<v Bob>Three\n";
        let subs = parse(vtt.as_bytes()).unwrap();
        assert_eq!(subs.cues.len(), 2);
        assert_eq!((subs.cues[0].start, subs.cues[0].end), (1000, 2500));
        assert_eq!(subs.cues[0].plain_text(), "One & two");
        assert_eq!(subs.cues[1].plain_text(), "Three");
    }

    #[test]
    fn a_malformed_file_fails_at_the_line_where_it_goes_wrong() {
        let line = |text: &str| parse(text.as_bytes()).unwrap_err().line;
        assert_eq!(
            line("1\n00:00:01,000 --> 00:00:02,000\nok\n\n2\n00:00:03,000 -> 00:00:04,000\nbad\n"),
            6
        );
        assert_eq!(
            line("1\n00:00:01,000 --> 00:00:02,000\nok\n\n2\n00:00:03,000 --> 00:00:0x,000\n"),
            6
        );
        assert_eq!(line("1\n00:00:05,000 --> 00:00:02,000\nbackwards\n"), 2);
        assert_eq!(
            line("1\n00:00:01,000 --> 00:00:02,000\na\n2\n00:00:03,000 --> 00:00:04,000\n"),
            5
        );
        assert_eq!(line("1\n00:00:01,000 --> 00:00:02,000\n\n\nnot a cue\n"), 5);
        assert_eq!(line("WEBVTTX\n\n00:01.000 --> 00:02.000\na\n"), 1);
        assert_eq!(line("WEBVTT\n\n00:61.000 --> 00:62.000\na\n"), 3);
        assert_eq!(line(""), 1, "no cue at all");
        let mut latin1 = b"1\n00:00:01,000 --> 00:00:02,000\n".to_vec();
        latin1.extend(b"caf\xe9\n");
        assert_eq!(parse(&latin1).unwrap_err().line, 3);
        let message = parse(b"x\n").unwrap_err().to_string();
        assert!(message.starts_with("line 1: "), "{message}");
    }
}
