use hookpoint::{CallStart, extensible, extension};

#[extensible]
pub fn build_prompt(extra: String) -> String {
    format!("You are a helpful agent. {extra}")
}

#[extension(point = BUILD_PROMTP_START)]
fn add_rules(call: &mut CallStart<(String,), String>) {
    call.args.0.push_str(" Be brief.");
}

fn main() {}
