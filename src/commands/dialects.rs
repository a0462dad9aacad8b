//! `ppcert dialects`: the built-in dialects, each with what it changes from the spec.

use crate::dialect;
use crate::error::Failure;
use crate::exit_codes;

pub(crate) fn dialects() -> Result<u8, Failure> {
    for name in dialect::Builtin::ALL.map(dialect::Builtin::name) {
        let loaded = dialect::resolve(name)?;
        crate::console::say!("{name}");
        crate::console::say!("  {}", loaded.description);
        let changed: Vec<String> = if name == dialect::DEFAULT {
            vec!["the base every dialect and ppcert.toml overrides".into()]
        } else {
            loaded
                .endpoints
                .iter()
                .map(|(operation, table)| {
                    let parts: Vec<&str> = [
                        table.method.as_ref().map(|_| "method"),
                        table.path.as_ref().map(|_| "path"),
                        table.body.as_ref().map(|_| "body"),
                        (!table.capture.is_empty()).then_some("captures"),
                    ]
                    .into_iter()
                    .flatten()
                    .collect();
                    format!("{operation} ({})", parts.join(", "))
                })
                .collect()
        };
        crate::console::say!("  endpoints: {}", changed.join("; "));
    }
    crate::console::say!("");
    crate::console::say!(
        "Choose one with `[target] dialect = \"NAME\"` in ppcert.toml or --dialect NAME;"
    );
    crate::console::say!(
        "--dialect ./FILE.toml reads a dialect file of your own (same [endpoints.*] tables)."
    );
    Ok(exit_codes::SUCCESS)
}
