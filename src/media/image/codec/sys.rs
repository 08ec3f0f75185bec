//! The declarations of the C libraries linked in — libavif, libtiff, libheif, libjxl — as
//! bindgen generated them at build time from the headers installed here (`build.rs`),
//! so that no struct layout or signature is written by hand: a library version that
//! changes one changes the declarations with it, or fails the build. bindgen's layout
//! assertions check every struct's size and field offsets against the header when the
//! crate compiles. `media::libraries` checks at start that the libraries loaded are
//! the versions these headers describe.
//!
//! Only `tiffio.h`'s variadic `TIFFGetField`/`TIFFSetField` stay unchecked by the
//! compiler; `media::tiff` asks libtiff for each tag's value type before calling them.

#![allow(
    non_upper_case_globals,
    non_camel_case_types,
    non_snake_case,
    dead_code,
    unreachable_pub,
    clippy::all
)]

pub(crate) mod avif {
    include!(concat!(env!("OUT_DIR"), "/avif.rs"));
}

pub(crate) mod tiff {
    include!(concat!(env!("OUT_DIR"), "/tiff.rs"));
}

pub(crate) mod heif {
    include!(concat!(env!("OUT_DIR"), "/heif.rs"));
}

pub(crate) mod jxl {
    include!(concat!(env!("OUT_DIR"), "/jxl.rs"));
}

pub(crate) mod jxl_threads {
    include!(concat!(env!("OUT_DIR"), "/jxl_threads.rs"));
}
