//! Image headers, pixel limits, EXIF orientation and decoding.
//!
//! Decoding is split in two so that limits are enforced from the header alone:
//! [`open`] reads only the header and refuses an image past the pixel limit before a
//! single pixel buffer is allocated; [`Opened::decode`] then decodes, for JPEG already
//! shrunk in the DCT domain towards the size the caller needs.

use image::metadata::Orientation;
use image::{DynamicImage, ImageDecoder, ImageError};

use self::headers::{png_methods_are_standard, png_size, webp_size};
use self::image_crate::{image_crate_format, limits, to_rgb_or_rgba, undecodable};
use self::jpeg::decode_jpeg;
pub(crate) use self::jpeg::shrink_factor;
use crate::format::MediaFormat;
use crate::media::error::MediaError;
use crate::media::image::codec::jpeg::{JpegDecoder, JpegHeader};
use crate::media::image::exif;

mod sides;
use sides::to_u32;

/// What the header says, before any pixel is decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    /// Stored width, before orientation.
    pub width: u32,
    /// Stored height, before orientation.
    pub height: u32,
    /// How the stored pixels must be turned to show the picture upright.
    pub orientation: Orientation,
}

impl Header {
    /// Size of the picture once the orientation is applied.
    pub fn upright_size(&self) -> (u32, u32) {
        if swaps_sides(self.orientation) {
            (self.height, self.width)
        } else {
            (self.width, self.height)
        }
    }
}

/// Whether applying `orientation` exchanges width and height.
pub(crate) fn swaps_sides(orientation: Orientation) -> bool {
    matches!(
        orientation,
        Orientation::Rotate90
            | Orientation::Rotate270
            | Orientation::Rotate90FlipH
            | Orientation::Rotate270FlipH
    )
}

/// An image whose header has been read and checked against the pixel limit.
pub(crate) struct Opened<'a> {
    format: MediaFormat,
    header: Header,
    source: Source<'a>,
    max_pixels: u64,
}

