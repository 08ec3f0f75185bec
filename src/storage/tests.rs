use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use url::Url;

use super::store::PART_SIZE;

use object_store::memory::InMemory;

use super::*;

const KEY: &str = "edits/6f1c2b0e-8a3d-4c6e-9f27-1b2d3c4e5f60/3/0-1.webp";

fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(secs)
}

fn storage_at(public_url: &str) -> Storage {
    Storage::new(
        Arc::new(InMemory::new()),
        vec![42; 32],
        Url::parse(public_url).unwrap(),
        Duration::from_secs(3600),
    )
}

fn storage() -> Storage {
    storage_at("http://files.example.com")
}

/// The key (path after `/v1/files/`) and query of a download URL, as a handler sees them.
fn parts(download_url: &str, base_path: &str) -> (String, HashMap<String, String>) {
    let url = Url::parse(download_url).unwrap();
    let prefix = format!("{base_path}v1/files/");
    let key = url
        .path()
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{download_url} is not under {prefix}"))
        .to_owned();
    (key, url.query_pairs().into_owned().collect())
}

#[test]
fn a_download_url_verifies_until_it_expires() {
    let storage = storage();
    let url = storage.download_url(KEY, at(1_000_000));
    let (key, q) = parts(&url, "/");
    assert_eq!(key, KEY);
    assert_eq!(q["expires"], "1003600");
    assert_eq!(q["signature"].len(), 64);
    assert_eq!(
        storage.verify(&key, &q["expires"], &q["signature"], at(1_003_599)),
        Ok(())
    );
    assert_eq!(
        storage.verify(&key, &q["expires"], &q["signature"], at(1_003_600)),
        Err(SignatureError::Expired)
    );
}

#[test]
fn download_url_has_the_documented_shape() {
    let url = storage().download_url(KEY, at(1_000_000));
    assert!(
        url.starts_with(&format!(
            "http://files.example.com/v1/files/{KEY}?expires=1003600&signature="
        )),
        "{url}"
    );
}

#[test]
fn a_tampered_key_expiry_or_signature_is_invalid() {
    let storage = storage();
    let url = storage.download_url(KEY, at(1_000_000));
    let (key, q) = parts(&url, "/");
    let (expires, sig) = (q["expires"].as_str(), q["signature"].as_str());
    let now = at(1_000_001);

    let other_key = KEY.replace("0-1.webp", "0-2.webp");
    assert_eq!(
        storage.verify(&other_key, expires, sig, now),
        Err(SignatureError::Invalid)
    );
    assert_eq!(
        storage.verify(&key, "1003601", sig, now),
        Err(SignatureError::Invalid)
    );
    for bad_expires in [
        "+1003600",
        " 1003600",
        "01003600",
        "",
        "1003600x",
        "99999999999999999999999",
    ] {
        assert_eq!(
            storage.verify(&key, bad_expires, sig, now),
            Err(SignatureError::Invalid),
            "{bad_expires:?}"
        );
    }
    let mut flipped = sig.to_owned();
    let last = if flipped.ends_with('0') { "1" } else { "0" };
    flipped.replace_range(63.., last);
    for bad_sig in [
        flipped.as_str(),
        &sig[..62],
        "",
        "zz",
        format!("{sig}00").as_str(),
    ] {
        assert_eq!(
            storage.verify(&key, expires, bad_sig, now),
            Err(SignatureError::Invalid),
            "{bad_sig:?}"
        );
    }
}

#[test]
fn uppercase_hex_signatures_still_verify() {
    let storage = storage();
    let (key, q) = parts(&storage.download_url(KEY, at(10)), "/");
    let upper = q["signature"].to_uppercase();
    assert_eq!(storage.verify(&key, &q["expires"], &upper, at(11)), Ok(()));
}

#[test]
fn an_expired_link_with_a_bad_signature_is_invalid_not_expired() {
    let storage = storage();
    let (key, q) = parts(&storage.download_url(KEY, at(10)), "/");
    let zeros = "0".repeat(64);
    assert_eq!(
        storage.verify(&key, &q["expires"], &zeros, at(1_000_000)),
        Err(SignatureError::Invalid)
    );
}

#[test]
fn a_link_signed_with_another_key_is_invalid() {
    let ours = storage();
    let theirs = Storage::new(
        Arc::new(InMemory::new()),
        vec![7; 32],
        Url::parse("http://files.example.com").unwrap(),
        Duration::from_secs(3600),
    );
    let (key, q) = parts(&theirs.download_url(KEY, at(10)), "/");
    assert_eq!(
        ours.verify(&key, &q["expires"], &q["signature"], at(11)),
        Err(SignatureError::Invalid)
    );
}

#[test]
fn a_public_url_with_a_path_prefix_keeps_it() {
    for base in ["http://host:8080/base/", "http://host:8080/base"] {
        let storage = storage_at(base);
        let url = storage.download_url(KEY, at(10));
        assert!(
            url.starts_with(&format!("http://host:8080/base/v1/files/{KEY}?expires=")),
            "{base}: {url}"
        );
        let (key, q) = parts(&url, "/base/");
        assert_eq!(
            storage.verify(&key, &q["expires"], &q["signature"], at(11)),
            Ok(())
        );
    }
    let url = storage_at("http://host/").download_url(KEY, at(10));
    assert!(
        url.starts_with(&format!("http://host/v1/files/{KEY}?")),
        "{url}"
    );
}

