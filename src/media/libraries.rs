//! The C libraries loaded at run time must be the ones the program was built for: the
//! declarations of libavif, libtiff and libheif are generated from the headers found
//! at build time (`media::sys`), so a library of another version — an operating system
//! upgraded under a built binary — could lay its structs out differently and turn every
//! encoding into silent memory corruption. The service checks each library's own
//! version at start and refuses to start on a mismatch, with one line naming the
//! library, the version loaded and the versions it takes.
//!
//! A loaded version is taken when it is compatible with the header's as semantic
//! versioning (Cargo's caret rule) says: the same major version, not older than the
//! header; for a 0.x version (libavif 0.11), the same minor version too. libwebp is
//! the copy `libwebp-sys` builds (its 1.x interface); Little CMS is the system's, under
//! `lcms2-sys`'s declarations of its 2.x interface.

use std::ffi::CStr;
use std::fmt;

use crate::media::image::codec::sys;

/// A library version: major, minor, patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(pub u32, pub u32, pub u32);

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

impl Version {
    /// The leading `major.minor.patch` of a version string (`"0.11.1"`, `"4.5.0"`);
    /// a missing patch is 0.
    pub fn parse(text: &str) -> Option<Version> {
        let mut parts = text.trim().splitn(3, '.').map(|part| {
            let digits = part.bytes().take_while(u8::is_ascii_digit).count();
            part[..digits].parse::<u32>().ok()
        });
        let major = parts.next()??;
        let minor = parts.next()??;
        let patch = parts.next().map_or(Some(0), |p| p)?;
        Some(Version(major, minor, patch))
    }

    /// Whether a library of version `self`, loaded, serves a program built for
    /// `built` (the caret rule: `^built`).
    pub fn serves(self, built: Version) -> bool {
        let same_line = if built.0 == 0 {
            (self.0, self.1) == (0, built.1)
        } else {
            self.0 == built.0
        };
        same_line && self >= built
    }

    /// The versions `^self` takes, in words.
    fn range(self) -> String {
        if self.0 == 0 {
            format!("{self} or a newer 0.{}.x", self.1)
        } else {
            format!("{self} or a newer {}.x", self.0)
        }
    }
}

/// One library: the version the program was built for and the one loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Library {
    pub name: &'static str,
    pub built: Version,
    /// `None` when the library's version could not be read.
    pub loaded: Option<Version>,
}

impl Library {
    /// `None` when the loaded version serves; else the line that refuses to start.
    pub fn refusal(&self) -> Option<String> {
        let loaded = match self.loaded {
            Some(loaded) if loaded.serves(self.built) => return None,
            Some(loaded) => loaded.to_string(),
            None => "of an unknown version".to_string(),
        };
        Some(format!(
            "{name} {loaded} is installed, but this mediaedit was built against {name} \
             {built}'s headers and takes {range}: rebuild mediaedit on this system, or \
             install a matching {name}",
            name = self.name,
            built = self.built,
            range = self.built.range(),
        ))
    }
}

