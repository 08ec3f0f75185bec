//! Any bytes as the HLS playlists `video-to-hls` reads back and rewrites (a master
//! playlist, a NUL, a media playlist): variants, segments, measured rates and the
//! rewritten master must return, and the rewritten master must name the same streams.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    mediaedit::media::fuzzing::hls(data);
});
