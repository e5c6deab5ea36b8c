//! Build script: assemble and link the static no-op helper that
//! `sysgauge spawn` uses as its "static" target (src/spawn/noop-helper.S).
//!
//! The helper is linked with `-nostdlib -static` by the C compiler the `cc`
//! crate picks for the target (so cross builds use the cross compiler), and
//! the binary is embedded in sysgauge with `include_bytes!`. When it cannot be
//! built (no compiler, an architecture the assembly does not cover), an empty
//! file is embedded instead and the `static` target cases are skipped at run
//! time with a reason: the rest of sysgauge must still build everywhere.

use std::path::{Path, PathBuf};

const SOURCE: &str = "src/spawn/noop-helper.S";

fn main() {
    println!("cargo:rerun-if-changed={SOURCE}");
    println!("cargo:rerun-if-changed=build.rs");
    let out_dir = match std::env::var_os("OUT_DIR") {
        Some(d) => PathBuf::from(d),
        None => {
            println!("cargo:warning=OUT_DIR is not set; cannot build the static no-op helper");
            return;
        }
    };
    let dest = out_dir.join("noop-helper");
    if let Err(why) = build_helper(&dest) {
        println!(
            "cargo:warning=the static no-op helper for `sysgauge spawn` was not built ({why}); \
             its 'static' target cases will be skipped"
        );
        if let Err(e) = std::fs::write(&dest, b"") {
            panic!("cannot write {}: {e}", dest.display());
        }
    }
}

fn build_helper(dest: &Path) -> Result<(), String> {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os != "linux" {
        return Err(format!("target OS '{os}' is not Linux"));
    }
    let compiler = cc::Build::new()
        .cargo_metadata(false)
        .cargo_warnings(false)
        .opt_level(0)
        .debug(false)
        .try_get_compiler()
        .map_err(|e| format!("no C compiler: {e}"))?;
    let mut cmd = compiler.to_command();
    cmd.args([
        "-nostdlib",
        "-static",
        "-no-pie",
        "-Wl,--build-id=none",
        // zig links its compiler runtime into every executable; for ARMv6
        // that runtime calls memcpy, which -nostdlib leaves undefined. The
        // helper uses none of it, so dropping unreferenced sections drops
        // it (a no-op for gcc's link).
        "-Wl,--gc-sections",
        "-s",
        "-o",
    ])
    .arg(dest)
    .arg(SOURCE);
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {:?}: {e}", compiler.path()))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        return Err(format!("{:?} failed: {first}", compiler.path()));
    }
    let bytes = std::fs::read(dest).map_err(|e| format!("cannot read the helper: {e}"))?;
    if !bytes.starts_with(b"\x7fELF") {
        return Err("the linker did not produce an ELF file".into());
    }
    Ok(())
}