/// Storage on the local filesystem under `dir/files`, as the service opens it.
fn local_storage(dir: &std::path::Path) -> Storage {
    Storage::open(
        &format!("file://{}", dir.join("files").display()),
        vec![1; 32],
        Url::parse("http://localhost:8080").unwrap(),
        Duration::from_secs(60),
    )
    .unwrap()
}

#[tokio::test]
async fn a_file_on_the_store_s_disk_is_linked_in_and_outlives_its_scratch_name() {
    use std::os::unix::fs::MetadataExt;

    let dir = tempfile::tempdir().unwrap();
    let storage = local_storage(dir.path());
    let scratch = dir.path().join("frame-000001.webp");
    std::fs::write(&scratch, b"first").unwrap();
    storage.put_file(KEY, &scratch).await.unwrap();
    let object = dir.path().join("files").join(KEY);
    let inode = |path: &std::path::Path| std::fs::metadata(path).unwrap().ino();
    assert_eq!(inode(&object), inode(&scratch), "linked, not copied");
    std::fs::remove_file(&scratch).unwrap();
    let got = storage.get(KEY, None).await.unwrap().bytes().await.unwrap();
    assert_eq!(got.as_ref(), b"first");

    // Another put of the key replaces the object, and leaves no staging name behind.
    let again = dir.path().join("again.webp");
    std::fs::write(&again, b"second").unwrap();
    storage.put_file(KEY, &again).await.unwrap();
    let got = storage.get(KEY, None).await.unwrap().bytes().await.unwrap();
    assert_eq!(got.as_ref(), b"second");
    let names: Vec<_> = std::fs::read_dir(object.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, [object.file_name().unwrap()]);
}

#[tokio::test]
async fn a_file_on_another_disk_is_copied_in() {
    use std::os::unix::fs::MetadataExt;

    // /dev/shm is a memory file system: another device than the temp dir's disk.
    let other_disk = tempfile::tempdir_in("/dev/shm").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let device = |path: &std::path::Path| std::fs::metadata(path).unwrap().dev();
    assert_ne!(device(other_disk.path()), device(dir.path()));
    let storage = local_storage(dir.path());
    let src = other_disk.path().join("out.webp");
    std::fs::write(&src, b"bytes from elsewhere").unwrap();
    storage.put_file(KEY, &src).await.unwrap();
    std::fs::remove_file(&src).unwrap();
    let got = storage.get(KEY, None).await.unwrap().bytes().await.unwrap();
    assert_eq!(got.as_ref(), b"bytes from elsewhere");
}

#[tokio::test]
async fn put_file_then_get_returns_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let storage = local_storage(dir.path());
    let src = dir.path().join("out.webp");
    let bytes: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&src, &bytes).unwrap();

    storage.put_file(KEY, &src).await.unwrap();

    let got = storage.get(KEY, None).await.unwrap().bytes().await.unwrap();
    assert_eq!(got.as_ref(), bytes.as_slice());
    assert!(dir.path().join("files").join(KEY).is_file());
}

#[tokio::test]
async fn a_file_larger_than_one_part_goes_up_in_parts_intact() {
    let dir = tempfile::tempdir().unwrap();
    let storage = local_storage(dir.path());
    let src = dir.path().join("big.mp4");
    let len = 2 * PART_SIZE + 12_345;
    let bytes: Vec<u8> = (0..len).map(|i| (i % 253) as u8).collect();
    std::fs::write(&src, &bytes).unwrap();

    storage.put_file("edits/x/0/big.mp4", &src).await.unwrap();

    let got = storage
        .get("edits/x/0/big.mp4", None)
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(got.len(), len);
    assert!(got.as_ref() == bytes.as_slice());
}

#[tokio::test]
async fn getting_a_missing_key_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let storage = Storage::new(
        local(dir.path()).unwrap(),
        vec![1; 32],
        Url::parse("http://localhost:8080").unwrap(),
        Duration::from_secs(60),
    );
    let err = storage.get("edits/nope/0/0.webp", None).await.unwrap_err();
    assert!(matches!(err, StorageError::NotFound), "{err:?}");
    assert_eq!(err.code(), "not_found");
    assert!(!err.is_retryable());
}

#[tokio::test]
async fn non_canonical_keys_are_refused() {
    let storage = storage();
    for key in ["", "/a", "a/", "a//b", "a/../b", "a/./b", ".."] {
        let err = storage.get(key, None).await.unwrap_err();
        assert!(
            matches!(err, StorageError::InvalidKey(_)),
            "{key:?}: {err:?}"
        );
    }
}

#[tokio::test]
async fn uploading_a_missing_local_file_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = storage()
        .put_file(KEY, &dir.path().join("missing"))
        .await
        .unwrap_err();
    assert!(matches!(err, StorageError::Io(_)), "{err:?}");
    assert_eq!(err.code(), "storage_error");
}

#[test]
fn debug_output_hides_the_signing_key() {
    let shown = format!("{:?}", storage());
    assert!(!shown.contains("42"), "{shown}");
}
