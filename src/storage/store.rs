//! The store: objects put, copied, read and deleted through `object_store`, and the
//! signed, expiring download URLs of their keys.

use crate::storage::error::SignatureError;
use crate::storage::error::StorageError;
use crate::storage::local::{self, local};
use crate::storage::paths::object_path;
use bytes::Bytes;
use hmac::{Hmac, Mac};
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;
use object_store::{GetResult, ObjectStore, WriteMultipart};
use sha2::Sha256;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::io::AsyncReadExt;
use url::Url;

/// Files up to this size are uploaded with one `put`; larger ones in parts of this size,
/// so memory stays bounded by a few parts whatever the file size.
pub(super) const PART_SIZE: usize = 8 * 1024 * 1024;

/// Parts uploaded concurrently at most.
pub(super) const PARTS_IN_FLIGHT: usize = 2;

/// Separates download signatures from any other use of the same key.
pub(super) const SIGNATURE_CONTEXT: &[u8] = b"mediaedit-download-v1\n";

pub(super) type HmacSha256 = Hmac<Sha256>;

/// The object store a `--storage-url` names: `file://DIR` (created if missing) or
/// `s3://BUCKET[/PREFIX]`, configured from the standard `AWS_*` environment variables
/// (endpoint, region, credentials, `AWS_ALLOW_HTTP`). With `AWS_ENDPOINT` set, requests
/// are path-style (`<endpoint>/<bucket>/<key>`), which S3-compatible servers expect.
pub fn from_url(url: &str) -> Result<Arc<dyn ObjectStore>, StorageError> {
    if let Some(root) = local::root_of(url) {
        return Ok(local(root)?);
    }
    if let Some(rest) = url.strip_prefix("s3://") {
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(StorageError::InvalidUrl(url.to_owned()));
        }
        let s3 = object_store::aws::AmazonS3Builder::from_env()
            .with_bucket_name(bucket)
            .with_virtual_hosted_style_request(false)
            .build()?;
        let prefix = prefix.trim_matches('/');
        if prefix.is_empty() {
            return Ok(Arc::new(s3));
        }
        let prefix =
            ObjectPath::parse(prefix).map_err(|_| StorageError::InvalidUrl(url.to_owned()))?;
        return Ok(Arc::new(object_store::prefix::PrefixStore::new(s3, prefix)));
    }
    Err(StorageError::InvalidUrl(url.to_owned()))
}

/// Stored outputs and the links that download them.
#[derive(Clone)]
pub struct Storage {
    pub(super) store: Arc<dyn ObjectStore>,
    /// The same store when it is this machine's disk: files on it are linked in.
    pub(super) local: Option<Arc<LocalFileSystem>>,
    /// That disk's directory.
    pub(super) local_root: Option<std::path::PathBuf>,
    pub(super) key: Arc<Vec<u8>>,
    pub(super) public_url: Url,
    pub(super) url_ttl: Duration,
}

impl std::fmt::Debug for Storage {
    // Hand-written so the signing key never reaches a log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Storage")
            .field("store", &self.store.to_string())
            .field("public_url", &self.public_url.as_str())
            .field("url_ttl", &self.url_ttl)
            .finish_non_exhaustive()
    }
}

impl Storage {
    /// `public_url` is the base of download URLs and may carry a path prefix
    /// (`http://host/base/`); `url_ttl` is how long a download URL stays valid.
    pub fn new(
        store: Arc<dyn ObjectStore>,
        signing_key: Vec<u8>,
        public_url: Url,
        url_ttl: Duration,
    ) -> Self {
        Storage {
            store,
            local: None,
            local_root: None,
            key: Arc::new(signing_key),
            public_url,
            url_ttl,
        }
    }

    /// The storage a `--storage-url` names (see [`from_url`]); on local files, a file
    /// already on that disk is stored by a hard link (`put_file`).
    pub fn open(
        url: &str,
        signing_key: Vec<u8>,
        public_url: Url,
        url_ttl: Duration,
    ) -> Result<Self, StorageError> {
        let local = local::root_of(url).map(local).transpose()?;
        let store = match &local {
            Some(files) => files.clone() as Arc<dyn ObjectStore>,
            None => from_url(url)?,
        };
        Ok(Storage {
            local,
            local_root: local::root_of(url).map(Into::into),
            ..Storage::new(store, signing_key, public_url, url_ttl)
        })
    }

    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// Uploads the local file at `path` under `key`, replacing any object there. Files
    /// larger than one part go up as a multipart upload, which is aborted on failure so
    /// that no partial object becomes visible. On local files, a file on the same disk
    /// is linked in, and must not be written to afterwards.
    pub async fn put_file(&self, key: &str, path: &Path) -> Result<(), StorageError> {
        let location = object_path(key)?;
        if let Some(files) = &self.local {
            if local::link_in(files, &location, path).await? {
                return Ok(());
            }
        }
        let mut file = tokio::fs::File::open(path).await?;
        let len = file.metadata().await?.len();
        if len <= PART_SIZE as u64 {
            let mut buf = Vec::with_capacity(len as usize);
            file.read_to_end(&mut buf).await?;
            self.store.put(&location, buf.into()).await?;
            return Ok(());
        }
        let upload = self.store.put_multipart(&location).await?;
        let mut writer = WriteMultipart::new_with_chunk_size(upload, PART_SIZE);
        match copy_in_parts(&mut file, &mut writer).await {
            Ok(()) => {
                writer.finish().await?;
                Ok(())
            }
            Err(err) => {
                // The copy error is the one worth reporting; a failed abort only leaves
                // parts the store cleans up or a later put replaces.
                let _ = writer.abort().await;
                Err(err)
            }
        }
    }

