//! The entry points of this crate's own parsers of hostile bytes, for the fuzz targets
//! in `fuzz/` (docs/SECURITY.md, "Fuzzing") — not an interface of the service. Each
//! calls a reader the way the service does, with the same limits checked in the same
//! order, and keeps nothing: a target fails only by a panic, an abort or a runaway
//! allocation.

use std::path::Path;

use crate::format::MediaFormat;
use crate::media::image::codec::{apng, bmp, gif, heif_boxes, jxl, svg};
use crate::media::image::exif;
use crate::media::limits::VideoLimits;
use crate::media::video::hls::{self, MediaPlaylist, Rates};
use crate::media::video::info::VideoInfo;
use crate::media::video::{mkv, mp4, probe};

/// The pixels a decoded picture may have here: the service's limit is larger, but a
/// small one keeps every run fast while still exercising the checks.
const MAX_PIXELS: u64 = 1 << 20;
/// The APNG frames composited per input.
const MAX_FRAMES: usize = 16;

/// The MP4/MOV header reader (`moov`: tracks, sample tables, `avcC` and its SPS), as
/// video edits, output descriptions and `video-scenes`' posters (the keyframes) call
/// it, on the file at `path`.
pub fn mp4(path: &Path) {
    if let Some(info) = mp4::read_info(path) {
        assert!(info.width > 0 && info.height > 0);
    }
    let _ = mp4::read_extent(path);
    let _ = mp4::keyframes(path);
}

/// The Matroska/WebM header and cluster reader, on the file at `path`.
pub fn matroska(path: &Path) {
    if let Some(extent) = mkv::read_extent(path) {
        assert!(extent.width > 0 && extent.height > 0);
    }
}

/// The GIF block scanner and the frame decoder every command reads GIFs with.
pub fn gif(bytes: &[u8]) {
    if let Ok(scan) = gif::scan(bytes) {
        assert!(scan.frames > 0 && scan.seconds() >= 0.0);
        assert!(scan.extent.0 >= scan.screen.0 && scan.extent.1 >= scan.screen.1);
    }
    let too_large = |_, _| crate::media::error::MediaError::InvalidMedia(String::new());
    let Ok(mut frames) = gif::frames::GifFrames::open(bytes, MAX_PIXELS, too_large) else {
        return;
    };
    let size = frames.size;
    for _ in 0..MAX_FRAMES {
        match frames.next_frame() {
            Some(Ok((frame, _))) => assert_eq!(frame.dimensions(), size),
            _ => break,
        }
    }
}

/// APNG detection and the frame compositor, under the animation path's limits.
pub fn apng(bytes: &[u8]) {
    if !apng::is_animated(bytes) {
        return;
    }
    let max_bytes = usize::try_from(MAX_PIXELS * 8 + (64 << 20)).unwrap_or(usize::MAX);
    let Ok(frames) = apng::ApngFrames::open(bytes, max_bytes) else {
        return;
    };
    let (width, height) = frames.dimensions();
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return;
    }
    for frame in frames.take(MAX_FRAMES) {
        let Ok(frame) = frame else { break };
        assert_eq!(frame.buffer().dimensions(), (width, height));
    }
}

/// The BMP header reader and decoder, the pixel limit checked in between as the
/// still-image path does.
pub fn bmp(bytes: &[u8]) {
    let Ok(file) = bmp::open(bytes) else {
        return;
    };
    let (width, height) = (file.width, file.height);
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return;
    }
    if let Ok(image) = file.decode() {
        assert_eq!((image.width(), image.height()), (width, height));
    }
}

/// The SVG sniffer and reader (XML, entities, styles, paths, text in the bundled font)
/// and the painter, at a size covering 64 × 64 as a thumbnail asks: a picture of the
/// size it promised, or an error.
pub fn svg(bytes: &[u8]) {
    let head = &bytes[..bytes.len().min(crate::media::sniff::HEAD_LEN)];
    let _ = crate::media::sniff::sniff(head);
    let Ok(file) = svg::open(bytes, MAX_PIXELS) else {
        return;
    };
    let size = file.drawn_size((64, 64), MAX_PIXELS);
    if let Ok(image) = file.draw((64, 64), MAX_PIXELS) {
        assert_eq!((image.width(), image.height()), size);
    }
}

