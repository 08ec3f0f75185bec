//! JPEG XL output through libjxl's encoder (Debian's libjxl 0.7, the library `cjxl`
//! is built on), in this process like libavif: stills and animations, 8-bit sRGB with
//! or without alpha, at libjxl's default effort (7).
//!
//! `quality` (1–100) is turned into libjxl's Butteraugli distance as `cjxl -q` turns
//! it (so `quality: 90` is `-d 1`, cjxl's default, and 100 is lossless); without one
//! the distance is 1.0. Pure-Rust JPEG XL encoders (`jxl-encoder`, `zune-jpegxl`)
//! write only lossless files, which are larger than our WebP, so libjxl it is; jxl-oxide
//! reads (`jxl`).

use std::os::raw::c_void;
use std::ptr;

use image::DynamicImage;

use crate::media::error::MediaError;
use crate::media::image::codec::sys::jxl::*;
use crate::media::image::codec::sys::jxl_threads::{
    JxlThreadParallelRunnerCreate, JxlThreadParallelRunnerDefaultNumWorkerThreads,
    JxlThreadParallelRunnerDestroy,
};

/// libjxl's own default effort (`cjxl -e 7`): on a 12 MP photo about as fast as our
/// AVIF encoder, see docs/PERFORMANCE.md.
pub(crate) const EFFORT: i64 = 7;

/// The Butteraugli distance `cjxl -q quality` encodes at: 0 (lossless) at 100, 1.0 at
/// 90, 6.4 at 30, and faster below.
pub(crate) fn distance(quality: u8) -> f32 {
    let q = f32::from(quality.clamp(1, 100));
    if q >= 100.0 {
        0.0
    } else if q >= 30.0 {
        0.1 + (100.0 - q) * 0.09
    } else {
        6.4 + 2.5f32.powf((30.0 - q) / 5.0) / 6.25
    }
}

/// Metadata written beside the picture, each in a box of its own: the `Exif` box's
/// TIFF data (without the 4-byte offset the box starts with) and the `xml ` box's XMP.
#[derive(Debug, Default, Clone)]
pub(crate) struct Boxes {
    pub exif: Option<Vec<u8>>,
    pub xmp: Option<Vec<u8>>,
}

/// A libjxl encoder and its thread pool, released together.
pub(crate) struct JxlWriter {
    encoder: *mut JxlEncoder,
    runner: *mut c_void,
    settings: *mut JxlEncoderFrameSettings,
    alpha: bool,
    animated: bool,
}

/// `InvalidMedia` for a libjxl call that did not succeed (the encoder's error says
/// no more than "generic" or "out of memory", so the call is named).
fn check(status: JxlEncoderStatus, what: &str) -> Result<(), MediaError> {
    if status == JXL_ENC_SUCCESS {
        Ok(())
    } else {
        Err(MediaError::InvalidMedia(format!(
            "the JPEG XL encoder failed ({what})"
        )))
    }
}

