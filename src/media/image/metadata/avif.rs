//! Kept metadata put into an AVIF output as HEIF keeps it (ISO/IEC 23008-12): an
//! `Exif` item and a `mime` item of type `application/rdf+xml` (the XMP packet), each
//! described in the `meta` box (`iinf`), placed (`iloc`) in an `mdat` box added at the
//! end of the file, and linked to the primary picture by a `cdsc` reference (`iref`),
//! where exiftool, libheif and browsers look for them. libavif writes them the same
//! way when given them; our encoder's output is amended here instead, as JPEG XL's
//! and WebP's are, so that every format takes the one path (`metadata::insert`).
//!
//! The `meta` box grows, so every item placed by file offset after it (the picture's
//! own data, in the `mdat` that follows) has its offset moved by as much. A file laid
//! out otherwise (data placed before `meta`, in `idat`, or by a size this does not
//! read) is returned unchanged (`None`), and so is an animated AVIF, whose `moov`
//! places its frames by file offset as well.

/// An ISOBMFF box: its type, where it starts, its header's and its whole length.
#[derive(Clone, Copy)]
struct BoxAt<'a> {
    kind: &'a [u8],
    start: usize,
    header: usize,
    len: usize,
}

impl BoxAt<'_> {
    /// Its body, in `bytes` (the bytes it was found in).
    fn body<'b>(&self, bytes: &'b [u8]) -> &'b [u8] {
        &bytes[self.start + self.header..self.start + self.len]
    }
}

/// The boxes in `bytes` (a 32-bit size each), or `None` for any other layout.
fn boxes(bytes: &[u8]) -> Option<Vec<BoxAt<'_>>> {
    let (mut at, mut found) = (0, Vec::new());
    while at < bytes.len() {
        let len = u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?) as usize;
        let kind = bytes.get(at + 4..at + 8)?;
        if len < 8 || at + len > bytes.len() {
            return None;
        }
        found.push(BoxAt {
            kind,
            start: at,
            header: 8,
            len,
        });
        at += len;
    }
    Some(found)
}

/// A box of `kind` holding `parts`, with a FullBox header when `full` (version, flags).
fn boxed(kind: &[u8; 4], full: Option<(u8, u32)>, parts: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    let header = if full.is_some() { 12 } else { 8 };
    let len = header + parts.iter().map(|p| p.len()).sum::<usize>();
    out.extend((len as u32).to_be_bytes());
    out.extend(kind);
    if let Some((version, flags)) = full {
        out.push(version);
        out.extend(&flags.to_be_bytes()[1..]);
    }
    for part in parts {
        out.extend(*part);
    }
    out
}

/// A big-endian unsigned integer of `size` bytes (0, 2, 4 or 8) at `bytes[*at..]`.
fn read(bytes: &[u8], at: &mut usize, size: usize) -> Option<u64> {
    let field = bytes.get(*at..*at + size)?;
    *at += size;
    Some(field.iter().fold(0u64, |n, &b| n << 8 | u64::from(b)))
}

/// `value` as `size` big-endian bytes, or `None` when it does not fit.
fn write(out: &mut Vec<u8>, value: u64, size: usize) -> Option<()> {
    if size < 8 && value >> (8 * size) != 0 {
        return None;
    }
    out.extend(&value.to_be_bytes()[8 - size..]);
    Some(())
}

/// An item the amended `iloc` places: its id and its data's offset and length.
struct NewItem {
    id: u64,
    offset: u64,
    length: u64,
}

