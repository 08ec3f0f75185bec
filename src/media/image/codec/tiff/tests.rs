use image::DynamicImage;

use crate::media::image::codec::tiff::open;
use crate::media::testutil::raw_tiff;
use crate::media::MediaError;

/// The tags of a one-strip, contiguous page of `width` x `height`.
fn page(width: u32, height: u32, bits: &[u32], photometric: u32) -> Vec<(u16, Vec<u32>)> {
    vec![
        (256, vec![width]),
        (257, vec![height]),
        (258, bits.to_vec()),
        (259, vec![1]),
        (262, vec![photometric]),
        (277, vec![bits.len() as u32]),
        (278, vec![height]),
        (284, vec![1]),
    ]
}

fn with(mut tags: Vec<(u16, Vec<u32>)>, tag: u16, values: &[u32]) -> Vec<(u16, Vec<u32>)> {
    tags.retain(|(t, _)| *t != tag);
    tags.push((tag, values.to_vec()));
    tags
}

fn decode(tiff: &[u8]) -> Result<DynamicImage, MediaError> {
    open(tiff)?.decode()
}

/// The grey value of each pixel of the first row.
fn greys(image: &DynamicImage) -> Vec<u8> {
    let rgb = image.as_rgb8().expect("an RGB picture");
    (0..rgb.width())
        .map(|x| {
            let [r, g, b] = rgb.get_pixel(x, 0).0;
            assert!(r == g && g == b, "{:?} is not grey", [r, g, b]);
            r
        })
        .collect()
}

fn assert_invalid(result: Result<DynamicImage, MediaError>) {
    assert!(
        matches!(result, Err(MediaError::InvalidMedia(_))),
        "{result:?}"
    );
}

#[test]
fn a_12_bit_grey_ramp_shows_the_high_byte_of_its_unscaled_values_as_pillow_does() {
    // 0x000, 0x100, 0x800, 0xFFF packed two to three bytes, most significant first.
    let row = [0x00, 0x01, 0x00, 0x80, 0x0F, 0xFF];
    let tiff = raw_tiff(&page(4, 2, &[12], 1), &[[row, row].concat()], false);
    assert_eq!(greys(&decode(&tiff).unwrap()), [0, 1, 8, 15]);
}

#[test]
fn a_32_bit_integer_grey_ramp_is_shifted_by_eight_bits_and_clipped() {
    let values: [i32; 5] = [-5, 0x100, 0xFF00, 70_000, i32::MIN];
    let row: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    for format in [1, 2] {
        let tags = with(page(5, 1, &[32], 1), 339, &[format]);
        let tiff = raw_tiff(&tags, std::slice::from_ref(&row), false);
        // Unsigned samples too are read as signed, as Pillow's `I;32N` reads them.
        assert_eq!(greys(&decode(&tiff).unwrap()), [0, 1, 255, 255, 0]);
    }
}

#[test]
fn a_float_grey_ramp_in_tiles_is_truncated_and_clipped_like_pillows_f_mode() {
    let values = [-3.1f32, 0.6, 2.5, 254.6, 300.0, f32::NAN];
    let (width, height) = (20, 3);
    let pixel = |x: u32, y: u32| if y == 0 { values[x as usize % 6] } else { 9.0 };
    // Two 16 x 16 tiles across, the second mostly past the right edge.
    let tiles: Vec<Vec<u8>> = [0, 16]
        .iter()
        .map(|left| {
            let (xs, ys) = (*left..left + 16, 0..16);
            ys.flat_map(|y| xs.clone().map(move |x| pixel(x, y)))
                .flat_map(f32::to_le_bytes)
                .collect()
        })
        .collect();
    let mut tags = with(page(width, height, &[32], 1), 339, &[3]);
    tags.retain(|(tag, _)| *tag != 278);
    tags.extend([(322, vec![16]), (323, vec![16])]);
    let image = decode(&raw_tiff(&tags, &tiles, true)).unwrap();
    let first: Vec<u8> = (0..20)
        .map(|x| image.as_rgb8().unwrap()[(x, 0)].0[0])
        .collect();
    assert_eq!(first[..6], [0, 0, 2, 254, 255, 0]);
    assert_eq!(first[15..18], [254, 255, 0]);
    assert_eq!(image.as_rgb8().unwrap()[(19, 2)].0, [9, 9, 9]);
}

