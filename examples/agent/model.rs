//! A scripted, offline "model" and two tools, so the demo needs no network.
//!
//! The model answers with a tool call as JSON (`{"tool": "calculator", "args": {...}}`) when the
//! user asks for arithmetic and no tool result is in the history yet, and otherwise with the
//! `response` tool, using what the system prompt and the history say.

use hookpoint_extensions::Message;

/// The model's next message for `messages` (system prompt first, user message last).
pub fn reply(messages: &[Message]) -> String {
    let system = messages
        .first()
        .map(|m| m.content.as_str())
        .unwrap_or_default();
    let user = messages
        .iter()
        .rev()
        .find(|m| m.role == "user")
        .map(|m| m.content.as_str())
        .unwrap_or_default();
    let last_tool = messages
        .iter()
        .rev()
        .take_while(|m| m.role != "user")
        .find(|m| m.role == "tool");
    if let Some(expr) = arithmetic(user)
        && last_tool.is_none()
        && !already_answered(messages, user)
    {
        return serde_json::json!({"tool": "calculator", "args": {"expression": expr}}).to_string();
    }
    let mut text = String::new();
    if let Some(tool) = last_tool {
        text.push_str(&format!("The result is {}.", tool.content));
    }
    if user.to_lowercase().contains("my name") && !user.to_lowercase().starts_with("my name is") {
        match remembered_name(system) {
            Some(name) => text.push_str(&format!(" Your name is {name}.")),
            None => text.push_str(" I don't know your name yet."),
        }
    }
    if text.is_empty() {
        text.push_str("Done.");
    }
    serde_json::json!({"tool": "response", "args": {"text": text.trim()}}).to_string()
}

fn already_answered(messages: &[Message], user: &str) -> bool {
    let _ = user;
    messages
        .iter()
        .rev()
        .take_while(|m| m.role != "user")
        .any(|m| m.role == "tool")
}

/// `a op b` in the text, as a calculator expression.
fn arithmetic(text: &str) -> Option<String> {
    let words: Vec<&str> = text
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| c == '?' || c == '.'))
        .collect();
    words.windows(3).find_map(|w| {
        let ok = w[0].parse::<f64>().is_ok()
            && ["+", "-", "*", "/"].contains(&w[1])
            && w[2].parse::<f64>().is_ok();
        ok.then(|| format!("{} {} {}", w[0], w[1], w[2]))
    })
}

fn remembered_name(system: &str) -> Option<String> {
    let lower = system.to_lowercase();
    let at = lower.find("my name is ")?;
    let rest = &system[at + "my name is ".len()..];
    Some(
        rest.split(|c: char| !c.is_alphanumeric())
            .next()?
            .to_owned(),
    )
    .filter(|n| !n.is_empty())
}

/// Parses a model message as a tool call.
pub fn parse_tool_call(reply: &str) -> Option<(String, serde_json::Value)> {
    let v: serde_json::Value = serde_json::from_str(reply).ok()?;
    Some((v["tool"].as_str()?.to_owned(), v["args"].clone()))
}

/// The calculator tool: `{"expression": "a op b"}`.
pub fn calculate(args: &serde_json::Value) -> Result<String, String> {
    let expr = args["expression"]
        .as_str()
        .ok_or("calculator needs `expression`")?;
    let parts: Vec<&str> = expr.split_whitespace().collect();
    let [a, op, b] = parts.as_slice() else {
        return Err(format!("cannot read `{expr}`"));
    };
    let (a, b): (f64, f64) = (
        a.parse().map_err(|_| "bad number")?,
        b.parse().map_err(|_| "bad number")?,
    );
    let r = match *op {
        "+" => a + b,
        "-" => a - b,
        "*" => a * b,
        "/" if b != 0.0 => a / b,
        "/" => return Err("division by zero".into()),
        _ => return Err(format!("unknown operator `{op}`")),
    };
    Ok(if r.fract() == 0.0 {
        format!("{}", r as i64)
    } else {
        format!("{r}")
    })
}

/// The search tool over a tiny built-in corpus.
pub fn search(query: &str) -> String {
    const CORPUS: &[(&str, &str)] = &[
        (
            "hookpoint",
            "hookpoint: named extension points for Rust, checked by the compiler.",
        ),
        (
            "agent zero",
            "Agent Zero: a Python agent framework with folder-based extensions.",
        ),
    ];
    CORPUS
        .iter()
        .filter(|(k, _)| query.to_lowercase().contains(k))
        .map(|(_, v)| *v)
        .collect::<Vec<_>>()
        .join(" ")
}
