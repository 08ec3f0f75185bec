//! A rendered JPEG XL frame copied out as 8-bit RGB(A). jxl-oxide's `ImageStream`
//! does it a sample at a time on one thread, a third of a second for 12 MP while the
//! decoder's threads wait; here, for the common case, the planes go through
//! `mediaedit_pixels::interleave_u8` (bands of rows in parallel, optimised in every
//! profile). The stream stays for the rest: a turned picture, a frame placed off the
//! canvas's corner, samples of more than 8 bits held as integers, spot colours.

use jxl_oxide::image::BitDepth;
use jxl_oxide::{CropInfo, ExtraChannelType, JxlImage, Render};
use jxl_render::ImageBuffer;
use mediaedit_pixels::{Plane, Strided};

use crate::media::error::MediaError;

/// What the copy needs to know of a keyframe besides its render, taken from the
/// decoder so that the decoder can be dropped before the copy.
pub(super) struct Layout {
    /// Neither turned nor placed off the canvas's corner.
    plain: bool,
    size: (usize, usize),
    colour_depth: BitDepth,
    extra_depths: Vec<BitDepth>,
}

impl Layout {
    pub fn of(image: &JxlImage, index: usize) -> Layout {
        let metadata = &image.image_header().metadata;
        let at_corner = image
            .frame_header(index)
            .is_some_and(|header| header.x0 == 0 && header.y0 == 0);
        Layout {
            plain: at_corner && metadata.orientation == 1,
            size: (image.width() as usize, image.height() as usize),
            colour_depth: metadata.bit_depth,
            extra_depths: metadata.ec_info.iter().map(|ec| ec.bit_depth).collect(),
        }
    }
}

/// The pixels of `render`, a keyframe laid out as `layout` says: width, height,
/// channels (grey or RGB, then alpha when there is one) and the interleaved samples.
pub(super) fn copy_out(layout: &Layout, render: &Render) -> (u32, u32, u32, Vec<u8>) {
    if let Some(copied) = in_parallel(layout, render) {
        return copied;
    }
    let mut stream = render.stream();
    let (width, height, channels) = (stream.width(), stream.height(), stream.channels());
    let mut buf = vec![0u8; width as usize * height as usize * channels as usize];
    stream.write_to_buffer(&mut buf);
    (width, height, channels, buf)
}

/// The still (keyframe 0) of `image`, rendered `rows` upright rows at a time: the
/// decoder renders only the groups a strip and the filters' border around it need, so
/// it holds a strip's planes rather than the picture's (a 24 MP photo would not fit
/// one step's memory otherwise), for a tenth more decoding work (the groups along
/// each cut are decoded twice). Each strip is copied straight into its rows of the
/// picture; `failed` turns a decoder error into ours.
pub(super) fn in_strips(
    image: &mut JxlImage,
    rows: u32,
    failed: impl Fn(Box<dyn std::error::Error + Send + Sync>) -> MediaError,
) -> Result<(u32, u32, u32, Vec<u8>), MediaError> {
    let (width, height) = (image.width(), image.height());
    let (mut pixels, mut channels, mut top) = (Vec::new(), 0u32, 0u32);
    while top < height {
        let strip = rows.max(1).min(height - top);
        image.set_image_region(CropInfo {
            width,
            height: strip,
            left: 0,
            top,
        });
        let render = image.render_frame(0).map_err(&failed)?;
        let mut stream = render.stream();
        if top == 0 {
            channels = stream.channels();
            pixels = vec![0u8; width as usize * height as usize * channels as usize];
        }
        if (stream.width(), stream.height(), stream.channels()) != (width, strip, channels) {
            return Err(MediaError::InvalidMedia(
                "the JPEG XL data is damaged (a strip's pixels do not fill it)".into(),
            ));
        }
        let row = width as usize * channels as usize;
        let at = top as usize * row;
        stream.write_to_buffer(&mut pixels[at..at + strip as usize * row]);
        top += strip;
    }
    Ok((width, height, channels, pixels))
}

/// [`copy_out`] through `interleave_u8`, or `None` where the stream must do it.
fn in_parallel(layout: &Layout, render: &Render) -> Option<(u32, u32, u32, Vec<u8>)> {
    if !layout.plain || render.orientation() != 1 {
        return None;
    }
    let (width, height) = layout.size;
    let mut planes = render
        .color_channels()
        .iter()
        .map(|grid| plane(grid, layout.colour_depth, layout.size))
        .collect::<Option<Vec<_>>>()?;
    let (extra, grids) = render.extra_channels();
    if extra
        .iter()
        .any(|channel| matches!(channel.ty(), ExtraChannelType::SpotColour { .. }))
    {
        return None;
    }
    // The first alpha channel, as the stream takes it.
    if let Some(alpha) = extra.iter().position(|channel| channel.is_alpha()) {
        let depth = *layout.extra_depths.get(alpha)?;
        planes.push(plane(grids.get(alpha)?, depth, layout.size)?);
    }
    if !matches!(planes.len(), 1..=4) {
        return None;
    }
    let mut buf = vec![0u8; width * height * planes.len()];
    mediaedit_pixels::interleave_u8(&planes, width, &mut buf);
    Some((width as u32, height as u32, planes.len() as u32, buf))
}

