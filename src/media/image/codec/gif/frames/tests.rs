use super::*;

/// A GIF of `w`×`h` with the given global table, each frame `(left, top, w, h,
/// control, indices)`, its data LZW-coded by weezl.
pub(crate) fn gif(
    screen: (u16, u16),
    table: &[[u8; 3]],
    frames: &[(Rect, Control, Vec<u8>)],
) -> Vec<u8> {
    let mut b = b"GIF89a".to_vec();
    b.extend_from_slice(&screen.0.to_le_bytes());
    b.extend_from_slice(&screen.1.to_le_bytes());
    b.extend_from_slice(&[0x80 | 1, 0, 0]);
    for i in 0..4 {
        b.extend_from_slice(table.get(i).unwrap_or(&[0, 0, 0]));
    }
    for ((x, y, w, h), control, indices) in frames {
        let packed = (control.disposal << 2) | u8::from(control.transparent.is_some());
        let [lo, hi] = control.delay_cs.to_le_bytes();
        let t = control.transparent.unwrap_or(0);
        b.extend_from_slice(&[0x21, 0xF9, 4, packed, lo, hi, t, 0]);
        b.push(0x2C);
        for v in [*x, *y, *w, *h] {
            b.extend_from_slice(&(v as u16).to_le_bytes());
        }
        b.push(0);
        b.push(2);
        let coded = weezl::encode::Encoder::new(weezl::BitOrder::Lsb, 2)
            .encode(indices)
            .unwrap();
        for chunk in coded.chunks(255) {
            b.push(chunk.len() as u8);
            b.extend_from_slice(chunk);
        }
        b.push(0);
    }
    b.push(0x3B);
    b
}

const RED: [u8; 3] = [255, 0, 0];
const GREEN: [u8; 3] = [0, 255, 0];
const BLUE: [u8; 3] = [0, 0, 255];

pub(crate) fn frames(bytes: &[u8]) -> Vec<RgbaImage> {
    let mut frames = GifFrames::open(bytes, 1 << 20, |_, _| unreachable!()).unwrap();
    std::iter::from_fn(|| frames.next_frame())
        .map(|f| f.unwrap().0)
        .collect()
}

#[test]
fn a_later_frame_larger_than_the_limit_is_refused_before_its_indices_are_allocated() {
    let small = (0, 0, 1, 1);
    let vast = (0, 0, 65535, 65535);
    let bytes = gif(
        (2, 2),
        &[RED, GREEN],
        &[
            (small, control(0, None), vec![1]),
            (vast, control(0, None), vec![1]),
        ],
    );
    let mut frames = GifFrames::open(&bytes, 1 << 20, |_, _| unreachable!()).unwrap();
    assert!(frames.next_frame().unwrap().is_ok());
    let Some(Err(MediaError::InvalidMedia(why))) = frames.next_frame() else {
        panic!("a frame of 65535x65535 was decoded");
    };
    assert!(why.contains("65535x65535"), "{why}");
}

pub(crate) fn control(disposal: u8, transparent: Option<u8>) -> Control {
    Control {
        delay_cs: 10,
        disposal,
        transparent,
    }
}

#[test]
fn the_first_frame_is_laid_on_colour_0_or_on_transparency_as_pillow_lays_it() {
    let table = [RED, GREEN, BLUE];
    let small = (1, 1, 1, 1);
    let opaque = gif((3, 3), &table, &[(small, control(0, None), vec![2])]);
    let first = &frames(&opaque)[0];
    assert_eq!(first.get_pixel(0, 0).0, [255, 0, 0, 255]);
    assert_eq!(first.get_pixel(1, 1).0, [0, 0, 255, 255]);
    let transparent = gif((3, 3), &table, &[(small, control(0, Some(1)), vec![2])]);
    let first = &frames(&transparent)[0];
    assert_eq!(first.get_pixel(0, 0).0[3], 0);
    assert_eq!(first.get_pixel(1, 1).0, [0, 0, 255, 255]);
}

#[test]
fn disposals_clear_keep_or_put_back_what_a_frame_covered() {
    let table = [RED, GREEN, BLUE];
    let whole = (0, 0, 2, 1);
    let second = (1, 0, 1, 1);
    for (disposal, expected) in [(1, [0, 255, 0, 255]), (2, [0; 4]), (3, [255, 0, 0, 255])] {
        let bytes = gif(
            (2, 1),
            &table,
            &[
                (whole, control(0, None), vec![0, 0]),
                (second, control(disposal, None), vec![1]),
                (second, control(0, Some(3)), vec![3]),
            ],
        );
        let all = frames(&bytes);
        assert_eq!(all.len(), 3);
        assert_eq!(all[1].get_pixel(1, 0).0, [0, 255, 0, 255]);
        assert_eq!(all[2].get_pixel(1, 0).0, expected, "disposal {disposal}");
        assert_eq!(all[2].get_pixel(0, 0).0, [255, 0, 0, 255]);
    }
}

#[test]
fn interlaced_rows_are_put_in_their_place() {
    let order: Vec<usize> = (0..10).map(|r| stored_row(r, 10, true)).collect();
    assert_eq!(order, [0, 8, 4, 2, 6, 1, 3, 5, 7, 9]);
    assert_eq!(stored_row(3, 10, false), 3);
}

#[test]
fn frames_past_the_screen_are_clipped_and_a_damaged_frame_is_drawn_in_part() {
    let table = [RED, GREEN];
    let past = gif(
        (2, 2),
        &table,
        &[
            ((0, 0, 2, 2), control(0, None), vec![0; 4]),
            ((1, 1, 4, 4), control(0, None), vec![1; 16]),
        ],
    );
    let all = frames(&past);
    assert_eq!(all[1].dimensions(), (2, 2));
    assert_eq!(all[1].get_pixel(1, 1).0, [0, 255, 0, 255]);
    let mut cut = past.clone();
    cut.truncate(cut.len() - 6);
    assert_eq!(frames(&cut).len(), 2);
    let refused = GifFrames::open(&past, 3, |w, h| {
        MediaError::InvalidMedia(format!("{w}x{h}"))
    });
    assert!(matches!(refused, Err(MediaError::InvalidMedia(m)) if m == "2x2"));
}