impl JxlWriter {
    /// An encoder of `width` × `height` pictures (`alpha`: RGBA, else RGB), animated
    /// (`loops` times, 0 for ever; durations in milliseconds) or not, at `quality`.
    pub fn new(
        (width, height): (u32, u32),
        alpha: bool,
        animation: Option<u32>,
        quality: Option<u8>,
        boxes: &Boxes,
    ) -> Result<JxlWriter, MediaError> {
        // SAFETY: every pointer passed is either one libjxl just returned (checked
        // non-null) or a live local; the writer owns the encoder and the runner and
        // releases them in `Drop`.
        unsafe {
            let encoder = JxlEncoderCreate(ptr::null());
            if encoder.is_null() {
                return Err(MediaError::InvalidMedia(
                    "the JPEG XL encoder could not be made".into(),
                ));
            }
            let threads = JxlThreadParallelRunnerDefaultNumWorkerThreads();
            let runner = JxlThreadParallelRunnerCreate(ptr::null(), threads);
            let mut writer = JxlWriter {
                encoder,
                runner,
                settings: ptr::null_mut(),
                alpha,
                animated: animation.is_some(),
            };
            if !runner.is_null() {
                let run: JxlParallelRunner =
                    Some(crate::media::image::codec::sys::jxl_threads::JxlThreadParallelRunner);
                check(JxlEncoderSetParallelRunner(encoder, run, runner), "threads")?;
            }
            let has_boxes = boxes.exif.is_some() || boxes.xmp.is_some();
            if has_boxes {
                check(JxlEncoderUseContainer(encoder, 1), "container")?;
                check(JxlEncoderUseBoxes(encoder), "boxes")?;
            }
            let distance = quality.map_or(1.0, distance);
            let lossless = distance == 0.0;
            let mut info = std::mem::zeroed::<JxlBasicInfo>();
            JxlEncoderInitBasicInfo(&mut info);
            info.xsize = width;
            info.ysize = height;
            info.bits_per_sample = 8;
            info.exponent_bits_per_sample = 0;
            info.num_color_channels = 3;
            info.alpha_bits = if alpha { 8 } else { 0 };
            info.num_extra_channels = u32::from(alpha);
            info.uses_original_profile = i32::from(lossless);
            if let Some(loops) = animation {
                info.have_animation = 1;
                info.animation.tps_numerator = 1000;
                info.animation.tps_denominator = 1;
                info.animation.num_loops = loops;
            }
            check(JxlEncoderSetBasicInfo(encoder, &info), "basic info")?;
            let mut colour = std::mem::zeroed::<JxlColorEncoding>();
            JxlColorEncodingSetToSRGB(&mut colour, 0);
            check(JxlEncoderSetColorEncoding(encoder, &colour), "sRGB")?;
            if let Some(exif) = &boxes.exif {
                // The `Exif` box starts with the offset of the TIFF header: 0.
                let mut data = vec![0u8; 4];
                data.extend_from_slice(exif);
                let kind = b"Exif".as_ptr().cast();
                check(
                    JxlEncoderAddBox(encoder, kind, data.as_ptr(), data.len(), 0),
                    "Exif box",
                )?;
            }
            if let Some(xmp) = &boxes.xmp {
                let kind = b"xml ".as_ptr().cast();
                check(
                    JxlEncoderAddBox(encoder, kind, xmp.as_ptr(), xmp.len(), 0),
                    "XMP box",
                )?;
            }
            if has_boxes {
                JxlEncoderCloseBoxes(encoder);
            }
            let settings = JxlEncoderFrameSettingsCreate(encoder, ptr::null());
            if settings.is_null() {
                return Err(MediaError::InvalidMedia(
                    "the JPEG XL encoder's settings could not be made".into(),
                ));
            }
            writer.settings = settings;
            check(
                JxlEncoderFrameSettingsSetOption(settings, JXL_ENC_FRAME_SETTING_EFFORT, EFFORT),
                "effort",
            )?;
            if lossless {
                check(JxlEncoderSetFrameLossless(settings, 1), "lossless")?;
            } else {
                check(JxlEncoderSetFrameDistance(settings, distance), "distance")?;
            }
            Ok(writer)
        }
    }

    /// Adds a frame: 8-bit RGB or RGBA samples (as the writer was made), shown for
    /// `delay_ms` in an animation.
    pub fn add(&mut self, samples: &[u8], delay_ms: f64) -> Result<(), MediaError> {
        let format = JxlPixelFormat {
            num_channels: if self.alpha { 4 } else { 3 },
            data_type: JXL_TYPE_UINT8,
            endianness: JXL_NATIVE_ENDIAN,
            align: 0,
        };
        // SAFETY: live encoder and settings; `samples` outlives the call (libjxl
        // copies the frame before returning).
        unsafe {
            if self.animated {
                let mut header = std::mem::zeroed::<JxlFrameHeader>();
                JxlEncoderInitFrameHeader(&mut header);
                header.duration = delay_ms.round().clamp(0.0, f64::from(u32::MAX)) as u32;
                check(
                    JxlEncoderSetFrameHeader(self.settings, &header),
                    "frame header",
                )?;
            }
            check(
                JxlEncoderAddImageFrame(
                    self.settings,
                    &format,
                    samples.as_ptr().cast(),
                    samples.len(),
                ),
                "frame",
            )
        }
    }

