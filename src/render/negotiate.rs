//! `f:auto`: the best format the client says it reads, from its `Accept` header: AVIF,
//! else WebP, else JPEG (PNG when the picture has transparency). Browsers name the
//! modern formats explicitly (`image/avif,image/webp,*/*`), so wildcards count for the
//! legacy formats only.

/// The format class a request gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted {
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
            Wanted::Avif => "avif",
            Wanted::Webp => "webp",
            Wanted::Legacy => "png",
        }
    }
}

/// The class `accept` (an `Accept` header's value) asks for.
pub fn wanted(accept: Option<&str>) -> Wanted {
    let accepts = |mime: &str| {
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
    };
    if accepts("image/avif") {
        Wanted::Avif
    } else if accepts("image/webp") {
        Wanted::Webp
    } else {
        Wanted::Legacy
    }
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
}