#[test]
fn cmyk_of_16_bits_keeps_the_high_byte_of_each_ink_then_converts_as_pillow_does() {
    let inks: [[u16; 4]; 2] = [[0x12FF, 0x8001, 0xFE00, 0x4080], [0, 0, 0, 0]];
    let row: Vec<u8> = inks
        .iter()
        .flatten()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let tiff = raw_tiff(&page(2, 1, &[16; 4], 5), &[row], false);
    let image = decode(&tiff).unwrap();
    let rgb = image.as_rgb8().unwrap();
    // What Pillow 13 gives for the same inks: CMYK;16L, then convert("RGB").
    assert_eq!(rgb[(0, 0)].0, [178, 95, 1]);
    assert_eq!(rgb[(1, 0)].0, [255, 255, 255]);
}

#[test]
fn a_fourth_rgb_sample_without_extra_samples_is_read_as_alpha() {
    let row = vec![200, 10, 10, 0, 10, 200, 10, 255];
    let tiff = raw_tiff(&page(2, 1, &[8; 4], 2), &[row], false);
    let image = decode(&tiff).unwrap();
    let rgba = image.as_rgba8().expect("an RGBA picture");
    assert_eq!(rgba[(0, 0)].0[3], 0);
    assert_eq!(rgba[(1, 0)].0, [10, 200, 10, 255]);
}

#[test]
fn a_strip_shorter_than_its_rows_is_damaged() {
    let row: Vec<u8> = [0x1234i32; 4]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let tags = with(page(4, 3, &[32], 1), 339, &[2]);
    let short = raw_tiff(&tags, &[[row.clone(), row.clone()].concat()], false);
    assert_invalid(decode(&short));
    let whole = raw_tiff(&tags, &[row.repeat(3)], false);
    assert_eq!(greys(&decode(&whole).unwrap()), [0x12; 4]);
}

#[test]
fn tiles_far_larger_than_the_picture_are_refused_before_a_buffer_is_made() {
    let mut tags = with(page(4, 4, &[32], 1), 339, &[3]);
    tags.retain(|(tag, _)| *tag != 278);
    tags.extend([(322, vec![1 << 16]), (323, vec![1 << 16])]);
    assert_invalid(decode(&raw_tiff(&tags, &[vec![0; 64]], true)));
}

#[test]
fn layouts_pillow_has_no_mode_for_are_refused() {
    // RGB of 32-bit integers, and grey of 24 bits.
    let rgb32 = raw_tiff(&page(1, 1, &[32; 3], 2), &[vec![0; 12]], false);
    assert_invalid(decode(&rgb32));
    let grey24 = raw_tiff(&page(1, 1, &[24], 1), &[vec![0; 3]], false);
    assert_invalid(decode(&grey24));
}

/// Every single-byte corruption of a 12-bit and a 16-bit CMYK TIFF: a picture or
/// `InvalidMedia`, never a panic.
#[test]
fn corrupt_sample_tiffs_never_panic() {
    let grey = raw_tiff(&page(4, 2, &[12], 1), &[vec![0x5A; 12]], false);
    let cmyk = raw_tiff(&page(2, 2, &[16; 4], 5), &[vec![0x33; 32]], false);
    for tiff in [grey, cmyk] {
        assert!(decode(&tiff).is_ok());
        for at in 0..tiff.len() {
            for value in [0x00, 0xFF, tiff[at] ^ 0x10] {
                let mut broken = tiff.clone();
                broken[at] = value;
                let result = match open(&broken) {
                    Ok(file) if u64::from(file.width) * u64::from(file.height) <= 1 << 12 => {
                        file.decode().map(drop)
                    }
                    other => other.map(drop),
                };
                if let Err(e) = result {
                    assert!(matches!(e, MediaError::InvalidMedia(_)), "{e:?}");
                }
            }
        }
    }
}

