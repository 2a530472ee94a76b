//! The demo's tools, each two extensions (register + execute), over a small fake world: files,
//! a deploy API that wants a token, a shell. Nothing leaves the process. (The shop's database
//! is queried through the `db_search` plugin's `db.search`.)

use hookpoint::{Error, extension};
use hookpoint_extensions::{
    agent::current_agent,
    payloads::{ToolExecution, ToolRegistry, ToolSpec},
    points::{TOOL_EXECUTE, TOOL_REGISTER},
};
use serde_json::Value;

/// The deploy token of the fake world (the demo's `project/secrets.env` holds the same).
pub const DEPLOY_TOKEN: &str = "tok-live-4242-9f8e7d";

#[extension(point = TOOL_REGISTER, order = 10)]
fn register_workbench(tools: &mut ToolRegistry) {
    tools.add(
        ToolSpec::new("calculator", "Evaluates `a op b` (op: + - * /).").arg(
            "expression",
            "string",
            "e.g. `6 * 7`",
            true,
        ),
    );
    tools.add(
        ToolSpec::new("read_file", "Reads a file of the project.").arg(
            "path",
            "string",
            "relative path",
            true,
        ),
    );
    tools.add(
        ToolSpec::new("http_get", "GET a URL.")
            .arg("url", "string", "the URL", true)
            .arg("headers", "object", "request headers", false),
    );
    tools.add(
        ToolSpec::new("shell", "Runs a shell command in the project.").arg(
            "command",
            "string",
            "the command",
            true,
        ),
    );
}

/// The tools this file registers (and so executes).
const TOOLS: &[&str] = &["calculator", "read_file", "http_get", "shell"];

#[extension(point = TOOL_EXECUTE, order = 10)]
fn run_workbench(exec: &mut ToolExecution) -> Result<(), Error> {
    let Some(tool) = TOOLS.iter().copied().find(|t| exec.tool == *t) else {
        return Ok(());
    };
    let Some(args) = exec.claim(tool) else {
        return Ok(());
    };
    let out = match tool {
        "calculator" => calculate(&args),
        "read_file" => read_file(args["path"].as_str().unwrap_or_default()),
        "http_get" => Ok(http_get(&args)),
        _ => Ok(shell(args["command"].as_str().unwrap_or_default())),
    };
    match out {
        Ok(text) => exec.ok(text),
        Err(e) => exec.fail(e),
    }
    Ok(())
}

fn calculate(args: &Value) -> Result<String, String> {
    let expr = args["expression"].as_str().unwrap_or_default();
    let parts: Vec<&str> = expr.split_whitespace().collect();
    let [a, op, b] = parts.as_slice() else {
        return Err(format!("cannot read `{expr}`: write `a op b`"));
    };
    let (a, b): (f64, f64) = (
        a.parse().map_err(|_| format!("`{a}` is not a number"))?,
        b.parse().map_err(|_| format!("`{b}` is not a number"))?,
    );
    let r = match *op {
        "+" => a + b,
        "-" => a - b,
        "*" | "×" => a * b,
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

fn read_file(path: &str) -> Result<String, String> {
    match path {
        "deploy.env" => Ok(format!(
            "DEPLOY_URL=https://deploy.example/api\nDEPLOY_TOKEN={DEPLOY_TOKEN}\nREGION=eu-west-1"
        )),
        "README.md" => {
            Ok("# Shop\nA small web shop. Build with `make`, deploy with `make deploy`.".into())
        }
        other => Err(format!("no such file: {other}")),
    }
}

fn http_get(args: &Value) -> String {
    let url = args["url"].as_str().unwrap_or_default();
    let auth = args["headers"]["Authorization"]
        .as_str()
        .unwrap_or_default();
    if let Some(agent) = current_agent() {
        agent
            .cache()
            .put(format!("http:{url}"), Value::String(auth.len().to_string()));
    }
    if !url.starts_with("https://deploy.example/") {
        return format!("404 Not Found: {url}");
    }
    if auth == format!("Bearer {DEPLOY_TOKEN}") {
        format!(
            "200 OK {{\"status\": \"healthy\", \"token\": \"{DEPLOY_TOKEN}\", \"expires\": \"2026-12-31\"}}"
        )
    } else {
        "401 Unauthorized".to_owned()
    }
}

fn shell(command: &str) -> String {
    match command {
        c if c.starts_with("mv build") => "moved build/ to .trash/build/ (412 files)".into(),
        c if c.starts_with("cargo test") => "test result: ok. 57 passed; 0 failed".into(),
        c => format!("$ {c}\n(done)"),
    }
}
