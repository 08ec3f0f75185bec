//! tus `Upload-Metadata` (tus 1.0.0, "creation"): one or more comma-separated pairs,
//! each a key and, after one space, its value in base64 (the value and the space may
//! be left out); keys are not empty, hold no space or comma, and appear once. The
//! header is checked when an upload is created and stored as sent, so what `HEAD`
//! echoes is always well-formed.

use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;

/// The longest header accepted, in bytes.
pub const MAX_BYTES: usize = 4096;

/// Padding as clients send it: tus-js-client and tuspy pad, others do not.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// The pairs of a well-formed header, in order: each key and its decoded value.
pub type Metadata = Vec<(String, Vec<u8>)>;

/// Reads `header`. An empty (or all-blank) header holds no pairs; anything that breaks
/// the rules above is `Err` with a sentence for the client.
pub fn parse(header: &[u8]) -> Result<Metadata, String> {
    if header.len() > MAX_BYTES {
        return Err(format!(
            "`Upload-Metadata` is limited to {MAX_BYTES} bytes."
        ));
    }
    let mut pairs: Metadata = Vec::new();
    if header.iter().all(is_blank) {
        return Ok(pairs);
    }
    for pair in header.split(|b| *b == b',') {
        let pair = trim_blanks(pair);
        let (key, value) = match pair.iter().position(|b| *b == b' ') {
            Some(space) => (&pair[..space], &pair[space + 1..]),
            None => (pair, &[][..]),
        };
        if key.is_empty() || !key.iter().all(u8::is_ascii_graphic) {
            return Err(
                "`Upload-Metadata` is a comma list of `key base64value` pairs; a key is \
                 not empty and is printable ASCII without spaces or commas."
                    .into(),
            );
        }
        // Graphic ASCII: a valid string.
        let key = String::from_utf8_lossy(key).into_owned();
        let value = BASE64
            .decode(value)
            .map_err(|_| format!("The `Upload-Metadata` value of `{key}` is not base64."))?;
        if pairs.iter().any(|(seen, _)| *seen == key) {
            return Err(format!("`Upload-Metadata` names `{key}` twice."));
        }
        pairs.push((key, value));
    }
    Ok(pairs)
}

/// A space or a tab: the optional white space of HTTP, allowed around each pair.
fn is_blank(b: &u8) -> bool {
    matches!(b, b' ' | b'\t')
}

fn trim_blanks(mut bytes: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = bytes {
        if !is_blank(first) {
            break;
        }
        bytes = rest;
    }
    while let [rest @ .., last] = bytes {
        if !is_blank(last) {
            break;
        }
        bytes = rest;
    }
    bytes
}

/// `pairs` written as a header, values in padded base64: what [`parse`] reads back.
pub fn write(pairs: &Metadata) -> String {
    let engine = base64::engine::general_purpose::STANDARD;
    let written: Vec<String> = pairs
        .iter()
        .map(|(key, value)| match value.is_empty() {
            true => key.clone(),
            false => format!("{key} {}", engine.encode(value)),
        })
        .collect();
    written.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_read_as_tus_clients_write_them() {
        let header = b"filename d29ybGRfZG9taW5hdGlvbl9wbGFuLnBkZg==,is_confidential,type aW1hZ2U";
        let pairs = parse(header).unwrap();
        assert_eq!(
            pairs,
            vec![
                ("filename".into(), b"world_domination_plan.pdf".to_vec()),
                ("is_confidential".into(), vec![]),
                ("type".into(), b"image".to_vec()),
            ]
        );
        assert_eq!(parse(write(&pairs).as_bytes()).unwrap(), pairs);
        assert_eq!(parse(b"a YQ==, b Yg==").unwrap().len(), 2);
        assert_eq!(parse(b"").unwrap(), vec![]);
    }

    #[test]
    fn broken_headers_are_refused_with_a_sentence() {
        for bad in [
            &b"filename not-base64!"[..],
            b"a YQ==,a Yg==",
            b",a YQ==",
            b"a  YQ==",
            b"k\xffey YQ==",
            b"a YQ== extra",
            b"a YQ==\n",
        ] {
            assert!(parse(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
        assert!(parse(&vec![b'a'; MAX_BYTES + 1]).is_err());
    }
}
