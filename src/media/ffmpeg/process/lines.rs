//! A process's stdout read a line at a time, as it prints them.

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// Hands every line of `pipe` to `on_line` until end of file.
/// `on_line` for raw lines: each as text, its line ending trimmed.
pub(super) fn as_text<'a>(
    on_line: &'a mut (dyn FnMut(&str) + Send),
) -> impl FnMut(&[u8]) + Send + 'a {
    |line: &[u8]| {
        let line = String::from_utf8_lossy(line);
        on_line(line.trim_end_matches(['\n', '\r']));
    }
}

pub(super) async fn read_lines(
    pipe: impl AsyncRead + Unpin,
    on_line: &mut (dyn FnMut(&[u8]) + Send),
) -> std::io::Result<()> {
    let mut reader = BufReader::new(pipe);
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).await? == 0 {
            return Ok(());
        }
        on_line(&line);
    }
}
