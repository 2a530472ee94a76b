use std::collections::BTreeMap;

hookpoint::plugin! {
    pub static MEMORY: Plugin<BTreeMap<String, String>> = {
        name: "memory",
        description: "Remembers.",
    };
}

#[hookpoint::extension(point = "plugin_name_typo")]
fn recall(notes: &mut Vec<String>) -> Result<(), hookpoint::Error> {
    notes.extend(MEMROY.config()?.values().cloned());
    Ok(())
}

fn main() {}
