//! `f:auto`: the best format the client says it reads, from its `Accept` header: JPEG
//! XL (only when `image/jxl` is named: Safari), else AVIF, else WebP, else JPEG (PNG when
//! the picture has transparency). `f:best`: the smallest of those it reads. Browsers name the
//! modern formats explicitly (`image/avif,image/webp,*/*`), so wildcards count for the
//! legacy formats only.

/// The format class a request gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted {
    Jxl,
    Avif,
    Webp,
    /// JPEG, or PNG for a picture with transparency.
    Legacy,
}

impl Wanted {
    /// The `format` option rendered with (a legacy render is made as PNG, then turned
    /// into JPEG when it has no transparency).
    pub fn format_option(self) -> &'static str {
        match self {
            Wanted::Jxl => "jxl",
            Wanted::Avif => "avif",
            Wanted::Webp => "webp",
            Wanted::Legacy => "png",
        }
    }
}

/// `f:best`'s `format` option: the smallest of JPEG XL, AVIF and WebP where `accept`
/// names them, and JPEG (PNG for a picture with transparency), which every client reads.
pub fn best_of(accept: Option<&str>) -> String {
    let mut formats = Vec::new();
    if accepts(accept, "image/jxl") {
        formats.push("jxl");
    }
    if accepts(accept, "image/avif") {
        formats.push("avif");
    }
    if accepts(accept, "image/webp") {
        formats.push("webp");
    }
    formats.push("jpeg");
    format!("best:{}", formats.join(","))
}

/// The class `accept` (an `Accept` header's value) asks for.
pub fn wanted(accept: Option<&str>) -> Wanted {
    if accepts(accept, "image/jxl") {
        Wanted::Jxl
    } else if accepts(accept, "image/avif") {
        Wanted::Avif
    } else if accepts(accept, "image/webp") {
        Wanted::Webp
    } else {
        Wanted::Legacy
    }
}

/// Whether `accept` names `mime` without refusing it (`;q=0`).
fn accepts(accept: Option<&str>, mime: &str) -> bool {
    accept.is_some_and(|accept| {
        accept.split(',').any(|range| {
            let mut parts = range.split(';');
            let kind = parts.next().unwrap_or("").trim();
            let refused = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f64>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            kind.eq_ignore_ascii_case(mime) && !refused
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn avif_then_webp_then_the_legacy_formats() {
        let chrome = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8";
        assert_eq!(wanted(Some(chrome)), Wanted::Avif);
        assert_eq!(wanted(Some("image/webp,*/*")), Wanted::Webp);
        assert_eq!(
            wanted(Some("image/avif;q=0, image/webp;q=0.9")),
            Wanted::Webp
        );
        assert_eq!(wanted(Some("image/*,*/*")), Wanted::Legacy);
        assert_eq!(wanted(Some("image/jpeg")), Wanted::Legacy);
        assert_eq!(wanted(None), Wanted::Legacy);
    }

    #[test]
    fn jpeg_xl_only_when_the_client_names_it() {
        let safari = "image/webp,image/avif,image/jxl,image/heic,image/*;q=0.8,*/*;q=0.5";
        assert_eq!(wanted(Some(safari)), Wanted::Jxl);
        assert_eq!(wanted(Some("image/jxl;q=0,image/avif")), Wanted::Avif);
        assert_eq!(best_of(Some(safari)), "best:jxl,avif,webp,jpeg");
    }

    #[test]
    fn best_picks_among_the_formats_the_client_names_and_jpeg() {
        let chrome = "image/avif,image/webp,image/apng,*/*;q=0.8";
        assert_eq!(best_of(Some(chrome)), "best:avif,webp,jpeg");
        assert_eq!(best_of(Some("image/webp,*/*")), "best:webp,jpeg");
        assert_eq!(best_of(None), "best:jpeg");
    }
}
