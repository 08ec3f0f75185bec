//! The one registry of error codes. Every code the service emits — in an API error's
//! `errors[].code` or a failed edit's `error.code` — is a [`Code`] here, with its wire
//! string, its title, the HTTP status it is answered with (for request errors) and
//! whether a job failing with it is retried by default. No code is a string literal
//! at a call site; a test keeps this list and `docs/API.md` in step.

/// Defines [`Code`] from its rows: variant, wire string, title, HTTP status (request
/// errors) and retried by default (edit failures).
macro_rules! codes {
    ($($variant:ident = $code:literal, $title:literal, $status:expr, $retried:expr;)*) => {
        /// A stable error code (see the module docs).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Code {
            $($variant),*
        }

        impl Code {
            /// Every code, in the order of the registry.
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            /// The snake_case string on the wire.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $code),*
                }
            }

            /// A short, fixed title.
            pub fn title(self) -> &'static str {
                match self {
                    $(Code::$variant => $title),*
                }
            }

            /// The HTTP status of a request error with this code; `None` for codes only
            /// an edit fails with.
            pub fn status(self) -> Option<u16> {
                match self {
                    $(Code::$variant => $status),*
                }
            }

            /// Whether an edit failing with this code is tried again by default (the
            /// error that carries it may decide otherwise, e.g. a 4xx source).
            pub fn retried(self) -> bool {
                match self {
                    $(Code::$variant => $retried),*
                }
            }
        }
    };
}

