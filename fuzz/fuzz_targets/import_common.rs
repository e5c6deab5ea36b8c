//! What the CSV and JSON import targets share: the fuzzer's bytes as text
//! and an import context like `sysgauge import`'s.

use sysgauge_compare::ImportContext;

fn known(id: &str) -> Option<u32> {
    (id == "hash.sha256").then_some(3)
}

/// Hand `data` to `import` as file `source_name`; any text either imports
/// or is an error, and nothing may panic.
pub fn feed<T, E>(
    data: &[u8],
    source_name: &str,
    import: impl Fn(&str, &ImportContext<'_>) -> Result<T, E>,
) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let ctx = ImportContext {
        source_name,
        at: chrono::Utc::now(),
        tool_version: "0.1.0",
        workload_version: &known,
    };
    let _ = import(text, &ctx);
}
