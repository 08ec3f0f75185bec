//! Fetching an extra source against a real server on 127.0.0.1:0, a real SQLite
//! database and local storage.

use std::time::{Duration, SystemTime};

use axum::routing::get;
use axum::Router;
use image::{DynamicImage, Rgba, RgbaImage};
use sha2::Digest;
use tokio::net::TcpListener;

use super::*;
use crate::db::{unix_ms, UploadPart, UploadRow};
use crate::error_code::Code;
use crate::fetch::{FetchConfig, StallLimits};
use crate::media::testutil::{encode, media, media_with_limit, tempdir};

const PREFIX: &str = "http://media.test/v1/uploads/";

fn logo_png() -> Vec<u8> {
    let logo = RgbaImage::from_pixel(30, 20, Rgba([250, 10, 20, 128]));
    encode(DynamicImage::ImageRgba8(logo), image::ImageFormat::Png)
}

fn fetcher(allow_private: bool) -> Fetcher {
    Fetcher::new(FetchConfig {
        allow_private,
        max_bytes: 10_000,
        connect_timeout: Duration::from_secs(2),
        total_timeout: Duration::from_secs(5),
        max_redirects: 2,
        stall: StallLimits {
            first_byte_timeout: Duration::from_secs(5),
            min_bytes_per_sec: 0,
            min_speed_window: Duration::from_secs(1),
        },
    })
    .unwrap()
}

/// Serves `/logo.png`, `/big` (past the byte cap) and `/text` (not an image).
async fn server() -> String {
    let app = Router::new()
        .route("/logo.png", get(|| async { logo_png() }))
        .route("/big", get(|| async { vec![0u8; 50_000] }))
        .route("/text", get(|| async { "just some words, no picture" }));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

struct Fixture {
    dir: tempfile::TempDir,
    db: Db,
    storage: Storage,
    stopping: CancellationToken,
}

async fn fixture() -> Fixture {
    let dir = tempdir();
    let db = Db::open_sqlite(&dir.path().join("db.sqlite"))
        .await
        .unwrap();
    // Creating a token creates its organization, which uploads belong to.
    for org in ["acme", "someone-else"] {
        let token = format!("token-of-{org}-{}", uuid::Uuid::new_v4().simple());
        db.create_token(org, &token).await.unwrap();
    }
    std::fs::create_dir_all(dir.path().join("store")).unwrap();
    let url = format!("file://{}", dir.path().join("store").display());
    let public = Url::parse("http://media.test/").unwrap();
    let storage = Storage::open(&url, vec![7; 32], public, Duration::from_secs(60)).unwrap();
    Fixture {
        dir,
        db,
        storage,
        stopping: CancellationToken::new(),
    }
}

impl Fixture {
    fn access<'a>(&'a self, fetcher: &'a Fetcher, media: &'a Media) -> SourceAccess<'a> {
        SourceAccess {
            fetcher,
            db: &self.db,
            storage: &self.storage,
            media,
            uploads_prefix: PREFIX,
            min_free_disk_bytes: 0,
            stopping: &self.stopping,
        }
    }

    /// A complete upload of `org` holding `bytes`; its `src`.
    async fn upload(&self, org: &str, bytes: &[u8]) -> Url {
        let id = uuid::Uuid::new_v4().to_string();
        let now = unix_ms(SystemTime::now());
        let row = UploadRow {
            id: id.clone(),
            org_id: org.into(),
            created_at: now,
            expires_at: now + 3_600_000,
            length: Some(bytes.len() as i64),
            received: 0,
            sha256: None,
            metadata: None,
        };
        self.db.insert_upload(&row).await.unwrap();
        let key = crate::uploads::part_key(&id, 0);
        let file = self.dir.path().join(format!("part-{id}"));
        std::fs::write(&file, bytes).unwrap();
        self.storage.put_file(&key, &file).await.unwrap();
        let part = UploadPart {
            start: 0,
            length: bytes.len() as i64,
            object_key: key,
        };
        assert!(self.db.append_upload_part(&id, &part, now).await.unwrap());
        let length = bytes.len() as i64;
        assert!(self.db.complete_upload(&id, length, "00").await.unwrap());
        Url::parse(&format!("{PREFIX}{id}/content")).unwrap()
    }
}