/// `grid` as a plane of at least `width` × `height` samples, its rows as far apart as
/// it is wide (a VarDCT plane is padded to whole 8×8 blocks; the frame's top left
/// corner first), which the stream would turn into 8 bits the same way: floats
/// (nominally 0–1) at any declared depth, integers only at 8 bits.
fn plane(
    grid: &ImageBuffer,
    depth: BitDepth,
    (width, height): (usize, usize),
) -> Option<Strided<'_>> {
    let eight_bits = matches!(depth, BitDepth::IntegerSample { bits_per_sample: 8 });
    let (w, h) = (grid.width(), grid.height());
    if w < width || h < height {
        return None;
    }
    let plane = match grid {
        ImageBuffer::F32(g) => Plane::Unit(&g.buf()[..w * h]),
        ImageBuffer::I32(g) if eight_bits => Plane::Int32(&g.buf()[..w * h]),
        ImageBuffer::I16(g) if eight_bits => Plane::Int16(&g.buf()[..w * h]),
        _ => return None,
    };
    Some(Strided(plane, w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::image::codec::jxl_encode::{encode_at, Boxes};

    /// `bytes` read by jxl-oxide, to be rendered in sRGB.
    fn opened(bytes: &[u8]) -> JxlImage {
        let mut image = JxlImage::builder().read(bytes).unwrap();
        image.request_color_encoding(jxl_oxide::EnumColourEncoding::srgb(
            jxl_oxide::RenderingIntent::Relative,
        ));
        image
    }

    /// What jxl-oxide's own stream makes of `render`.
    fn streamed(render: &Render) -> (u32, u32, u32, Vec<u8>) {
        let mut stream = render.stream();
        let (width, height, channels) = (stream.width(), stream.height(), stream.channels());
        let mut buf = vec![0u8; width as usize * height as usize * channels as usize];
        stream.write_to_buffer(&mut buf);
        (width, height, channels, buf)
    }

    /// `source` (a file named `name`, which cjxl reads) as a JPEG XL by
    /// `cjxl -d distance`.
    fn by_cjxl(source: &[u8], name: &str, distance: &str) -> Vec<u8> {
        let dir = tempfile::tempdir().unwrap();
        let (input, jxl) = (dir.path().join(name), dir.path().join("out.jxl"));
        std::fs::write(&input, source).unwrap();
        let status = std::process::Command::new("cjxl")
            .args([
                input.as_os_str(),
                jxl.as_os_str(),
                "-d".as_ref(),
                distance.as_ref(),
            ])
            .stderr(std::process::Stdio::null())
            .status()
            .expect("cjxl runs (Debian libjxl-tools)");
        assert!(status.success());
        std::fs::read(jxl).unwrap()
    }

    #[test]
    fn the_parallel_copy_is_the_streams_byte_for_byte_for_rgb_grey_and_alpha() {
        let rgb = image::RgbImage::from_fn(37, 29, |x, y| {
            image::Rgb([(x * 7) as u8, (y * 9) as u8, (x * y) as u8])
        });
        let rgba = image::RgbaImage::from_fn(33, 18, |x, y| {
            image::Rgba([(x * 5) as u8, 40, (y * 13) as u8, (x * 8 + y) as u8])
        });
        let mut files = Vec::new();
        for quality in [Some(90), Some(100)] {
            files.push(encode_at(&rgb.clone().into(), quality, &Boxes::default()).unwrap());
            files.push(encode_at(&rgba.clone().into(), quality, &Boxes::default()).unwrap());
        }
        // Our encoder writes RGB only: a grey picture comes from cjxl.
        let grey = image::GrayImage::from_fn(20, 31, |x, y| image::Luma([(x * 11 + y) as u8]));
        let grey =
            crate::media::image::ops::encode(grey.into(), crate::format::ImageFormat::Png).unwrap();
        files.push(by_cjxl(&grey, "g.png", "1"));
        files.push(by_cjxl(&grey, "g.png", "0"));
        for (n, bytes) in files.iter().enumerate() {
            let image = opened(bytes);
            let render = image.render_frame(0).unwrap();
            let ours = in_parallel(&Layout::of(&image, 0), &render);
            let ours = ours.unwrap_or_else(|| panic!("file {n} took the stream"));
            assert_eq!(ours, streamed(&render), "file {n}");
        }
    }

    #[test]
    fn a_still_rendered_in_strips_is_its_whole_render_byte_for_byte_turned_or_not() {
        // Without alpha: jxl-oxide 0.12 panics cropping an extra channel at the bottom
        // edge, so a picture with one is rendered whole (`jxl::open`).
        let rgb = image::RgbImage::from_fn(300, 600, |x, y| {
            image::Rgb([(x * 7 + y) as u8, (y * 3) as u8, (x ^ y) as u8])
        });
        let turned = crate::media::testutil::jpeg_with_orientation(520, 300, 6);
        let files = [
            encode_at(&rgb.into(), Some(90), &Boxes::default()).unwrap(),
            by_cjxl(&turned, "t.jpg", "1"),
        ];
        for (n, bytes) in files.iter().enumerate() {
            let image = opened(bytes);
            let whole = streamed(&image.render_frame(0).unwrap());
            let damaged = |e: Box<dyn std::error::Error + Send + Sync>| {
                MediaError::InvalidMedia(e.to_string())
            };
            for rows in [64, 256] {
                let strips = in_strips(&mut opened(bytes), rows, damaged).unwrap();
                assert_eq!(strips, whole, "file {n} in strips of {rows} rows");
            }
        }
    }
}
