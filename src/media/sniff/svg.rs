//! An SVG told from its first bytes: XML whose first element is `<svg>` (or a
//! prefixed `<x:svg>`), after any BOM, XML declaration, comments, processing
//! instructions and a DOCTYPE. A DOCTYPE that names `svg` is enough when its internal
//! subset (Illustrator's entity definitions) runs past the bytes read; an HTML page
//! with an inline `<svg>` is not an SVG.

/// Whether `head` starts an SVG document.
pub(super) fn is_svg(head: &[u8]) -> bool {
    let mut rest = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    loop {
        rest = trim_start(rest);
        if rest.starts_with(b"<?") {
            match find(rest, b"?>") {
                Some(end) => rest = &rest[end + 2..],
                None => return false,
            }
        } else if rest.starts_with(b"<!--") {
            match find(rest, b"-->") {
                Some(end) => rest = &rest[end + 3..],
                None => return false,
            }
        } else if starts_with_ignore_case(rest, b"<!DOCTYPE") {
            let names_svg = starts_with_ignore_case(trim_start(&rest[9..]), b"svg");
            match doctype_end(rest) {
                Some(end) => rest = &rest[end..],
                None => return names_svg,
            }
        } else if rest.first() == Some(&b'<') {
            let name_end = rest[1..]
                .iter()
                .position(|b| b.is_ascii_whitespace() || matches!(b, b'>' | b'/'))
                .map_or(rest.len(), |n| n + 1);
            let name = &rest[1..name_end];
            let local = name.rsplit(|b| *b == b':').next().unwrap_or(name);
            return local == b"svg" && name_end < rest.len();
        } else {
            return false;
        }
    }
}

/// The index just past a DOCTYPE's closing `>`, its `[...]` internal subset skipped.
fn doctype_end(doctype: &[u8]) -> Option<usize> {
    let mut in_subset = false;
    for (i, b) in doctype.iter().enumerate() {
        match b {
            b'[' => in_subset = true,
            b']' => in_subset = false,
            b'>' if !in_subset => return Some(i + 1),
            _ => {}
        }
    }
    None
}

fn trim_start(bytes: &[u8]) -> &[u8] {
    let skip = bytes.iter().take_while(|b| b.is_ascii_whitespace()).count();
    &bytes[skip..]
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn starts_with_ignore_case(bytes: &[u8], prefix: &[u8]) -> bool {
    bytes.len() >= prefix.len() && bytes[..prefix.len()].eq_ignore_ascii_case(prefix)
}

#[cfg(test)]
mod tests {
    use super::is_svg;

    #[test]
    fn svg_documents_are_told_by_their_first_element() {
        assert!(is_svg(b"<svg xmlns=\"http://www.w3.org/2000/svg\"/>"));
        assert!(is_svg(
            b"\xEF\xBB\xBF<?xml version=\"1.0\"?>\n<!-- logo -->\n<svg>"
        ));
        assert!(is_svg(
            b"<!DOCTYPE svg [<!ENTITY a \"b\">]><svg:svg xmlns:svg=\"x\">"
        ));
        // Illustrator's long internal subset, cut off by the bytes read.
        assert!(is_svg(
            b"<?xml?><!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" [<!ENTITY"
        ));
    }

    #[test]
    fn other_markup_and_text_are_not_svg() {
        assert!(!is_svg(
            b"<!DOCTYPE html><html><body><svg></svg></body></html>"
        ));
        assert!(!is_svg(b"<html><svg>"));
        assert!(!is_svg(b"<svgfoo>"));
        assert!(!is_svg(b"hello <svg>"));
        assert!(!is_svg(b"<?xml version=\"1.0\"?><rss>"));
        assert!(!is_svg(b""));
    }
}
