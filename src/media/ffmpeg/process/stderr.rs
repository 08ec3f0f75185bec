//! What a process printed on stderr, made into an error a person can read: the last
//! whole lines, without ffmpeg's memory addresses or the server's paths.

use tokio::io::{AsyncRead, AsyncReadExt};

/// How much of stderr a `ProcessFailed` carries: ffmpeg puts the cause last.
pub(super) const STDERR_TAIL_BYTES: usize = 2048;
/// How much of stderr is kept while a process runs (the tail is cut from it).
const STDERR_KEEP_BYTES: usize = 64 * 1024;

/// Reads `pipe` to its end, keeping only the last [`STDERR_KEEP_BYTES`]: a damaged
/// input can make ffmpeg log an error for every frame.
pub(super) async fn read_tail(mut pipe: impl AsyncRead + Unpin) -> std::io::Result<Vec<u8>> {
    let mut kept = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n = pipe.read(&mut chunk).await?;
        if n == 0 {
            return Ok(kept);
        }
        kept.extend_from_slice(&chunk[..n]);
        if kept.len() > 2 * STDERR_KEEP_BYTES {
            kept.drain(..kept.len() - STDERR_KEEP_BYTES);
        }
    }
}

/// The last [`STDERR_TAIL_BYTES`] of `stderr`, cut to whole lines, blank lines dropped.
pub(crate) fn stderr_tail(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let text = text.trim_end();
    let mut tail = text;
    if text.len() > STDERR_TAIL_BYTES {
        let mut cut = text.len() - STDERR_TAIL_BYTES;
        while !text.is_char_boundary(cut) {
            cut += 1;
        }
        tail = &text[cut..];
        // Drop the partial first line, unless the whole tail is one long line.
        if let Some(newline) = tail.find('\n') {
            tail = &tail[newline + 1..];
        }
    }
    tail.lines()
        .map(clean_line)
        .filter(|line| !line.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Makes one stderr line fit for a client: drops ffmpeg's `[gif @ 0x55…]` context
/// prefixes (memory addresses say nothing to a person) and shortens paths to their last
/// component, so no server path reaches an edit's error detail.
fn clean_line(line: &str) -> String {
    let mut rest = line.trim_end();
    while let Some(stripped) = rest.strip_prefix('[') {
        match stripped.split_once("] ") {
            Some((context, after)) if context.contains(" @ 0x") => rest = after,
            _ => break,
        }
    }
    rest.split(' ')
        .map(|word| {
            let path = word.strip_prefix("file:").unwrap_or(word);
            if path.starts_with('/') || path.starts_with("'/") {
                path.rsplit('/').next().unwrap_or(path).to_string()
            } else {
                word.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The last line of a stderr tail: where ffmpeg states its final complaint.
pub(crate) fn last_line(tail: &str) -> &str {
    tail.lines().last().unwrap_or(tail).trim()
}
