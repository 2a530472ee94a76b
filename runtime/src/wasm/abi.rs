//! The guest interface, checked once per compiled module: the exports a guest must have (with
//! their types), the imports it may have, and whether it opted in to keeping state. A module that
//! does not fit is refused at load with the reason, never at dispatch.

use wasmtime::{ExternType, FuncType, InstancePre, Module, ModuleExport, ValType};

use super::engine::Host;
use super::host::{HostState, IMPORTS};

/// The export that receives the input buffer: `(len: i32) -> i32`.
pub(crate) const ALLOC: &str = "hookpoint_alloc";
/// The export that runs one call: `(ptr: i32, len: i32) -> i64`.
pub(crate) const CALL: &str = "hookpoint_call";
/// The optional export whose presence keeps instances (and their state) between calls.
pub(crate) const KEEP_STATE: &str = "hookpoint_keep_state";

/// A compiled module that implements the guest interface, linked to the host functions.
pub(crate) struct Guest {
    pub(crate) pre: InstancePre<HostState>,
    pub(crate) memory: ModuleExport,
    pub(crate) alloc: ModuleExport,
    pub(crate) call: ModuleExport,
    /// The guest exports [`KEEP_STATE`]: its instances are reused.
    pub(crate) keep_state: bool,
}

impl Guest {
    /// Checks `module` against the interface and links it.
    ///
    /// # Errors
    /// What does not fit: a missing or mistyped export, a memory that is 64-bit or shared, an
    /// import other than the `hookpoint` functions (WASI among them).
    pub(crate) fn new(host: &Host, module: &Module) -> Result<Guest, String> {
        check_imports(module)?;
        check_exports(module)?;
        let pre = host
            .linker
            .instantiate_pre(module)
            .map_err(|e| format!("does not link to the host functions: {e:#}"))?;
        let export = |name: &str| {
            module
                .get_export_index(name)
                .ok_or_else(|| format!("has no export `{name}`"))
        };
        Ok(Guest {
            memory: export("memory")?,
            alloc: export(ALLOC)?,
            call: export(CALL)?,
            keep_state: module.get_export(KEEP_STATE).is_some(),
            pre,
        })
    }
}

fn check_imports(module: &Module) -> Result<(), String> {
    for import in module.imports() {
        let known = import.module() == "hookpoint" && IMPORTS.contains(&import.name());
        if !known {
            return Err(format!(
                "imports `{}::{}`, which the host does not provide: a guest may import only `hookpoint::{{{}}}` (no WASI: files, clock and environment come through those, when the manifest grants them)",
                import.module(),
                import.name(),
                IMPORTS.join(", ")
            ));
        }
    }
    Ok(())
}

fn check_exports(module: &Module) -> Result<(), String> {
    match module.get_export("memory") {
        Some(ExternType::Memory(m)) if !m.is_64() && !m.is_shared() => {}
        Some(ExternType::Memory(_)) => {
            return Err(
                "exports a 64-bit or shared `memory`; the interface needs a plain 32-bit memory"
                    .into(),
            );
        }
        _ => {
            return Err(
                "has no `memory` export (the host writes the input and reads the output there)"
                    .into(),
            );
        }
    }
    check_func(
        module,
        ALLOC,
        &[ValType::I32],
        &[ValType::I32],
        "(len: i32) -> i32",
    )?;
    check_func(
        module,
        CALL,
        &[ValType::I32, ValType::I32],
        &[ValType::I64],
        "(ptr: i32, len: i32) -> i64",
    )
}

fn check_func(
    module: &Module,
    name: &str,
    params: &[ValType],
    results: &[ValType],
    shape: &str,
) -> Result<(), String> {
    let Some(ExternType::Func(f)) = module.get_export(name) else {
        return Err(format!("has no function export `{name}` {shape}"));
    };
    if !same(&f, params, results) {
        return Err(format!("exports `{name}` as {f}, not {shape}"));
    }
    Ok(())
}

fn same(f: &FuncType, params: &[ValType], results: &[ValType]) -> bool {
    let eq = |a: &ValType, b: &ValType| ValType::eq(a, b);
    f.params().len() == params.len()
        && f.results().len() == results.len()
        && f.params().zip(params).all(|(a, b)| eq(&a, b))
        && f.results().zip(results).all(|(a, b)| eq(&a, b))
}