#[test]
fn an_rgb_page_whose_strips_hold_fewer_rows_than_it_declares_is_damaged() {
    let row = [90u8; 4 * 3];
    let tags = page(4, 3, &[8; 3], 2);
    let whole = raw_tiff(&tags, &[row.repeat(3)], false);
    assert_eq!(
        decode(&whole).unwrap().as_rgb8().unwrap()[(3, 2)].0,
        [90; 3]
    );
    let short = raw_tiff(&tags, &[row.repeat(2)], false);
    assert_invalid(decode(&short));
    // RowsPerStrip overflowed past the height, planes stored apart: one strip of
    // three rows is expected in each plane, and a strip of one row is found.
    let overflowed = with(with(tags, 278, &[0x8000_0001]), 284, &[2]);
    let strips = vec![vec![90u8; 4]; 9];
    assert_invalid(decode(&raw_tiff(&overflowed, &strips, false)));
}

#[test]
fn rgb_and_grey_of_many_strips_are_read_on_every_core_in_order() {
    // 5 rows of one strip each (the last band shorter), each row its own colour.
    let (width, height) = (3u32, 5u32);
    let colour = |y: u32| [y as u8 * 40, 200 - y as u8 * 30, 7];
    let strips: Vec<Vec<u8>> = (0..height)
        .map(|y| colour(y).repeat(width as usize))
        .collect();
    let tags = with(page(width, height, &[8; 3], 2), 278, &[1]);
    let image = decode(&raw_tiff(&tags, &strips, false)).unwrap();
    let rgb = image.as_rgb8().unwrap();
    for y in 0..height {
        assert_eq!(rgb[(width - 1, y)].0, colour(y), "row {y}");
    }
    let greys_of = |y: u32| vec![y as u8 * 50; width as usize];
    let strips: Vec<Vec<u8>> = (0..height).map(greys_of).collect();
    let tags = with(page(width, height, &[8], 1), 278, &[2]);
    let image = decode(&raw_tiff(
        &tags,
        &[
            strips[..2].concat(),
            strips[2..4].concat(),
            strips[4].clone(),
        ],
        false,
    ))
    .unwrap();
    let rgb = image.as_rgb8().unwrap();
    for y in 0..height {
        assert_eq!(rgb[(1, y)].0, [y as u8 * 50; 3], "row {y}");
    }
    // A damaged strip in the second band fails the page.
    let tags = with(page(width, height, &[8; 3], 2), 278, &[1]);
    let mut short = (0..height)
        .map(|y| colour(y).repeat(width as usize))
        .collect::<Vec<_>>();
    short[4].truncate(2);
    assert_invalid(decode(&raw_tiff(&tags, &short, false)));
}

#[test]
fn every_tag_read_is_of_the_type_libtiffs_field_table_gives() {
    use crate::media::image::codec::sys::tiff::*;
    let tiff = crate::media::testutil::raw_tiff(&page(2, 1, &[8], 1), &[vec![0, 255]], false);
    let file = open(&tiff).unwrap();
    // (tag, count bytes, value bytes): the types the readers of this module ask for.
    let single: &[(u32, usize)] = &[
        (TIFFTAG_IMAGEWIDTH, 4),
        (TIFFTAG_IMAGELENGTH, 4),
        (TIFFTAG_ORIENTATION, 2),
        (TIFFTAG_BITSPERSAMPLE, 2),
        (TIFFTAG_SAMPLESPERPIXEL, 2),
        (TIFFTAG_SAMPLEFORMAT, 2),
        (TIFFTAG_PLANARCONFIG, 2),
        (TIFFTAG_PHOTOMETRIC, 2),
        (TIFFTAG_INKSET, 2),
        (TIFFTAG_COMPRESSION, 2),
        (TIFFTAG_ROWSPERSTRIP, 4),
        (TIFFTAG_TILEWIDTH, 4),
        (TIFFTAG_TILELENGTH, 4),
    ];
    for &(tag, bytes) in single {
        assert!(file.hands_out(tag, 0, bytes), "tag {tag}");
    }
    assert!(file.hands_out(TIFFTAG_ICCPROFILE, 4, 1));
    assert!(file.hands_out(TIFFTAG_EXTRASAMPLES, 2, 2));
    // A type of another size is refused rather than written through.
    assert!(!file.hands_out(TIFFTAG_IMAGEWIDTH, 0, 2));
    assert_eq!(file.field::<u16>(TIFFTAG_IMAGEWIDTH), None);
    assert_eq!(file.field::<u32>(TIFFTAG_IMAGEWIDTH), Some(2));
    assert!(file.array::<u16, u16>(TIFFTAG_ICCPROFILE).is_none());
}
