use hookpoint::{extension, point};

pub struct SystemPrompt {
    pub parts: Vec<String>,
}

point! {
    pub static SYSTEM_PROMPT: SyncPoint<SystemPrompt> = "system_prompt";
}

#[extension(point = SYSTEM_PROMPT)]
fn role(prompt: &mut String) {
    prompt.push_str("You are a helpful agent.");
}

fn main() {}