/// The `iloc` box's body rewritten: every item stored by file offset moved by
/// `shift`, `added` appended; the ids it names and the lowest file offset it places
/// data at. `None` for a layout it cannot move (data in `idat` or another file).
fn iloc(body: &[u8], shift: u64, added: &[NewItem]) -> Option<(Vec<u8>, Vec<u64>, u64)> {
    let version = *body.first()?;
    let mut at = 4;
    let sizes = read(body, &mut at, 2)? as usize;
    let (offset_size, length_size) = (sizes >> 12, (sizes >> 8) & 0xF);
    let (base_size, index_size) = (
        (sizes >> 4) & 0xF,
        if version > 0 { sizes & 0xF } else { 0 },
    );
    let id_size = if version < 2 { 2 } else { 4 };
    if version > 2 || offset_size == 0 || length_size == 0 {
        return None;
    }
    let count = read(body, &mut at, id_size)?;
    let mut out = body[..4].to_vec();
    write(&mut out, sizes as u64, 2)?;
    write(&mut out, count + added.len() as u64, id_size)?;
    let (mut ids, mut lowest) = (Vec::new(), u64::MAX);
    for _ in 0..count {
        let id = read(body, &mut at, id_size)?;
        ids.push(id);
        write(&mut out, id, id_size)?;
        let method = if version > 0 {
            read(body, &mut at, 2)?
        } else {
            0
        };
        if version > 0 {
            write(&mut out, method, 2)?;
        }
        if method & 0xF != 0 {
            return None;
        }
        // Data in another file (a data reference) is not this file's to move.
        if read(body, &mut at, 2)? != 0 {
            return None;
        }
        write(&mut out, 0, 2)?;
        let base = read(body, &mut at, base_size)?;
        write(
            &mut out,
            base + if base_size > 0 { shift } else { 0 },
            base_size,
        )?;
        let extents = read(body, &mut at, 2)?;
        write(&mut out, extents, 2)?;
        for _ in 0..extents {
            let index = read(body, &mut at, index_size)?;
            write(&mut out, index, index_size)?;
            let offset = read(body, &mut at, offset_size)?;
            lowest = lowest.min(base + offset);
            write(
                &mut out,
                offset + if base_size > 0 { 0 } else { shift },
                offset_size,
            )?;
            write(&mut out, read(body, &mut at, length_size)?, length_size)?;
        }
    }
    for item in added {
        write(&mut out, item.id, id_size)?;
        if version > 0 {
            write(&mut out, 0, 2)?;
        }
        write(&mut out, 0, 2)?;
        write(&mut out, 0, base_size)?;
        write(&mut out, 1, 2)?;
        write(&mut out, 0, index_size)?;
        write(&mut out, item.offset, offset_size)?;
        write(&mut out, item.length, length_size)?;
    }
    Some((out, ids, lowest))
}

