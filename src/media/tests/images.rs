//! The in-process image steps: resizing, formats, alpha, orientation, limits.

use crate::media::tests::*;

#[tokio::test]
async fn resize_image_scales_each_side_and_keeps_the_input_format() {
    let dir = tempdir();
    let media = media();
    let input = png(
        dir.path(),
        "in.png",
        DynamicImage::ImageRgb8(two_tone(33, 21)),
    );
    for (scale, expected) in [(0.5, (17, 11)), (2.0, (66, 42)), (1.0, (33, 21))] {
        let out = media
            .scale_image(&input, scale, None, dir.path())
            .await
            .unwrap();
        assert_eq!(out.format, MediaFormat::Png);
        assert_eq!(out.path.extension().unwrap(), "png");
        assert_eq!(media.detect(&out.path).await.unwrap(), MediaFormat::Png);
        assert_eq!(decode(&out.path).dimensions(), expected, "scale {scale}");
    }

    let jpeg = write_file(
        dir.path(),
        "in.jpeg",
        &solid_jpeg(640, 480, RED),
        MediaFormat::Jpeg,
    );
    let out = media
        .scale_image(&jpeg, 0.5, None, dir.path())
        .await
        .unwrap();
    assert_eq!(media.detect(&out.path).await.unwrap(), MediaFormat::Jpeg);
    let decoded = decode(&out.path);
    assert_eq!(decoded.dimensions(), (320, 240));
    assert_close(decoded.to_rgb8().get_pixel(160, 120).0, RED, 12);
    // Odd target from a JPEG: DCT scaling to 5/8 then an exact resize.
    let out = media
        .scale_image(&jpeg, 0.6, None, dir.path())
        .await
        .unwrap();
    assert_eq!(decode(&out.path).dimensions(), (384, 288));
}

#[tokio::test]
async fn resize_image_honours_the_requested_format() {
    let dir = tempdir();
    let media = media();
    let png_in = png(
        dir.path(),
        "in.png",
        DynamicImage::ImageRgb8(two_tone(40, 20)),
    );
    let jpeg_in = write_file(
        dir.path(),
        "in.jpeg",
        &solid_jpeg(40, 20, BLUE),
        MediaFormat::Jpeg,
    );
    let webp_bytes = encode(
        DynamicImage::ImageRgb8(two_tone(40, 20)),
        ::image::ImageFormat::WebP,
    );
    let webp_in = write_file(dir.path(), "in.webp", &webp_bytes, MediaFormat::Webp);

    for input in [&png_in, &jpeg_in, &webp_in] {
        for format in [ImageFormat::Jpeg, ImageFormat::Png, ImageFormat::Webp] {
            let out = media
                .scale_image(input, 0.5, Some(format), dir.path())
                .await
                .unwrap();
            assert_eq!(out.format, format.media_format());
            assert_eq!(
                media.detect(&out.path).await.unwrap(),
                format.media_format()
            );
            let decoded = decode(&out.path);
            assert_eq!(
                decoded.dimensions(),
                (20, 10),
                "{:?} -> {format:?}",
                input.format
            );
        }
    }
}

#[tokio::test]
async fn resize_image_keeps_alpha_in_png_and_webp_and_flattens_jpeg_onto_white() {
    let dir = tempdir();
    let media = media();
    let input = png(
        dir.path(),
        "in.png",
        DynamicImage::ImageRgba8(half_transparent(40, 20)),
    );

    for format in [ImageFormat::Png, ImageFormat::Webp] {
        let out = media
            .scale_image(&input, 0.5, Some(format), dir.path())
            .await
            .unwrap();
        let decoded = decode(&out.path);
        assert!(decoded.color().has_alpha(), "{format:?} lost its alpha");
        let rgba = decoded.to_rgba8();
        assert!(
            rgba.get_pixel(1, 5)[3] < 10,
            "{format:?}: {:?}",
            rgba.get_pixel(1, 5)
        );
        assert!(
            rgba.get_pixel(18, 5)[3] > 245,
            "{format:?}: {:?}",
            rgba.get_pixel(18, 5)
        );
    }

    let out = media
        .scale_image(&input, 0.5, Some(ImageFormat::Jpeg), dir.path())
        .await
        .unwrap();
    let rgb = decode(&out.path).to_rgb8();
    assert_close(rgb.get_pixel(1, 5).0, [255, 255, 255], 8);
    assert_close(rgb.get_pixel(18, 5).0, [20, 200, 20], 16);
}

#[tokio::test]
async fn resize_image_applies_exif_orientation_before_scaling() {
    let dir = tempdir();
    let media = media();
    let jpeg = jpeg_with_orientation(40, 20, 6);
    let input = write_file(dir.path(), "rotated.jpeg", &jpeg, MediaFormat::Jpeg);

    for (scale, format, expected) in [
        (1.0, ImageFormat::Jpeg, (20, 40)),
        (0.5, ImageFormat::Jpeg, (10, 20)),
        (2.0, ImageFormat::Png, (40, 80)),
    ] {
        let out = media
            .scale_image(&input, scale, Some(format), dir.path())
            .await
            .unwrap();
        let rgb = decode(&out.path).to_rgb8();
        assert_eq!(rgb.dimensions(), expected, "scale {scale}");
        // Orientation 6 turns the picture 90° clockwise: the stored left (red) half
        // ends up on top. Outputs carry no Exif, so this is what every viewer shows.
        let (w, h) = expected;
        assert_close(rgb.get_pixel(w / 2, h / 4).0, RED, 40);
        assert_close(rgb.get_pixel(w / 2, h * 3 / 4).0, BLUE, 40);
        assert!(jpeg_bytes_have_no_exif(&std::fs::read(&out.path).unwrap()));
    }

    let out = media.reencode_as_webp(&input, dir.path()).await.unwrap();
    assert_eq!(decode(&out.path).dimensions(), (20, 40));
}