    /// Closes the input and returns the file.
    pub fn finish(self) -> Result<Vec<u8>, MediaError> {
        let mut out = vec![0u8; 64 << 10];
        let mut written = 0usize;
        // SAFETY: live encoder; `next`/`avail` describe the unwritten end of `out`,
        // which is resized (and the pointer taken again) only between calls.
        unsafe {
            JxlEncoderCloseInput(self.encoder);
            loop {
                let mut next = out.as_mut_ptr().add(written);
                let mut avail = out.len() - written;
                let status = JxlEncoderProcessOutput(self.encoder, &mut next, &mut avail);
                written = out.len() - avail;
                if status == JXL_ENC_NEED_MORE_OUTPUT {
                    out.resize(out.len() * 2, 0);
                    continue;
                }
                check(status, "output")?;
                break;
            }
        }
        out.truncate(written);
        Ok(out)
    }
}

impl Drop for JxlWriter {
    fn drop(&mut self) {
        // SAFETY: both were made by libjxl in `new` and are released once, here; the
        // encoder (which uses the runner) first.
        unsafe {
            JxlEncoderDestroy(self.encoder);
            if !self.runner.is_null() {
                JxlThreadParallelRunnerDestroy(self.runner);
            }
        }
    }
}

/// A still picture (`Rgb8`/`Rgba8`; any other layout is widened) as a JPEG XL at
/// `quality`, with `boxes` beside it.
pub(crate) fn encode_at(
    image: &DynamicImage,
    quality: Option<u8>,
    boxes: &Boxes,
) -> Result<Vec<u8>, MediaError> {
    let size = (image.width(), image.height());
    let alpha = image.color().has_alpha();
    let mut writer = JxlWriter::new(size, alpha, None, quality, boxes)?;
    match image {
        DynamicImage::ImageRgb8(rgb) if !alpha => writer.add(rgb.as_raw(), 0.0)?,
        DynamicImage::ImageRgba8(rgba) if alpha => writer.add(rgba.as_raw(), 0.0)?,
        other if alpha => writer.add(other.to_rgba8().as_raw(), 0.0)?,
        other => writer.add(other.to_rgb8().as_raw(), 0.0)?,
    }
    writer.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quality_maps_to_the_distances_cjxl_uses() {
        assert_eq!(distance(100), 0.0);
        assert!((distance(90) - 1.0).abs() < 1e-5);
        assert!((distance(30) - 6.4).abs() < 1e-5);
        assert!(distance(10) > distance(29));
    }

    #[test]
    fn a_still_is_written_as_a_jpeg_xl_jxl_oxide_reads_back_at_its_size() {
        let image = DynamicImage::ImageRgb8(image::RgbImage::from_fn(40, 24, |x, y| {
            image::Rgb([(x * 6) as u8, (y * 10) as u8, 128])
        }));
        let bytes = encode_at(&image, Some(90), &Boxes::default()).unwrap();
        assert_eq!(&bytes[..2], &[0xFF, 0x0A]);
        let file = crate::media::image::codec::jxl::open(&bytes, 1 << 20, |_, _| {
            MediaError::InvalidMedia(String::new())
        })
        .unwrap();
        let back = file.decode().unwrap().into_rgb8();
        assert_eq!(back.dimensions(), (40, 24));
        let (a, b) = (image.to_rgb8(), back);
        let differences: Vec<u32> = a
            .pixels()
            .zip(b.pixels())
            .flat_map(|(p, q)| (0..3).map(move |i| u32::from(p[i].abs_diff(q[i]))))
            .collect();
        let mean = f64::from(differences.iter().sum::<u32>()) / differences.len() as f64;
        assert!(mean < 3.0, "mean channel difference {mean}");
    }
}