    /// Copies the object under `from` to `to`, inside the store (a hard link on a local
    /// disk, `CopyObject` on S3): two independent objects, so removing one never
    /// touches the other. `Err(NotFound)` when `from` is gone.
    pub async fn copy(&self, from: &str, to: &str) -> Result<(), StorageError> {
        let (from, to) = (object_path(from)?, object_path(to)?);
        Ok(self.store.copy(&from, &to).await?)
    }

    /// The object under `key`, whole or only `range` (bytes, end exclusive); streamed.
    /// `Err(NotFound)` when there is none.
    pub async fn get(
        &self,
        key: &str,
        range: Option<std::ops::Range<u64>>,
    ) -> Result<GetResult, StorageError> {
        let location = object_path(key)?;
        let options = object_store::GetOptions {
            range: range.map(object_store::GetRange::Bounded),
            ..Default::default()
        };
        Ok(self.store.get_opts(&location, options).await?)
    }

    /// The size, time and ETag of the object under `key`. `Err(NotFound)` when there is none.
    pub async fn head(&self, key: &str) -> Result<object_store::ObjectMeta, StorageError> {
        let location = object_path(key)?;
        Ok(self.store.head(&location).await?)
    }

    /// A URL that downloads `key` without credentials until `now + url_ttl`:
    /// `<public_url>/v1/files/<key>?expires=<unix secs>&signature=<hex>`.
    pub fn download_url(&self, key: &str, now: SystemTime) -> String {
        self.download_url_until(key, now + self.url_ttl)
    }

    /// A URL that downloads `key` without credentials until `expires` (to the
    /// second): the names inside a served playlist expire with the playlist's link.
    pub fn download_url_until(&self, key: &str, expires: SystemTime) -> String {
        let expires = unix_secs(expires).to_string();
        let signature = hex::encode(self.mac(key, &expires).finalize().into_bytes());
        let mut url = self.public_url.clone();
        url.set_query(None);
        url.set_fragment(None);
        match url.path_segments_mut() {
            Ok(mut segments) => {
                segments
                    .pop_if_empty()
                    .extend(["v1", "files"])
                    .extend(key.split('/'));
            }
            // Only URLs like `mailto:` cannot be a base; config accepts http(s) only,
            // but fall back to plain concatenation rather than panic.
            Err(()) => {
                let base = self.public_url.as_str().trim_end_matches('/');
                return format!("{base}/v1/files/{key}?expires={expires}&signature={signature}");
            }
        }
        url.query_pairs_mut()
            .append_pair("expires", &expires)
            .append_pair("signature", &signature);
        url.into()
    }

    /// Checks a download URL's `expires` and `signature` for `key`.
    ///
    /// `Err(Invalid)` for anything malformed or any mismatch; `Err(Expired)` only for a
    /// genuine signature whose time has passed, so expiry cannot be probed without one.
    /// The comparison is constant-time.
    pub fn verify(
        &self,
        key: &str,
        expires: &str,
        signature: &str,
        now: SystemTime,
    ) -> Result<(), SignatureError> {
        // Digits only, so "+5" or " 5" cannot pose as the signed "5".
        if expires.is_empty() || expires.len() > 20 || !expires.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(SignatureError::Invalid);
        }
        let signature = hex::decode(signature).map_err(|_| SignatureError::Invalid)?;
        self.mac(key, expires)
            .verify_slice(&signature)
            .map_err(|_| SignatureError::Invalid)?;
        let expires: u64 = expires.parse().map_err(|_| SignatureError::Invalid)?;
        if unix_secs(now) >= expires {
            return Err(SignatureError::Expired);
        }
        Ok(())
    }

    /// The MAC over `key` and `expires`. `expires` is digits only and comes last, so the
    /// newline between them splits the message one way only.
    pub(super) fn mac(&self, key: &str, expires: &str) -> HmacSha256 {
        let mut mac =
            HmacSha256::new_from_slice(&self.key).expect("HMAC accepts keys of any length");
        mac.update(SIGNATURE_CONTEXT);
        mac.update(key.as_bytes());
        mac.update(b"\n");
        mac.update(expires.as_bytes());
        mac
    }
}

/// Feeds `file` to `writer` one part at a time, waiting for an upload slot before
/// reading the next part so memory stays bounded.
pub(super) async fn copy_in_parts(
    file: &mut tokio::fs::File,
    writer: &mut WriteMultipart,
) -> Result<(), StorageError> {
    loop {
        let mut part = Vec::with_capacity(PART_SIZE);
        let n = file.take(PART_SIZE as u64).read_to_end(&mut part).await?;
        if n == 0 {
            return Ok(());
        }
        writer.wait_for_capacity(PARTS_IN_FLIGHT).await?;
        writer.put(Bytes::from(part));
        if n < PART_SIZE {
            return Ok(());
        }
    }
}

pub(super) fn unix_secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs()
}

impl Storage {
    /// The file that holds the object under `key` when the store is this machine's
    /// disk, so it can be read in place (never written: objects are immutable).
    /// `None` on S3.
    pub fn local_path(&self, key: &str) -> Option<std::path::PathBuf> {
        let files = self.local.as_ref()?;
        files.path_to_filesystem(&object_path(key).ok()?).ok()
    }

    /// The directory whose disk holds stored objects, when that is this machine's.
    pub fn local_root(&self) -> Option<&Path> {
        self.local_root.as_deref()
    }
}