/// `encoded`, an AVIF, with `metadata` as items of its primary picture.
pub(super) fn insert(encoded: &[u8], exif: Option<&[u8]>, xmp: Option<&[u8]>) -> Option<Vec<u8>> {
    let top = boxes(encoded)?;
    // A sequence's `moov` places its samples by file offset too; it is left as it is.
    if !top
        .iter()
        .all(|b| matches!(b.kind, b"ftyp" | b"meta" | b"mdat" | b"free"))
    {
        return None;
    }
    let meta_at = top.iter().position(|b| b.kind == b"meta")?;
    let meta = top[meta_at];
    let meta_body = meta.body(encoded);
    let children = boxes(meta_body.get(4..)?)?;
    let child = |kind: &[u8]| children.iter().find(|b| b.kind == kind);
    let body = |b: &BoxAt<'_>| b.body(&meta_body[4..]);
    let pitm = body(child(b"pitm")?);
    let primary = match pitm.first()? {
        0 => read(pitm, &mut 4, 2)?,
        _ => read(pitm, &mut 4, 4)?,
    };
    let (_, existing, lowest) = iloc(body(child(b"iloc")?), 0, &[])?;
    // Items placed before the end of `meta` would not move with the rest.
    if lowest < (meta.start + meta.len) as u64 {
        return None;
    }
    let iinf = body(child(b"iinf")?);
    let mut payloads: Vec<(&[u8; 4], Vec<u8>)> = Vec::new();
    if let Some(exif) = exif {
        // The offset of the TIFF header within the payload, then the payload.
        payloads.push((b"Exif", [&[0u8, 0, 0, 0][..], exif].concat()));
    }
    if let Some(xmp) = xmp {
        payloads.push((b"mime", xmp.to_vec()));
    }
    let first_id = existing.iter().max().copied().unwrap_or(0) + 1;
    let ids: Vec<u64> = (first_id..).take(payloads.len()).collect();
    // The `iinf` with an `infe` (version 2, or 3 for an id past 16 bits) per item.
    let iinf_version = *iinf.first()?;
    let count_size = if iinf_version == 0 { 2 } else { 4 };
    let mut entries = iinf[4..].to_vec();
    let count = read(&entries, &mut 0, count_size)?;
    entries.drain(..count_size);
    let mut new_iinf = Vec::new();
    write(&mut new_iinf, count + ids.len() as u64, count_size)?;
    new_iinf.extend(entries);
    for (id, (kind, _)) in ids.iter().zip(&payloads) {
        let (version, id_size) = if *id > 0xFFFF { (3, 4) } else { (2, 2) };
        let mut fields = Vec::new();
        write(&mut fields, *id, id_size)?;
        fields.extend([0, 0]);
        fields.extend(*kind);
        fields.push(0);
        if *kind == b"mime" {
            fields.extend(b"application/rdf+xml\0");
        }
        new_iinf.extend(boxed(b"infe", Some((version, 0)), &[&fields]));
    }
    let new_iinf = boxed(b"iinf", Some((iinf_version, 0)), &[&new_iinf]);
    // The `cdsc` references, in the `iref` there is or a new one.
    let iref = child(b"iref").map(&body);
    let iref_version = iref.and_then(|b| b.first().copied()).unwrap_or(0);
    let ref_id = if iref_version == 0 { 2 } else { 4 };
    let mut references = iref.map_or(Vec::new(), |b| b[4..].to_vec());
    for id in &ids {
        let mut fields = Vec::new();
        write(&mut fields, *id, ref_id)?;
        write(&mut fields, 1, 2)?;
        write(&mut fields, primary, ref_id)?;
        references.extend(boxed(b"cdsc", None, &[&fields]));
    }
    let new_iref = boxed(b"iref", Some((iref_version, 0)), &[&references]);
    // `meta` rebuilt for a shift; its length does not depend on the shift.
    let rebuild = |shift: u64, end: u64| -> Option<Vec<u8>> {
        let mut placed = Vec::new();
        let mut offset = end + 8;
        for (id, (_, payload)) in ids.iter().zip(&payloads) {
            let length = payload.len() as u64;
            placed.push(NewItem {
                id: *id,
                offset,
                length,
            });
            offset += length;
        }
        let (new_iloc, ..) = iloc(body(child(b"iloc")?), shift, &placed)?;
        let mut parts: Vec<Vec<u8>> = Vec::new();
        for b in &children {
            parts.push(match b.kind {
                b"iinf" => new_iinf.clone(),
                b"iref" => new_iref.clone(),
                // Its body begins with its version and flags, as read.
                b"iloc" => boxed(b"iloc", None, &[&new_iloc]),
                _ => meta_body[4 + b.start..4 + b.start + b.len].to_vec(),
            });
        }
        if iref.is_none() {
            parts.push(new_iref.clone());
        }
        let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        Some(boxed(
            b"meta",
            None,
            &[&[&meta_body[..4]], refs.as_slice()].concat(),
        ))
    };
    let grown = rebuild(0, 0)?.len() as u64 - meta.len as u64;
    let end = encoded.len() as u64 + grown;
    let new_meta = rebuild(grown, end)?;
    let mut out = encoded[..meta.start].to_vec();
    out.extend(new_meta);
    out.extend(&encoded[meta.start + meta.len..]);
    let data: Vec<&[u8]> = payloads.iter().map(|(_, p)| p.as_slice()).collect();
    out.extend(boxed(b"mdat", None, &data));
    Some(out)
}