codes! {
    // Request errors.
    MalformedJson = "malformed_json", "Malformed JSON", Some(400), false;
    BadRequest = "bad_request", "Bad request", Some(400), false;
    Unauthorized = "unauthorized", "Unauthorized", Some(401), false;
    InvalidSignature = "invalid_signature", "Forbidden", Some(403), false;
    LinkExpired = "link_expired", "Forbidden", Some(403), false;
    NotFound = "not_found", "Not found", Some(404), false;
    MethodNotAllowed = "method_not_allowed", "Method not allowed", Some(405), false;
    PayloadTooLarge = "payload_too_large", "Payload too large", Some(413), false;
    RangeNotSatisfiable = "range_not_satisfiable", "Range not satisfiable", Some(416), false;
    UnsupportedMediaType = "unsupported_media_type", "Unsupported media type", Some(415), false;
    InvalidType = "invalid_type", "Invalid type", Some(422), false;
    MissingField = "missing_field", "Missing field", Some(422), false;
    UnknownField = "unknown_field", "Unknown field", Some(422), false;
    EmptyArray = "empty_array", "Empty array", Some(422), false;
    TooManyItems = "too_many_items", "Too many items", Some(422), false;
    InvalidAssetType = "invalid_asset_type", "Invalid asset type", Some(422), false;
    InvalidSubtitles = "invalid_subtitles", "Invalid subtitles", Some(422), false;
    InvalidUrl = "invalid_url", "Invalid URL", Some(422), false;
    SourceAddressForbidden = "source_address_forbidden", "Source address forbidden", Some(422), false;
    UnknownCommand = "unknown_command", "Unknown command", Some(422), false;
    IncompatibleCommands = "incompatible_commands", "Incompatible commands", Some(422), false;
    TooManyOutputs = "too_many_outputs", "Too many outputs", Some(422), false;
    UnknownOption = "unknown_option", "Unknown option", Some(422), false;
    UnusedOption = "unused_option", "Unused option", Some(422), false;
    OptionOutOfRange = "option_out_of_range", "Option out of range", Some(422), false;
    InvalidOptionValue = "invalid_option_value", "Invalid option value", Some(422), false;
    InvalidOptionCombination = "invalid_option_combination", "Invalid option combination", Some(422), false;
    UnknownPreset = "unknown_preset", "Unknown preset", Some(422), false;
    ConflictingFields = "conflicting_fields", "Conflicting fields", Some(422), false;
    InvalidPresetName = "invalid_preset_name", "Invalid preset name", Some(422), false;
    ValueOutOfRange = "value_out_of_range", "Value out of range", Some(422), false;
    InvalidQuery = "invalid_query", "Invalid query parameter", Some(422), false;
    InvalidUploadHeader = "invalid_upload_header", "Invalid upload header", Some(400), false;
    UploadTooLarge = "upload_too_large", "Upload too large", Some(413), false;
    UploadQuotaExceeded = "upload_quota_exceeded", "Upload quota exceeded", Some(413), false;
    TooManyOpenUploads = "too_many_open_uploads", "Too many open uploads", Some(429), false;
    InsufficientStorage = "insufficient_storage", "Insufficient storage", Some(507), false;
    UploadOffsetMismatch = "upload_offset_mismatch", "Upload offset mismatch", Some(409), false;
    UploadNotFound = "upload_not_found", "Upload not found", Some(422), false;
    TusVersionUnsupported = "tus_version_unsupported", "Tus version unsupported", Some(412), false;
    EditFinished = "edit_finished", "Edit already finished", Some(409), false;
    EditNotRetryable = "edit_not_retryable", "Edit not retryable", Some(409), false;
    InvalidIdempotencyKey = "invalid_idempotency_key", "Invalid idempotency key", Some(400), false;
    IdempotencyKeyReused = "idempotency_key_reused", "Idempotency key reused", Some(422), false;
    IdempotencyKeyInUse = "idempotency_key_in_use", "Idempotency key in use", Some(409), false;
    RateLimited = "rate_limited", "Too many requests", Some(429), false;
    TooManyAuthFailures = "too_many_auth_failures", "Too many failed authentications", Some(429), false;
    TooManyRequests = "too_many_requests", "Too many requests in flight", Some(429), false;
    RequestTooSlow = "request_too_slow", "Request too slow", Some(408), false;
    InvalidTransform = "invalid_transform", "Invalid transform", Some(422), false;
    RenderTimeout = "render_timeout", "Render timed out", Some(504), true;
    RenderExpired = "render_expired", "Render URL expired", Some(410), false;
    EditNotDone = "edit_not_done", "Edit not done", Some(409), false;
    InternalError = "internal_error", "Internal error", Some(500), false;
    // Edit failures (`attributes.error.code`).
    SourceHttpError = "source_http_error", "Source answered an error", None, false;
    SourceUnreachable = "source_unreachable", "Source unreachable", None, true;
    SourceTimeout = "source_timeout", "Source timed out", None, true;
    SourceTooLarge = "source_too_large", "Source too large", None, false;
    SourceTooManyRedirects = "source_too_many_redirects", "Too many redirects", None, false;
    InvalidSourceUrl = "invalid_source_url", "Invalid source URL", None, false;
    UnsupportedInputFormat = "unsupported_input_format", "Unsupported input format", None, false;
    InvalidMedia = "invalid_media", "Invalid media", None, false;
    ImageTooLarge = "image_too_large", "Image too large", None, false;
    OutputTooLarge = "output_too_large", "Output too large", None, false;
    OutputTooSmall = "output_too_small", "Output too small", None, false;
    CropOutsideImage = "crop_outside_image", "Crop outside image", None, false;
    InvalidParameter = "invalid_parameter", "Invalid parameter", None, false;
    ProcessingFailed = "processing_failed", "Processing failed", None, false;
    MemoryLimitExceeded = "memory_limit_exceeded", "Memory limit exceeded", None, false;
    ProcessingTimeout = "processing_timeout", "Processing timed out", None, false;
    VideoTooLong = "video_too_long", "Video too long", None, false;
    VideoTooLarge = "video_too_large", "Video too large", None, false;
    TooManyFrames = "too_many_frames", "Too many frames", None, false;
    TooMuchWork = "too_much_work", "Too much work", None, false;
    NoAudioTrack = "no_audio_track", "No audio track", None, false;
    StorageError = "storage_error", "Storage error", None, true;
    InvalidStorageKey = "invalid_storage_key", "Invalid storage key", None, false;
    AttemptsExhausted = "attempts_exhausted", "Attempts exhausted", None, false;
    JobTimeout = "job_timeout", "Job timed out", None, false;
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Lets tests and callers compare with the wire string.
impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// The codes `docs/API.md` lists in its two error tables (the first backticked
    /// snake_case words of each row).
    fn documented() -> BTreeSet<String> {
        let doc = include_str!("../docs/API.md");
        let start = doc
            .find("### Request errors")
            .expect("the request errors table");
        let end = doc
            .find("## Limits and defaults")
            .expect("the section after the tables");
        let mut codes = BTreeSet::new();
        for row in doc[start..end].lines().filter(|l| l.starts_with('|')) {
            // The code cell: the first cell holding a backticked word (the second cell
            // in the request table, after the HTTP status).
            let cell = row
                .split('|')
                .find(|cell| cell.contains('`'))
                .unwrap_or_default();
            for word in cell.split('`').skip(1).step_by(2) {
                if word.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
                    codes.insert(word.to_string());
                }
            }
        }
        codes
    }

    #[test]
    fn the_registry_and_the_api_document_list_the_same_codes() {
        let registry: BTreeSet<String> = Code::ALL.iter().map(|c| c.as_str().into()).collect();
        let documented = documented();
        let undocumented: Vec<_> = registry.difference(&documented).collect();
        let unknown: Vec<_> = documented.difference(&registry).collect();
        assert!(
            undocumented.is_empty(),
            "not in docs/API.md: {undocumented:?}"
        );
        assert!(
            unknown.is_empty(),
            "in docs/API.md but not in the registry: {unknown:?}"
        );
    }

    #[test]
    fn codes_are_unique_snake_case_and_request_errors_have_a_status() {
        let mut seen = BTreeSet::new();
        for code in Code::ALL {
            let s = code.as_str();
            assert!(seen.insert(s), "{s} twice");
            assert!(s.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{s}");
            assert!(!code.title().is_empty());
        }
        assert_eq!(Code::RateLimited.status(), Some(429));
        assert_eq!(Code::TooMuchWork.status(), None);
        assert!(Code::SourceTimeout.retried() && !Code::InvalidMedia.retried());
    }
}
