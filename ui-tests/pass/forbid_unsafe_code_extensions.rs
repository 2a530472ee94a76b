//! A crate that only contributes extensions builds under `#![forbid(unsafe_code)]`.
#![forbid(unsafe_code)]

use hookpoint::{Cx, extension, point};

pub struct SystemPrompt {
    pub parts: Vec<String>,
}

point! {
    pub static SYSTEM_PROMPT: SyncPoint<SystemPrompt> = "pass_forbid_system_prompt";
    pub static LOADED: AsyncPoint<Vec<String>> = "pass_forbid_loaded";
}

#[extension(point = SYSTEM_PROMPT, order = 10)]
fn role(prompt: &mut SystemPrompt) {
    prompt.parts.push("You are a helpful agent.".into());
}

#[extension(point = "pass_forbid_system_prompt", order = 20, name = "tools")]
fn tools(cx: &Cx, prompt: &mut SystemPrompt) -> Result<(), hookpoint::Error> {
    let _ = cx;
    prompt.parts.push("Tools: search.".into());
    Ok(())
}

#[extension(point = LOADED)]
async fn remember(items: &mut Vec<String>) {
    items.push("memory".into());
}

fn main() {
    let mut prompt = SystemPrompt { parts: vec![] };
    SYSTEM_PROMPT.call(&mut prompt).unwrap();
    assert_eq!(prompt.parts, ["You are a helpful agent.", "Tools: search."]);
}
