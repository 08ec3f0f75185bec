use image::GenericImageView;

use crate::media::image::codec::bmp::*;

/// A BMP with a 40-byte header (or `header` bytes, masks at 40 onwards), `height`
/// negative for top-down, `palette` as BGR0 entries, then `data` at the offset the
/// file header gives (or `offset` when not `None`).
fn bmp(width: i32, height: i32, bits: u16, compression: u32, extra: &[u8], data: &[u8]) -> Vec<u8> {
    let mut header = Vec::new();
    header.extend_from_slice(&40u32.to_le_bytes());
    header.extend_from_slice(&width.to_le_bytes());
    header.extend_from_slice(&height.to_le_bytes());
    header.extend_from_slice(&1u16.to_le_bytes());
    header.extend_from_slice(&bits.to_le_bytes());
    header.extend_from_slice(&compression.to_le_bytes());
    header.extend_from_slice(&[0; 20]);
    let offset = (14 + header.len() + extra.len()) as u32;
    let mut file = b"BM".to_vec();
    file.extend_from_slice(&(offset + data.len() as u32).to_le_bytes());
    file.extend_from_slice(&[0; 4]);
    file.extend_from_slice(&offset.to_le_bytes());
    file.extend_from_slice(&header);
    file.extend_from_slice(extra);
    file.extend_from_slice(data);
    file
}

/// A palette of `colours` as BMP stores it: BGR and a zero byte each.
fn palette(colours: &[[u8; 3]]) -> Vec<u8> {
    colours
        .iter()
        .flat_map(|[r, g, b]| [*b, *g, *r, 0])
        .collect()
}

fn decoded(file: &[u8]) -> DynamicImage {
    open(file).unwrap().decode().unwrap()
}

/// What the image steps do: the header, the pixel limit (here a million), the pixels.
fn read(file: &[u8]) -> Result<DynamicImage, MediaError> {
    let opened = open(file)?;
    crate::media::image::decode::check_pixels(opened.width, opened.height, 1 << 20)?;
    opened.decode()
}

fn rgb(image: &DynamicImage, x: u32, y: u32) -> [u8; 3] {
    let p = image.get_pixel(x, y).0;
    [p[0], p[1], p[2]]
}

const RED: [u8; 3] = [255, 0, 0];
const GREEN: [u8; 3] = [0, 255, 0];
const BLUE: [u8; 3] = [0, 0, 255];

#[test]
fn rows_are_stored_bottom_up_unless_the_height_is_negative() {
    // 24-bit, 2x2: the first stored row is the bottom one; rows pad to 4 bytes.
    let data = [0, 0, 255, 0, 255, 0, 0, 0, 255, 0, 0, 0, 0, 0, 0, 0];
    let up = decoded(&bmp(2, 2, 24, RAW, &[], &data));
    assert_eq!((rgb(&up, 0, 1), rgb(&up, 1, 1)), (RED, GREEN));
    assert_eq!((rgb(&up, 0, 0), rgb(&up, 1, 0)), (BLUE, [0; 3]));
    let down = decoded(&bmp(2, -2, 24, RAW, &[], &data));
    assert_eq!((rgb(&down, 0, 0), rgb(&down, 1, 0)), (RED, GREEN));
    assert_eq!(down.dimensions(), (2, 2));
}

#[test]
fn palette_indices_of_one_four_and_eight_bits_are_looked_up() {
    let colours = palette(&[RED, GREEN, BLUE]);
    let one = decoded(&bmp(3, 1, 1, RAW, &colours, &[0b0100_0000, 0, 0, 0]));
    assert_eq!(
        [rgb(&one, 0, 0), rgb(&one, 1, 0), rgb(&one, 2, 0)],
        [RED, GREEN, RED]
    );
    let four = decoded(&bmp(3, 1, 4, RAW, &colours, &[0x21, 0x00, 0, 0]));
    assert_eq!(
        [rgb(&four, 0, 0), rgb(&four, 1, 0), rgb(&four, 2, 0)],
        [BLUE, GREEN, RED]
    );
    // Index 7 is past the palette: black, as Pillow draws it.
    let eight = decoded(&bmp(2, 1, 8, RAW, &colours, &[2, 7, 0, 0]));
    assert_eq!([rgb(&eight, 0, 0), rgb(&eight, 1, 0)], [BLUE, [0; 3]]);
}

#[test]
fn sixteen_bits_are_five_five_five_and_bit_masks_name_any_channel_layout() {
    let plain = decoded(&bmp(1, 1, 16, RAW, &[], &0x7C00u16.to_le_bytes()));
    assert_eq!(rgb(&plain, 0, 0), RED);
    // 5-6-5, and a 4-4-4-4 layout with alpha (not on Pillow's list, valid all the same).
    let masks: Vec<u8> = [0xF800u32, 0x7E0, 0x1F]
        .iter()
        .flat_map(|m| m.to_le_bytes())
        .collect();
    let green = decoded(&bmp(1, 1, 16, BITFIELDS, &masks, &[0xE0, 0x07, 0, 0]));
    assert_eq!(rgb(&green, 0, 0), GREEN);
    let mut v3 = bmp(1, 1, 16, BITFIELDS, &[], &[0x0F, 0x80, 0, 0]);
    let masks4: Vec<u8> = [0xF00u32, 0xF0, 0xF, 0xF000]
        .iter()
        .flat_map(|m| m.to_le_bytes())
        .collect();
    // Grow the header to 56 bytes (V3), whose masks include alpha.
    v3.splice(54..54, masks4.iter().copied().chain([0; 0]));
    v3[14] = 56;
    v3[10] = 14 + 56;
    let alpha = decoded(&v3);
    assert_eq!(alpha.get_pixel(0, 0).0, [0, 0, 255, 136]);
}