#[tokio::test]
async fn exif_orientation_in_png_is_applied_too() {
    let dir = tempdir();
    let media = media();
    let bytes = png_with_orientation(40, 20, 6);
    let input = write_file(dir.path(), "rotated.png", &bytes, MediaFormat::Png);
    let out = media
        .scale_image(&input, 0.5, None, dir.path())
        .await
        .unwrap();
    let rgb = decode(&out.path).to_rgb8();
    assert_eq!(rgb.dimensions(), (10, 20));
    assert_close(rgb.get_pixel(5, 4).0, RED, 40);
    assert_close(rgb.get_pixel(5, 15).0, BLUE, 40);
}

#[tokio::test]
async fn animated_webp_is_read_as_its_first_frame() {
    let dir = tempdir();
    let media = media();
    let path = ffmpeg_clip(
        dir.path(),
        "anim.webp",
        &["-c:v", "libwebp_anim", "-loop", "0", "-f", "webp"],
    );
    let input = MediaFile {
        path,
        format: MediaFormat::Webp,
    };
    assert_eq!(media.detect(&input.path).await.unwrap(), MediaFormat::Webp);
    let out = media
        .scale_image(&input, 0.5, Some(ImageFormat::Png), dir.path())
        .await
        .unwrap();
    assert_eq!(decode(&out.path).dimensions(), (16, 16));
}

fn jpeg_bytes_have_no_exif(bytes: &[u8]) -> bool {
    !bytes.windows(6).any(|w| w == b"Exif\0\0")
}

#[tokio::test]
async fn image_limits_are_checked_from_the_header_before_decoding() {
    let dir = tempdir();
    let media = media();
    let huge = png_claiming_size(60_000, 60_000);
    let input = write_file(dir.path(), "huge.png", &huge, MediaFormat::Png);
    let err = media
        .scale_image(&input, 0.01, None, dir.path())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            MediaError::ImageTooLarge {
                width: 60_000,
                height: 60_000,
                limit: 100_000_000
            }
        ),
        "{err:?}"
    );
    assert_eq!(err.code(), "image_too_large");

    let small = media_with_limit(100);
    let jpeg = write_file(
        dir.path(),
        "a.jpeg",
        &solid_jpeg(20, 20, RED),
        MediaFormat::Jpeg,
    );
    let err = small.reencode_as_webp(&jpeg, dir.path()).await.unwrap_err();
    assert!(matches!(err, MediaError::ImageTooLarge { .. }), "{err:?}");
}

#[tokio::test]
async fn resize_image_refuses_outputs_too_small_or_too_large() {
    let dir = tempdir();
    let media = media_with_limit(10_000);
    let input = png(
        dir.path(),
        "in.png",
        DynamicImage::ImageRgb8(two_tone(40, 20)),
    );
    let err = media
        .scale_image(&input, 0.01, None, dir.path())
        .await
        .unwrap_err();
    assert!(matches!(err, MediaError::OutputTooSmall), "{err:?}");
    let err = media
        .scale_image(&input, 4.0, None, dir.path())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            MediaError::OutputTooLarge {
                width: 160,
                height: 80,
                limit: 10_000
            }
        ),
        "{err:?}"
    );
    // Nothing but the input is left behind.
    assert_eq!(files_in(dir.path()).len(), 1);
}

#[tokio::test]
async fn truncated_or_corrupt_images_are_invalid_media() {
    let dir = tempdir();
    let media = media();
    let still = DynamicImage::ImageRgb8(two_tone(64, 48));
    let cases = [
        (::image::ImageFormat::Jpeg, MediaFormat::Jpeg),
        (::image::ImageFormat::Png, MediaFormat::Png),
        (::image::ImageFormat::WebP, MediaFormat::Webp),
    ];
    for (encoder, format) in cases {
        let bytes = encode(still.clone(), encoder);
        for cut in [bytes.len() / 2, 20] {
            let input = write_file(dir.path(), "cut", &bytes[..cut], format);
            let err = media
                .scale_image(&input, 0.5, None, dir.path())
                .await
                .unwrap_err();
            assert!(
                matches!(err, MediaError::InvalidMedia(_)),
                "{format:?} cut at {cut}: {err:?}"
            );
            assert_eq!(err.code(), "invalid_media");
            assert!(!err.is_retryable());
        }
    }
}

#[tokio::test]
async fn image_steps_refuse_formats_that_are_not_images() {
    let dir = tempdir();
    let media = media();
    let ogg = write_file(dir.path(), "a.ogv", b"OggS\0\x02", MediaFormat::Ogv);
    let results = [
        media.scale_image(&ogg, 0.5, None, dir.path()).await,
        media.reencode_as_webp(&ogg, dir.path()).await,
    ];
    for result in results {
        match result {
            Err(MediaError::UnsupportedInputFormat { found, .. }) => {
                assert_eq!(found.as_deref(), Some("Ogg"))
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[tokio::test]
async fn image_to_webp_keeps_size_and_alpha() {
    let dir = tempdir();
    let media = media();
    let input = png(
        dir.path(),
        "in.png",
        DynamicImage::ImageRgba8(half_transparent(33, 21)),
    );
    let out = media.reencode_as_webp(&input, dir.path()).await.unwrap();
    assert_eq!(out.format, MediaFormat::Webp);
    assert_eq!(out.path.extension().unwrap(), "webp");
    assert_eq!(media.detect(&out.path).await.unwrap(), MediaFormat::Webp);
    let decoded = decode(&out.path);
    assert_eq!(decoded.dimensions(), (33, 21));
    assert!(decoded.to_rgba8().get_pixel(2, 10)[3] < 10);
}