/// The JPEG XL reader (jxl-oxide: container, header, ICC, frames, and each displayed
/// frame rendered in sRGB) under the pixel limit and its allocation meter: pictures
/// of the size the header promised, or an error.
pub fn jxl(bytes: &[u8]) {
    let head = &bytes[..bytes.len().min(crate::media::sniff::HEAD_LEN)];
    let _ = crate::media::sniff::sniff(head);
    let too_large = |_, _| crate::media::error::MediaError::InvalidMedia(String::new());
    let Ok(file) = jxl::open(bytes, MAX_PIXELS, too_large) else {
        return;
    };
    for index in 0..file.frames.min(MAX_FRAMES) {
        match file.frame(index) {
            Ok((image, _)) => {
                assert_eq!((image.width(), image.height()), (file.width, file.height))
            }
            Err(_) => return,
        }
    }
}

/// The HEIF box reader (`meta`, `pitm`, `iprp`/`ipco`/`ipma`, `irot`).
pub fn heif_boxes(bytes: &[u8]) {
    if let Some(turns) = heif_boxes::primary_quarter_turns(bytes) {
        assert!(turns < 4);
    }
}

/// The EXIF orientation reader, through each container that carries EXIF, and the
/// JPEG segment walker.
pub fn exif(bytes: &[u8]) {
    for format in [MediaFormat::Jpeg, MediaFormat::Webp, MediaFormat::Png] {
        let _ = exif::orientation(bytes, format);
    }
    for (_, body) in exif::jpeg_segments(bytes) {
        assert!(body.len() <= bytes.len());
    }
}

/// A line the PDF drawer printed, as the service reads it (`media::pdf::drawer`).
pub fn pdf_answer(bytes: &[u8]) {
    let _ = crate::media::pdf::drawer::parse_answer(&String::from_utf8_lossy(bytes));
}

/// ffprobe's JSON output as the service reads it: the typed probe, then what a video
/// source is taken to be (sizes, length, frame rate, rotation, pixel aspect) and its
/// check against the limits, and what an audio source is taken to be.
pub fn ffprobe_output(bytes: &[u8]) {
    let Ok(probe) = probe::parse(bytes) else {
        return;
    };
    if let Some(audio) = probe.audio() {
        let _ = audio.duration.or(probe.format.duration);
    }
    let Ok(info) = VideoInfo::from_probe(&probe) else {
        return;
    };
    assert!(info.width > 0 && info.height > 0);
    assert!(info.shown.0 > 0 && info.shown.1 > 0);
    if let Some(seconds) = info.duration {
        assert!(seconds.is_finite() && seconds > 0.0);
    }
    let limits = VideoLimits {
        max_seconds: 600.0,
        max_pixels: 7680 * 4320,
        max_frames: 100_000,
    };
    let _ = info.check(&limits);
}

/// The HLS playlists `video-to-hls` rewrites and reads back: a master playlist (the
/// bytes before the first NUL) and a media playlist (the rest). Its variants and
/// their attributes, the media playlist's segments and their rates (each segment's
/// size taken from its name's first bytes, so any size is reached), and the master
/// rewritten with them, which must name the same streams with the stated rates.
pub fn hls(bytes: &[u8]) {
    let (master, media) = match bytes.iter().position(|b| *b == 0) {
        Some(nul) => (&bytes[..nul], &bytes[nul + 1..]),
        None => (bytes, &[][..]),
    };
    let (master, media) = (
        String::from_utf8_lossy(master),
        String::from_utf8_lossy(media),
    );
    for variant in hls::variants(&master) {
        let _ = variant.resolution();
        let _ = hls::attribute(&variant.attributes, "CODECS");
    }
    let playlist = MediaPlaylist::parse(&media);
    let size_of = |name: &str| {
        let mut le = [0u8; 8];
        let first = &name.as_bytes()[..name.len().min(8)];
        le[..first.len()].copy_from_slice(first);
        u64::from_le_bytes(le)
    };
    let init = playlist.map.as_deref().map_or(0, size_of);
    let sizes: Vec<u64> = playlist.segments.iter().map(|s| size_of(&s.uri)).collect();
    let rates = Rates::of(&playlist, init, &sizes);
    assert!(rates.peak >= 1 && rates.average >= 1);
    let Ok(uris) = hls::stream_uris(&master) else {
        return;
    };
    let measured = vec![rates; uris.len()];
    let rewritten = hls::with_bandwidths(&master, &measured);
    let again = hls::stream_uris(&rewritten).expect("the rewritten master reads back");
    assert_eq!(again, uris);
    for line in rewritten.lines() {
        if let Some(attributes) = line.strip_prefix("#EXT-X-STREAM-INF:") {
            let peak = hls::attribute(attributes, "BANDWIDTH");
            assert_eq!(peak, Some(rates.peak.to_string().as_str()));
            let average = hls::attribute(attributes, "AVERAGE-BANDWIDTH");
            assert_eq!(average, Some(rates.average.to_string().as_str()));
        }
    }
}