#[test]
fn rle_deltas_and_line_ends_leave_index_zero_and_runs_stop_at_the_row_end() {
    let colours = palette(&[RED, GREEN, BLUE]);
    // Bottom row: 2 x index 1, delta (1 right, 0 up), a run of 9 cut at the row's end,
    // end of line; top row: one index 2, end of line (the rest index 0), end of bitmap.
    let rle = [2, 1, 0, 2, 1, 0, 9, 2, 0, 0, 1, 2, 0, 0, 0, 1];
    let image = decoded(&bmp(4, 2, 8, RLE8, &colours, &rle));
    let bottom: Vec<_> = (0..4).map(|x| rgb(&image, x, 1)).collect();
    assert_eq!(bottom, [GREEN, GREEN, RED, BLUE]);
    let top: Vec<_> = (0..4).map(|x| rgb(&image, x, 0)).collect();
    assert_eq!(top, [BLUE, RED, RED, RED]);
    // RLE4 absolute run of 3 pixels: two bytes, the last nibble padding.
    let rle4 = [0, 3, 0x12, 0x00, 0, 1];
    let image = decoded(&bmp(3, 1, 4, RLE4, &colours, &rle4));
    let row: Vec<_> = (0..3).map(|x| rgb(&image, x, 0)).collect();
    assert_eq!(row, [GREEN, BLUE, RED]);
}

#[test]
fn a_data_offset_that_points_at_the_palette_means_the_pixels_after_it() {
    let colours = palette(&[RED, GREEN]);
    let mut file = bmp(1, 1, 8, RAW, &colours, &[1, 0, 0, 0]);
    file[10] = 54; // the palette's own offset
    let mut header = file.clone();
    header[46] = 2; // two colours declared
    assert_eq!(rgb(&decoded(&header), 0, 0), GREEN);
}

#[test]
fn pixel_data_that_ends_early_is_refused_but_the_last_rows_padding_may_be_missing() {
    let data = [0, 0, 255, 0, 0, 255, 0, 0];
    let whole = bmp(1, 2, 24, RAW, &[], &data);
    assert_eq!(decoded(&whole[..whole.len() - 1]).dimensions(), (1, 2));
    let cut = open(&whole[..whole.len() - 6]).unwrap().decode();
    assert!(matches!(cut, Err(MediaError::InvalidMedia(_))), "{cut:?}");
    let rle = bmp(2, 2, 8, RLE8, &palette(&[RED]), &[2, 0, 0, 1]);
    let short = open(&rle).unwrap().decode();
    assert!(
        matches!(short, Err(MediaError::InvalidMedia(_))),
        "{short:?}"
    );
}

#[test]
fn unknown_headers_depths_and_compressions_are_refused() {
    let mut odd = bmp(1, 1, 24, RAW, &[], &[0; 4]);
    odd[14] = 44;
    assert!(open(&odd).is_err());
    assert!(open(&bmp(1, 1, 2, RAW, &[0; 16], &[0; 4])).is_err());
    assert!(open(&bmp(1, 1, 24, 4, &[], &[0; 4])).is_err());
    assert!(open(&bmp(0, 1, 24, RAW, &[], &[0; 4])).is_err());
}

#[test]
fn no_corruption_or_truncation_of_a_bmp_makes_the_reader_panic() {
    let colours = palette(&[RED, GREEN, BLUE]);
    let files = [
        bmp(
            4,
            2,
            8,
            RLE8,
            &colours,
            &[2, 1, 0, 2, 1, 0, 9, 2, 0, 0, 1, 2, 0, 0, 0, 1],
        ),
        bmp(3, 1, 4, RLE4, &colours, &[0, 3, 0x12, 0x00, 0, 1]),
        bmp(3, 2, 1, RAW, &colours, &[0x40, 0, 0, 0, 0x80, 0, 0, 0]),
        bmp(2, -2, 32, RAW, &[], &[7; 16]),
    ];
    for file in &files {
        for end in 0..file.len() {
            let _ = read(&file[..end]);
        }
        for at in 0..file.len() {
            for value in [0x00, 0x01, 0x7F, 0x80, 0xFF] {
                let mut broken = file.clone();
                broken[at] = value;
                let _ = read(&broken);
            }
        }
    }
}

#[test]
fn a_24_bit_bitmap_is_blue_green_red_both_ways_up() {
    // 3x3 of distinct pixels, rows padded to 12 bytes.
    let pixel = |x: u8, y: u8| [200 - x * y * 10, y * 80, x * 40];
    let mut data = Vec::new();
    for y in 0..3u8 {
        for x in 0..3u8 {
            let [r, g, b] = pixel(x, y);
            data.extend_from_slice(&[b, g, r]);
        }
        data.extend_from_slice(&[0; 3]);
    }
    for height in [3, -3] {
        let image = decoded(&bmp(3, height, 24, RAW, &[], &data));
        for (x, y) in (0..3u8).flat_map(|x| (0..3u8).map(move |y| (x, y))) {
            let shown_y = if height > 0 { 2 - y } else { y };
            assert_eq!(rgb(&image, x.into(), shown_y.into()), pixel(x, y));
        }
    }
}