/// The libraries linked in, each with its built-for and loaded versions.
pub fn libraries() -> Vec<Library> {
    // SAFETY: each of these returns a static string or a number and has no
    // precondition.
    let (avif, tiff, heif, webp, jxl) = unsafe {
        (
            CStr::from_ptr(sys::avif::avifVersion()).to_string_lossy(),
            CStr::from_ptr(sys::tiff::TIFFGetVersion()).to_string_lossy(),
            sys::heif::heif_get_version_number(),
            libwebp_sys::WebPGetEncoderVersion(),
            sys::jxl::JxlEncoderVersion(),
        )
    };
    // major × 1 000 000 + minor × 1000 + patch.
    let jxl = Version(jxl / 1_000_000, jxl / 1000 % 1000, jxl % 1000);
    // "LIBTIFF, Version 4.5.0\nCopyright ..."
    let tiff = tiff
        .split_once("Version ")
        .and_then(|(_, rest)| Version::parse(rest.lines().next()?));
    // 0xMMmmpp00 and 0xMMmmpp.
    let heif = Version(heif >> 24, (heif >> 16) & 0xff, (heif >> 8) & 0xff);
    let webp = u32::try_from(webp)
        .ok()
        .map(|v| Version(v >> 16, (v >> 8) & 0xff, v & 0xff));
    // Little CMS encodes 2.14 as 2140.
    let lcms = lcms2::version();
    let lcms = Version(lcms / 1000, lcms % 1000 / 10, 0);
    let header_heif = sys::heif::LIBHEIF_NUMERIC_VERSION;
    vec![
        Library {
            name: "libavif",
            built: Version(
                sys::avif::AVIF_VERSION_MAJOR,
                sys::avif::AVIF_VERSION_MINOR,
                sys::avif::AVIF_VERSION_PATCH,
            ),
            loaded: Version::parse(&avif),
        },
        Library {
            name: "libtiff",
            built: Version(
                sys::tiff::TIFFLIB_MAJOR_VERSION,
                sys::tiff::TIFFLIB_MINOR_VERSION,
                sys::tiff::TIFFLIB_MICRO_VERSION,
            ),
            loaded: tiff,
        },
        Library {
            name: "libheif",
            built: Version(
                header_heif >> 24,
                (header_heif >> 16) & 0xff,
                (header_heif >> 8) & 0xff,
            ),
            loaded: Some(heif),
        },
        Library {
            name: "libjxl",
            built: Version(
                sys::jxl::JPEGXL_MAJOR_VERSION,
                sys::jxl::JPEGXL_MINOR_VERSION,
                sys::jxl::JPEGXL_PATCH_VERSION,
            ),
            loaded: Some(jxl),
        },
        Library {
            name: "libwebp",
            built: Version(1, 0, 0),
            loaded: webp,
        },
        Library {
            name: "Little CMS",
            built: Version(2, 0, 0),
            loaded: Some(lcms),
        },
    ]
}

/// `Err` with one line for the first library whose loaded version does not serve.
pub fn check() -> Result<(), String> {
    match libraries().iter().find_map(Library::refusal) {
        Some(line) => Err(line),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::{check, libraries, Library, Version};

    #[test]
    fn versions_are_read_from_their_strings() {
        assert_eq!(Version::parse("0.11.1"), Some(Version(0, 11, 1)));
        assert_eq!(Version::parse("1.0.4-dev"), Some(Version(1, 0, 4)));
        assert_eq!(Version::parse("4.5"), Some(Version(4, 5, 0)));
        assert_eq!(Version::parse("x.1"), None);
        assert_eq!(Version::parse("4"), None);
    }

    #[test]
    fn a_library_serves_within_its_caret_range() {
        let built = Version(0, 11, 1);
        assert!(Version(0, 11, 1).serves(built));
        assert!(Version(0, 11, 4).serves(built));
        assert!(!Version(0, 11, 0).serves(built));
        assert!(!Version(0, 12, 0).serves(built));
        // libavif 1.x (Debian 13) under a binary built against 0.11's headers.
        assert!(!Version(1, 0, 4).serves(built));
        let built = Version(4, 5, 0);
        assert!(Version(4, 7, 0).serves(built));
        assert!(!Version(4, 4, 0).serves(built));
        assert!(!Version(5, 0, 0).serves(built));
    }

    #[test]
    fn a_mismatch_is_refused_in_one_line_naming_both_versions() {
        let library = Library {
            name: "libavif",
            built: Version(0, 11, 1),
            loaded: Some(Version(1, 0, 4)),
        };
        let line = library.refusal().unwrap();
        assert!(!line.contains('\n'));
        assert!(line.starts_with("libavif 1.0.4 is installed"), "{line}");
        assert!(line.contains("libavif 0.11.1's headers"), "{line}");
        assert!(line.contains("0.11.1 or a newer 0.11.x"), "{line}");
        let unknown = Library {
            loaded: None,
            ..library
        };
        assert!(unknown.refusal().unwrap().contains("of an unknown version"));
    }

    #[test]
    fn the_libraries_of_this_build_are_the_ones_loaded() {
        let found = libraries();
        let names: Vec<_> = found.iter().map(|l| l.name).collect();
        assert_eq!(
            names,
            [
                "libavif",
                "libtiff",
                "libheif",
                "libjxl",
                "libwebp",
                "Little CMS"
            ]
        );
        for library in &found {
            let loaded = library.loaded.expect("every library tells its version");
            assert!(loaded.serves(library.built), "{library:?}");
        }
        assert_eq!(check(), Ok(()));
    }
}
