//! A crate that declares points, extensions and `#[extensible]` fns builds under
//! `#![forbid(unsafe_code)]`: the `unsafe` the contracts need lives in generated code.
#![forbid(unsafe_code)]

use hookpoint::{CallStart, Cx, extensible, extension, point};

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

#[extensible]
pub fn shout(text: String) -> String {
    text.to_uppercase()
}

#[extension(point = SHOUT_START)]
fn add_bang(call: &mut CallStart<(String,), String>) {
    call.args.0.push('!');
}

pub struct Agent {
    pub runs: u32,
}

#[extensible]
impl Agent {
    #[extensible]
    pub async fn run(&mut self, n: u32) -> u32 {
        self.runs += n;
        self.runs
    }
}

#[extension(point = LOADED)]
async fn remember(items: &mut Vec<String>) {
    items.push("memory".into());
}

fn main() {
    let mut prompt = SystemPrompt { parts: vec![] };
    SYSTEM_PROMPT.call(&mut prompt).unwrap();
    assert_eq!(prompt.parts, ["You are a helpful agent.", "Tools: search."]);
    assert_eq!(shout("hi".into()), "HI!");
    let mut agent = Agent { runs: 0 };
    let _ = agent.run(1);
}