enum Source<'a> {
    /// libjpeg-turbo: DCT-domain scaling makes large downscales several times cheaper.
    Jpeg(&'a [u8], JpegDecoder, JpegHeader),
    /// The `image` crate: PNG, WebP, BMP, and the JPEG colour spaces libjpeg-turbo
    /// cannot turn into RGB (CMYK, YCCK).
    Image(Box<dyn ImageDecoder + 'a>),
    /// libtiff: every TIFF Pillow reads (the `image` crate's TIFF decoder misses a third
    /// of them and reads layouts Pillow refuses).
    Tiff(crate::media::image::codec::tiff::TiffFile<'a>),
    /// libheif: HEIC and AVIF, already upright.
    Heif(crate::media::image::codec::heif::HeifFile<'a>),
    /// Our own reader, which reads BMP as Pillow does.
    Bmp(crate::media::image::codec::bmp::BmpFile<'a>),
    /// The GIF decoder every command uses (`gif::frames`): its first frame.
    Gif(crate::media::image::codec::gif::frames::GifFrames<'a>),
    /// jxl-oxide: JPEG XL, its first frame, already upright.
    Jxl(crate::media::image::codec::jxl::JxlFile),
    /// resvg: drawn at the size asked for, not decoded at one of its own.
    Svg(crate::media::image::codec::svg::SvgFile),
}

/// Runs untrusted image bytes through the whole in-process path of the image steps —
/// header, pixel limit, EXIF orientation, decode — and returns the upright size.
/// Public so fuzz targets can drive it; the steps themselves use [`open`].
pub fn inspect_image(
    bytes: &[u8],
    format: MediaFormat,
    max_pixels: u64,
) -> Result<(u32, u32), MediaError> {
    let opened = open(bytes, format, max_pixels)?;
    let size = opened.header().upright_size();
    opened.decode(1, 1)?;
    Ok(size)
}

/// Reads the header of `bytes` and checks it against `max_pixels`.
///
/// `ImageTooLarge` past the limit, `InvalidMedia` when the header cannot be parsed.
pub(crate) fn open(
    bytes: &[u8],
    format: MediaFormat,
    max_pixels: u64,
) -> Result<Opened<'_>, MediaError> {
    if matches!(format, MediaFormat::Heif | MediaFormat::Avif) {
        let file = crate::media::image::codec::heif::open(bytes, format)?;
        let (width, height) = (file.width, file.height);
        let upright = Orientation::NoTransforms;
        return Opened::checked(
            format,
            (width, height, upright),
            Source::Heif(file),
            max_pixels,
        );
    }
    if format == MediaFormat::Jxl {
        let too_large = |width, height| MediaError::ImageTooLarge {
            width,
            height,
            limit: max_pixels,
        };
        let file = crate::media::image::codec::jxl::open(bytes, max_pixels, too_large)?;
        let size = (file.width, file.height, Orientation::NoTransforms);
        return Opened::checked(format, size, Source::Jxl(file), max_pixels);
    }
    if format == MediaFormat::Svg {
        let file = crate::media::image::codec::svg::open(bytes, max_pixels)?;
        let size = (file.width, file.height, Orientation::NoTransforms);
        return Opened::checked(format, size, Source::Svg(file), max_pixels);
    }
    if format == MediaFormat::Bmp {
        let file = crate::media::image::codec::bmp::open(bytes)?;
        let size = (file.width, file.height, Orientation::NoTransforms);
        return Opened::checked(format, size, Source::Bmp(file), max_pixels);
    }
    if format == MediaFormat::Gif {
        let too_large = |width: u32, height: u32| MediaError::ImageTooLarge {
            width: width.into(),
            height: height.into(),
            limit: max_pixels,
        };
        let frames =
            crate::media::image::codec::gif::frames::GifFrames::open(bytes, max_pixels, too_large)?;
        let (width, height) = frames.size;
        let size = (width, height, Orientation::NoTransforms);
        return Opened::checked(format, size, Source::Gif(frames), max_pixels);
    }
    if format == MediaFormat::Tiff {
        let file = crate::media::image::codec::tiff::open(bytes)?;
        let orientation = Orientation::from_exif(file.orientation.clamp(1, 8) as u8)
            .unwrap_or(Orientation::NoTransforms);
        let (width, height) = (file.width, file.height);
        return Opened::checked(
            format,
            (width, height, orientation),
            Source::Tiff(file),
            max_pixels,
        );
    }
    if format == MediaFormat::Jpeg {
        let mut decoder = JpegDecoder::new()?;
        let header = decoder.header(bytes)?;
        if !header.is_cmyk {
            let (width, height) = (to_u32(header.width)?, to_u32(header.height)?);
            check_pixels(width, height, max_pixels)?;
            let orientation = exif::orientation(bytes, format);
            return Ok(Opened {
                format,
                header: Header {
                    width,
                    height,
                    orientation,
                },
                source: Source::Jpeg(bytes, decoder, header),
                max_pixels,
            });
        }
    }

    // The PNG and WebP decoders read on past the size before they report it; a file
    // that claims a huge size and then ends would come out as "corrupt" rather than
    // "too large", so the size is read from the first chunk here.
    let claimed = match format {
        MediaFormat::Png => png_size(bytes),
        MediaFormat::Webp => webp_size(bytes),
        _ => None,
    };
    if let Some((width, height)) = claimed {
        check_pixels(width, height, max_pixels)?;
    }
    if format == MediaFormat::Png && !png_methods_are_standard(bytes) {
        // libpng (and so browsers and Pillow) refuse these; the png crate reads on.
        return Err(MediaError::InvalidMedia(
            "the PNG declares a compression, filter or interlace method no decoder knows".into(),
        ));
    }
    let decoder_format = image_crate_format(format)
        .ok_or_else(|| MediaError::unsupported(format, crate::format::STILL_IMAGES))?;
    let decoder = decode_guarded(format, || {
        mediaedit_pixels::image_decoder(bytes, decoder_format, limits(max_pixels))
    })?
    .map_err(|e| undecodable(format, e))?;
    let (width, height) = decoder.dimensions();
    check_pixels(width, height, max_pixels)?;
    let orientation = exif::orientation(bytes, format);
    Ok(Opened {
        format,
        header: Header {
            width,
            height,
            orientation,
        },
        source: Source::Image(decoder),
        max_pixels,
    })
}

impl<'a> Opened<'a> {
    /// An image of `width` × `height` stored turned by `orientation`, once its size is
    /// checked against `max_pixels`.
    fn checked(
        format: MediaFormat,
        (width, height, orientation): (u32, u32, Orientation),
        source: Source<'a>,
        max_pixels: u64,
    ) -> Result<Opened<'a>, MediaError> {
        check_pixels(width, height, max_pixels)?;
        let header = Header {
            width,
            height,
            orientation,
        };
        Ok(Opened {
            format,
            header,
            source,
            max_pixels,
        })
    }

    pub fn header(&self) -> Header {
        self.header
    }

    /// Bytes a pixel takes while [`Opened::decode`] decodes it, at most: what the
    /// decoder makes (a 16-bit picture, say) and, when that is not 8-bit RGB or RGBA,
    /// the 8-bit copy it is turned into. 8 where the header does not say.
    pub fn decoding_bytes_per_pixel(&self) -> u64 {
        match &self.source {
            Source::Jpeg(..) | Source::Gif(_) | Source::Bmp(_) | Source::Svg(_) => 4,
            Source::Image(decoder) => match u64::from(decoder.color_type().bytes_per_pixel()) {
                small @ 0..=4 => small.max(3) + 4 * u64::from(small < 3),
                large => large + 4,
            },
            Source::Tiff(_) | Source::Heif(_) => 8,
            Source::Jxl(file) => file.decoding_bytes_per_pixel(),
        }
    }

    /// The stored size [`Opened::decode`] makes for these minimums: a JPEG's shrunk
    /// size, an SVG drawn to cover them, any other picture's own.
    pub fn decoded_size(&self, min_width: u32, min_height: u32) -> (u32, u32) {
        let (width, height) = (self.header.width, self.header.height);
        match &self.source {
            Source::Jpeg(_, _, header) if !header.is_lossless => {
                let factor = shrink_factor(width as usize, height as usize, min_width, min_height);
                (
                    factor.scale(width as usize) as u32,
                    factor.scale(height as usize) as u32,
                )
            }
            Source::Svg(file) => file.drawn_size((min_width, min_height), self.max_pixels),
            _ => (width, height),
        }
    }

    /// Decodes the stored (not yet oriented) pixels as `Rgb8`, or `Rgba8` when the
    /// image has an alpha channel.
    ///
    /// A JPEG is shrunk while decoding to the smallest size still at least
    /// `min_width` x `min_height`, so that the final resize has full detail to work from.
    ///
    /// An embedded ICC profile is honoured: the pixels come out in sRGB.
    pub fn decode(self, min_width: u32, min_height: u32) -> Result<DynamicImage, MediaError> {
        let (width, height) = (self.header.width, self.header.height);
        let (mut image, icc) = match self.source {
            Source::Jpeg(bytes, decoder, header) => (
                decode_jpeg(bytes, decoder, header, min_width, min_height)?,
                crate::media::image::colour::jpeg_icc(bytes),
            ),
            Source::Tiff(file) => {
                let icc = file.icc_profile();
                (decode_guarded(self.format, || file.decode())??, icc)
            }
            Source::Heif(file) => {
                let icc = file.icc_profile();
                (file.decode()?, icc)
            }
            Source::Bmp(file) => (file.decode()?, None),
            Source::Jxl(file) => (decode_guarded(self.format, || file.decode())??, None),
            Source::Svg(file) => (file.draw((min_width, min_height), self.max_pixels)?, None),
            Source::Gif(mut frames) => {
                let first = frames
                    .next_frame()
                    .ok_or_else(|| MediaError::InvalidMedia("the GIF has no frame".into()))??;
                (DynamicImage::ImageRgba8(first.0), None)
            }
            Source::Image(mut decoder) => {
                let icc = decoder.icc_profile().ok().flatten();
                let image = decode_guarded(self.format, || DynamicImage::from_decoder(decoder))?;
                let image = image.map_err(|e| match e {
                    ImageError::Limits(_) => MediaError::ImageTooLarge {
                        width: width.into(),
                        height: height.into(),
                        limit: self.max_pixels,
                    },
                    e => undecodable(self.format, e),
                })?;
                (to_rgb_or_rgba(image), icc)
            }
        };
        if let Some(icc) = icc {
            crate::media::image::colour::to_srgb(&mut image, &icc);
        }
        Ok(image)
    }
}

/// Runs a decoder, turning a panic on a malformed file (the `image` crate's decoders
/// assert on some layouts) into `InvalidMedia`: damaged input is the file's fault, not
/// a bug of ours to crash an edit over.
fn decode_guarded<T>(format: MediaFormat, decode: impl FnOnce() -> T) -> Result<T, MediaError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(decode)).map_err(|_| {
        tracing::debug!(format = format.name(), "an image decoder panicked");
        MediaError::InvalidMedia(format!(
            "the {} data is damaged and no decoder can read it",
            format.name()
        ))
    })
}

/// `ImageTooLarge` when `width * height` exceeds `max_pixels`.
pub(crate) fn check_pixels(width: u32, height: u32, max_pixels: u64) -> Result<(), MediaError> {
    if u64::from(width) * u64::from(height) > max_pixels {
        return Err(MediaError::ImageTooLarge {
            width: width.into(),
            height: height.into(),
            limit: max_pixels,
        });
    }
    Ok(())
}

mod headers;
mod image_crate;
mod jpeg;
#[cfg(test)]
mod tests;
