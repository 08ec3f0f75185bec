//! The service refuses to start when a C library it links reports a version other than
//! the one its bindings were generated from. The real binary is started with a small
//! preloaded library (`LD_PRELOAD`) whose version function answers as another release
//! would: the dynamic linker then resolves the service's call to it, as it would to an
//! upgraded system library.

use std::path::Path;
use std::process::Command;

use crate::binary::BIN;

/// Builds a shared object from `source` with the system C compiler.
fn preload(dir: &Path, name: &str, source: &str) -> std::path::PathBuf {
    let c = dir.join(format!("{name}.c"));
    let so = dir.join(format!("{name}.so"));
    std::fs::write(&c, source).unwrap();
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(&c)
        .status()
        .expect("a C compiler (build-essential)");
    assert!(status.success());
    so
}

/// `mediaedit serve` with `library` preloaded: its exit code and standard error.
fn serve_with(dir: &Path, library: &Path) -> (Option<i32>, String) {
    let out = Command::new(BIN)
        .arg("serve")
        .env("MEDIAEDIT_LISTEN", "127.0.0.1:0")
        .env("MEDIAEDIT_DATA_DIR", dir.join("data"))
        .env("LD_PRELOAD", library)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_library_of_another_version_is_refused_at_start_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let avif = preload(
        dir.path(),
        "avif",
        "const char *avifVersion(void) { return \"99.1.0\"; }\n",
    );
    let (code, stderr) = serve_with(dir.path(), &avif);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr
            .contains("libavif 99.1.0 is installed, but this mediaedit was built against libavif "),
        "{stderr}"
    );
    assert!(stderr.contains("'s headers"), "{stderr}");
    assert!(!dir.path().join("data").join("mediaedit.db").exists());

    let tiff = preload(
        dir.path(),
        "tiff",
        "const char *TIFFGetVersion(void) { return \"LIBTIFF, Version 3.9.7\\nCopyright\"; }\n",
    );
    let (code, stderr) = serve_with(dir.path(), &tiff);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("libtiff 3.9.7 is installed"), "{stderr}");

    let heif = preload(
        dir.path(),
        "heif",
        "#include <stdint.h>\nuint32_t heif_get_version_number(void) { return 0x02000000; }\n",
    );
    let (code, stderr) = serve_with(dir.path(), &heif);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("libheif 2.0.0 is installed"), "{stderr}");
}
