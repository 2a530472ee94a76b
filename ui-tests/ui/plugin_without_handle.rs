use std::collections::BTreeMap;

hookpoint::plugin! {
    name: "memory",
    description: "Remembers.",
    config: BTreeMap<String, String>,
}

fn main() {}
