use hookpoint::{extension, point};

pub struct SystemPrompt {
    pub parts: Vec<String>,
}

point! {
    pub static SYSTEM_PROMPT: SyncPoint<SystemPrompt> = "system_prompt";
}

#[extension(point = SYSTEM_PROMPT)]
async fn role(prompt: &mut SystemPrompt) {
    prompt.parts.push("You are a helpful agent.".into());
}

fn main() {}
