//! The offline session: what the user says, what the scripted model answers, and what the
//! scripted user answers when the agent asks for approval.

use hookpoint_extensions::{
    agent::current_agent,
    decision::{Answer, AskRequest},
    model::{ModelRequest, ScriptedModel, ScriptedReply},
};
use serde_json::json;

/// One user turn and the model's replies to it (the scripted model plays them in order).
pub struct Turn {
    pub user: String,
    pub replies: Vec<ScriptedReply>,
    /// Save the context and continue in a freshly built agent before this turn.
    pub restore_first: bool,
}

fn tool(thought: &str, name: &str, args: serde_json::Value) -> ScriptedReply {
    ScriptedReply::tool(thought, name, args)
}

pub fn turns() -> Vec<Turn> {
    vec![
        Turn {
            // No reply queued: `improvise` answers from what memory recalled (a second run of
            // the demo remembers the name the first run was told).
            user: "Do you remember my name?".into(),
            replies: vec![],
            restore_first: false,
        },
        Turn {
            user: "What is 6 * 7?".into(),
            replies: vec![
                tool(
                    "Arithmetic: the calculator is exact.",
                    "calculator",
                    json!({"expression": "6 * 7"}),
                )
                .with_reasoning("The user wants a product. I should not guess."),
                ScriptedReply::respond("6 × 7 = 42."),
            ],
            restore_first: false,
        },
        Turn {
            user: "Check that the deploy API accepts our token.".into(),
            replies: vec![
                ScriptedReply::text("Sure! Let me look at the deploy settings first."),
                tool(
                    "The settings are in deploy.env.",
                    "read_file",
                    json!({"path": "deploy.env"}),
                ),
                tool(
                    "Call the health endpoint with the token placeholder.",
                    "http_get",
                    json!({"url": "https://deploy.example/api/health",
                           "headers": {"Authorization": "Bearer §§secret(DEPLOY_TOKEN)"}}),
                ),
                ScriptedReply::respond(
                    "The deploy API answers 200 and accepts the token §§secret(DEPLOY_TOKEN); it expires on 2026-12-31.",
                ),
            ],
            restore_first: false,
        },
        Turn {
            user: "Clean up the build folder.".into(),
            replies: vec![
                tool("Delete it.", "shell", json!({"command": "rm -rf build/"})),
                tool(
                    "Deleting is refused; move it instead.",
                    "shell",
                    json!({"command": "mv build .trash/build"}),
                ),
                ScriptedReply::respond(
                    "Moved build/ to .trash/build/ (rm -rf is refused by the project's policy).",
                ),
            ],
            restore_first: false,
        },
        Turn {
            user: "How many orders did we get in March?".into(),
            replies: vec![
                tool(
                    "Count them in the sales table.",
                    "db.search",
                    json!({"sql": "SELECT count(*) AS orders FROM sales WHERE month = 3"}),
                ),
                tool(
                    "A lesson says: list the tables first.",
                    "db.search",
                    json!({"sql": "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name"}),
                ),
                tool(
                    "The table is `orders`; the month goes in as a parameter.",
                    "db.search",
                    json!({"sql": "SELECT count(*) AS orders, sum(status = 'cancelled') AS cancelled FROM orders WHERE month = ?",
                           "params": [3]}),
                ),
                ScriptedReply::respond("34 orders in March, 2 of them cancelled."),
            ],
            restore_first: false,
        },
        Turn {
            user: "Archive the cancelled orders, they clutter the reports.".into(),
            replies: vec![
                tool(
                    "Delete them.",
                    "db.search",
                    json!({"sql": "DELETE FROM orders WHERE status = 'cancelled'"}),
                ),
                tool(
                    "DELETE is denied; mark them archived instead.",
                    "db.search",
                    json!({"sql": "WITH old AS (SELECT id FROM orders WHERE status = 'cancelled') UPDATE orders SET status = 'archived' WHERE id IN (SELECT id FROM old)"}),
                ),
                tool(
                    "The database is read-only: count them for the user instead.",
                    "db.search",
                    json!({"sql": "SELECT count(*) AS cancelled FROM orders WHERE status = :status",
                           "params": {"status": "cancelled"}}),
                ),
                ScriptedReply::respond(
                    "I cannot change the shop's data (no DELETE, and the database is read-only), but 23 cancelled orders are ready to archive.",
                ),
            ],
            restore_first: false,
        },
        Turn {
            user: "My name is Ada. Remember that I prefer metric units.".into(),
            replies: vec![ScriptedReply::respond(
                "Noted, Ada: metric units from now on.",
            )],
            restore_first: false,
        },
        Turn {
            user: "What is my name?".into(),
            replies: vec![ScriptedReply::respond(
                "You are Ada, and you prefer metric units.",
            )],
            restore_first: true,
        },
        Turn {
            user: "Run the full test suite.".into(),
            replies: vec![
                // The user stops the task at this call: no reply after it is queued (it would be
                // left for the next turn).
                tool(
                    "Run the tests.",
                    "shell",
                    json!({"command": "cargo test --workspace"}),
                ),
            ],
            restore_first: false,
        },
    ]
}

/// The scripted user's answers to approval requests.
pub async fn answer(req: AskRequest) -> Answer {
    let command = req.args["command"].as_str().unwrap_or_default();
    if command.starts_with("cargo test") {
        if let Some(agent) = current_agent() {
            agent.intervene("Actually, stop — I'll run the tests myself.");
        }
        return Answer::Deny("the user stopped the task".into());
    }
    Answer::Allow
}

/// The utility model: a one-line "summary" (the first line → the last line, shortened).
pub fn utility_model() -> ScriptedModel {
    ScriptedModel::new("scripted-utility").then(|req: &ModelRequest| {
        let text = req
            .messages
            .last()
            .map(|m| m.content.as_str())
            .unwrap_or_default();
        let short = |l: &str| l.chars().take(72).collect::<String>();
        let lines: Vec<&str> = text.lines().collect();
        ScriptedReply::text(match lines.as_slice() {
            [] => String::new(),
            [one] => short(one),
            [first, .., last] => format!("{} → {}", short(first), short(last)),
        })
    })
}

/// The chat model's answer when no reply is queued: "Do you remember my name?" is answered
/// from the memories recalled into the system prompt; anything else gets `unscripted`.
pub fn improvise(req: &ModelRequest) -> ScriptedReply {
    let asked = req.messages.iter().rev().find(|m| m.role == "user");
    if !asked.is_some_and(|m| m.content.contains("remember my name")) {
        return unscripted(req);
    }
    let system = req
        .messages
        .first()
        .map(|m| m.content.as_str())
        .unwrap_or_default();
    let name = system
        .lines()
        .find_map(|l| l.strip_prefix("- My name is "))
        .map(|n| n.trim_end_matches('.').to_owned());
    ScriptedReply::respond(&match name {
        Some(name) => format!("Yes — you are {name}; I remembered it from an earlier session."),
        None => "Not yet. Tell me, and I will remember it — also in the next session.".to_owned(),
    })
}

/// The chat model when the user types their own messages: no script for those.
pub fn unscripted(_: &ModelRequest) -> ScriptedReply {
    ScriptedReply::respond(
        "(scripted model) I have no script for that; pass --base-url and --model to use a real model.",
    )
}