const TAKES: &[MediaFormat] = &[MediaFormat::Png, MediaFormat::Jpeg, MediaFormat::Webp];

fn code_of(result: Result<SourceFile, JobError>) -> Code {
    result.expect_err("the fetch should fail").code
}

#[tokio::test]
async fn a_url_and_an_upload_come_back_as_sniffed_files_that_decode() {
    let (fx, base, fetch, media) = (fixture().await, server().await, fetcher(true), media());
    let access = fx.access(&fetch, &media);
    let src = Url::parse(&format!("{base}/logo.png")).unwrap();
    let dest = fx.dir.path().join("overlay-url");
    let fetched = fetch_extra_source(&access, "acme", &src, &dest, TAKES)
        .await
        .unwrap();
    let file = &fetched.file;
    assert_eq!(
        (file.format, file.path.as_path()),
        (MediaFormat::Png, dest.as_path())
    );
    let logo_sha256 = hex::encode(sha2::Sha256::digest(logo_png()));
    assert_eq!(fetched.sha256, logo_sha256, "the digest of the bytes");
    let picture = media.read_overlay(file).await.unwrap();
    assert_eq!(picture.dimensions(), (30, 20));
    assert_eq!(picture.get_pixel(5, 5).0, [250, 10, 20, 128], "alpha kept");

    let src = fx.upload("acme", &logo_png()).await;
    let dest = fx.dir.path().join("overlay-upload");
    let fetched = fetch_extra_source(&access, "acme", &src, &dest, TAKES)
        .await
        .unwrap();
    assert_eq!(fetched.file.format, MediaFormat::Png);
    assert_eq!(fetched.sha256, logo_sha256);
    assert_eq!(std::fs::read(&dest).unwrap(), logo_png());
}

#[tokio::test]
async fn an_extra_source_fails_with_the_codes_of_an_asset() {
    let (fx, base, fetch, media) = (fixture().await, server().await, fetcher(true), media());
    let access = fx.access(&fetch, &media);
    let dest = fx.dir.path().join("overlay");
    let at = |path: &str| Url::parse(&format!("{base}{path}")).unwrap();
    let fetched = fetch_extra_source(&access, "acme", &at("/big"), &dest, TAKES).await;
    assert_eq!(code_of(fetched), Code::SourceTooLarge);
    assert!(!dest.exists(), "no partial file is left");
    let fetched = fetch_extra_source(&access, "acme", &at("/text"), &dest, TAKES).await;
    assert_eq!(code_of(fetched), Code::UnsupportedInputFormat);
    let png_only = [MediaFormat::Jpeg];
    let fetched = fetch_extra_source(&access, "acme", &at("/logo.png"), &dest, &png_only).await;
    assert_eq!(code_of(fetched), Code::UnsupportedInputFormat);
    let fetched = fetch_extra_source(&access, "acme", &at("/missing"), &dest, TAKES).await;
    assert_eq!(code_of(fetched), Code::SourceHttpError);

    // The SSRF guard: a loopback address is refused when private sources are not allowed.
    let guarded = fetcher(false);
    let access_guarded = fx.access(&guarded, &media);
    let fetched = fetch_extra_source(&access_guarded, "acme", &at("/logo.png"), &dest, TAKES).await;
    assert_eq!(code_of(fetched), Code::SourceAddressForbidden);

    // Another organization's upload reads as gone; so does one too large for the cap.
    let src = fx.upload("acme", &logo_png()).await;
    let fetched = fetch_extra_source(&access, "someone-else", &src, &dest, TAKES).await;
    assert_eq!(code_of(fetched), Code::UploadNotFound);
    let big = fx.upload("acme", &vec![1u8; 20_000]).await;
    let fetched = fetch_extra_source(&access, "acme", &big, &dest, TAKES).await;
    assert_eq!(code_of(fetched), Code::SourceTooLarge);

    // The pixel limit holds when the picture is read.
    let fetched = fetch_extra_source(&access, "acme", &at("/logo.png"), &dest, TAKES)
        .await
        .unwrap();
    let small_limit = media_with_limit(100);
    let read = small_limit.read_overlay(&fetched.file).await;
    assert_eq!(read.unwrap_err().code(), Code::ImageTooLarge);
}
