//! An extension record pairs a handler with the key of the payload it casts to; building one by
//! hand requires `unsafe`, as `#[extension]`'s generated code does.
use hookpoint::__private::{ErrorPolicy, ExtensionEntry, ExtensionParts, Flow, Handler, PointOf};

fn handler(_: *mut (), _: &hookpoint::Cx<'_>) -> Result<Flow, hookpoint::Error> {
    Ok(Flow::Continue)
}

static LYING: ExtensionEntry = ExtensionEntry::new(ExtensionParts {
    point: PointOf::Name("lying"),
    name: "lying",
    order: 0,
    crate_name: "ui",
    module_path: "ui",
    file: "ui.rs",
    line: 1,
    payload_type: || "String",
    payload_key: std::any::TypeId::of::<fn(&mut String)>,
    handler: Handler::Sync(handler),
    bare: None,
    replace: false,
    policy: ErrorPolicy::Propagate,
    after: &[],
    before: &[],
    when: None,
    timeout: None,
});

fn main() {
    let _ = &LYING;
}
