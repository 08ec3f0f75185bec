//! Builds the library that warm ffmpeg processes are started with
//! (`src/media/warm_shim.c`, see `src/media/warm.rs`) as a shared object in OUT_DIR,
//! which the binary carries and writes out at startup. Off Linux, or without a C
//! compiler that can make one, the file is left empty and every process starts cold.

use std::path::PathBuf;
use std::process::Command;

const SHIM: &str = "src/media/warm_shim.c";

fn main() {
    println!("cargo:rerun-if-changed={SHIM}");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("warm_shim.so");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux");
    let built = linux && compile(&out);
    if !built {
        println!("cargo:warning=the warm-process shim was not built: ffmpeg starts cold");
        std::fs::write(&out, b"").expect("writing to OUT_DIR");
    }
}

/// `cc -shared` through the compiler the `cc` crate finds for the target.
fn compile(out: &PathBuf) -> bool {
    let compiler = cc::Build::new().cargo_metadata(false).try_get_compiler();
    let Ok(compiler) = compiler else {
        return false;
    };
    let mut command: Command = compiler.to_command();
    command
        .args(["-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-o"])
        .arg(out)
        .arg(SHIM);
    matches!(command.status(), Ok(status) if status.success())
}
