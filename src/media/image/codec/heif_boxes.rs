//! The few HEIF boxes read here rather than through libheif: Debian 12's libheif 1.15
//! reports the wrong size for an image whose `irot` comes before its `ispe` in `ipma`
//! (as Canon's HIF files have it): it sets the size from `ispe` after turning it, so
//! a portrait photo is announced landscape, although it is decoded upright.

/// The quarter turns (anti-clockwise, 0 to 3) of the primary item's `irot`, if it has
/// one. Any box that does not parse gives `None`: libheif judges the file.
pub(crate) fn primary_quarter_turns(file: &[u8]) -> Option<u8> {
    let meta = child(file, b"meta")?.get(4..)?; // a full box: version and flags first
    let pitm = child(meta, b"pitm")?;
    let primary = if pitm.first()? == &0 {
        u32::from(be16(pitm, 4)?)
    } else {
        be32(pitm, 4)?
    };
    let iprp = child(meta, b"iprp")?;
    let properties = boxes(child(iprp, b"ipco")?);
    let ipma = child(iprp, b"ipma")?;
    let (version, wide_index) = (*ipma.first()?, ipma.get(3)? & 1 == 1);
    let entries = be32(ipma, 4)?;
    let mut at = 8;
    for _ in 0..entries {
        let item = if version < 1 {
            let item = u32::from(be16(ipma, at)?);
            at += 2;
            item
        } else {
            let item = be32(ipma, at)?;
            at += 4;
            item
        };
        let count = usize::from(*ipma.get(at)?);
        at += 1;
        for _ in 0..count {
            let index = if wide_index {
                at += 2;
                usize::from(be16(ipma, at - 2)? & 0x7fff)
            } else {
                at += 1;
                usize::from(ipma.get(at - 1)? & 0x7f)
            };
            if item != primary || index == 0 {
                continue;
            }
            let (name, body) = properties.get(index - 1)?;
            if name == b"irot" {
                return Some(body.first()? & 3);
            }
        }
    }
    None
}

/// The boxes laid end to end in `bytes`: name and body. Stops at the first that does
/// not fit (64-bit and to-the-end sizes are not used inside `meta`).
fn boxes(mut bytes: &[u8]) -> Vec<([u8; 4], &[u8])> {
    let mut found = Vec::new();
    while let (Some(size), Some(name)) = (be32(bytes, 0), bytes.get(4..8)) {
        let size = size as usize;
        let Some(body) = bytes.get(8..size.max(8)).filter(|_| size >= 8) else {
            break;
        };
        found.push((name.try_into().expect("four bytes"), body));
        bytes = &bytes[size..];
    }
    found
}

/// The body of the first box named `name` in `bytes`.
fn child<'a>(bytes: &'a [u8], name: &[u8; 4]) -> Option<&'a [u8]> {
    boxes(bytes)
        .into_iter()
        .find(|(found, _)| found == name)
        .map(|(_, body)| body)
}

fn be16(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bx(name: &[u8; 4], body: &[u8]) -> Vec<u8> {
        let mut out = ((body.len() + 8) as u32).to_be_bytes().to_vec();
        out.extend_from_slice(name);
        out.extend_from_slice(body);
        out
    }

    /// A file whose item 1 is primary; `ipma` associates properties (1-based, into
    /// `ispe`, `irot`) with items as given.
    fn file(turns: u8, associations: &[(u16, &[u8])]) -> Vec<u8> {
        let ipco = [
            bx(b"ispe", &[0, 0, 0, 0, 0, 0, 0, 64, 0, 0, 0, 48]),
            bx(b"irot", &[turns]),
        ]
        .concat();
        let mut ipma = vec![0, 0, 0, 0];
        ipma.extend_from_slice(&(associations.len() as u32).to_be_bytes());
        for (item, indices) in associations {
            ipma.extend_from_slice(&item.to_be_bytes());
            ipma.push(indices.len() as u8);
            ipma.extend_from_slice(indices);
        }
        let iprp = bx(b"iprp", &[bx(b"ipco", &ipco), bx(b"ipma", &ipma)].concat());
        let meta = [vec![0, 0, 0, 0], bx(b"pitm", &[0, 0, 0, 0, 0, 1]), iprp].concat();
        [bx(b"ftyp", b"heic\0\0\0\0mif1heic"), bx(b"meta", &meta)].concat()
    }

    #[test]
    fn the_primary_items_rotation_is_found_before_or_after_its_size() {
        assert_eq!(primary_quarter_turns(&file(1, &[(1, &[0x82, 1])])), Some(1));
        assert_eq!(primary_quarter_turns(&file(3, &[(1, &[1, 0x82])])), Some(3));
    }

    #[test]
    fn another_items_rotation_or_none_is_no_rotation() {
        assert_eq!(
            primary_quarter_turns(&file(1, &[(2, &[1, 2]), (1, &[1])])),
            None
        );
        assert_eq!(primary_quarter_turns(&file(1, &[(1, &[1])])), None);
    }

    #[test]
    fn broken_boxes_are_left_to_libheif() {
        let whole = file(1, &[(1, &[1, 2])]);
        for end in 0..whole.len() {
            assert_eq!(primary_quarter_turns(&whole[..end]), None, "cut at {end}");
        }
        assert_eq!(primary_quarter_turns(&file(1, &[(1, &[1, 9])])), None);
    }
}
