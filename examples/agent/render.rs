//! How the demo prints: the conversation, and the trace of every point (which extensions ran,
//! what the point changed, how long it took) — as text for a terminal, or as JSON lines.

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::sync::Mutex;

use hookpoint_extensions::trace::{Change, PointTrace};
use serde_json::{Value, json};

/// Writes one line to stdout; a closed pipe (`| head`) ends output quietly instead of panicking.
fn emit(line: String) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{line}").is_err() {
        std::process::exit(0);
    }
}

/// `--trace`: how much of the trace to print, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TraceMode {
    /// Points where an extension ran, with what changed (stream chunks folded).
    Text,
    /// Every point, one JSON object per line (the conversation too).
    Json,
    /// The conversation only.
    Off,
}

/// Stream chunks of one point folded into one line.
struct Folded {
    point: String,
    count: usize,
    micros: f64,
    extensions: BTreeSet<String>,
}

/// Prints the demo's output; shared by the agent's trace callback and the session.
pub struct Renderer {
    mode: TraceMode,
    color: bool,
    folded: Mutex<Option<Folded>>,
    fired: Mutex<BTreeSet<String>>,
    iteration: std::sync::atomic::AtomicU32,
}

const WIDTH: usize = 100;

fn short(v: &Value, max: usize) -> String {
    let s = match v {
        Value::String(s) => format!("{s:?}"),
        // A verdict reads as "deny: why".
        Value::Object(o) if o.contains_key("decision") && o.contains_key("reason") => format!(
            "{}: {}",
            o["decision"].as_str().unwrap_or_default(),
            o["reason"].as_str().unwrap_or_default()
        ),
        other => other.to_string(),
    };
    let s = s.replace("\\n", "⏎");
    if s.chars().count() > max {
        format!("{}…", s.chars().take(max).collect::<String>())
    } else {
        s
    }
}

impl Renderer {
    pub fn new(mode: TraceMode) -> Self {
        let color = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
        Renderer {
            mode,
            color,
            folded: Mutex::new(None),
            fired: Mutex::new(BTreeSet::new()),
            iteration: std::sync::atomic::AtomicU32::new(0),
        }
    }

    pub fn json(&self) -> bool {
        self.mode == TraceMode::Json
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    pub fn dim(&self, t: &str) -> String {
        self.paint("2", t)
    }
    pub fn bold(&self, t: &str) -> String {
        self.paint("1", t)
    }
    pub fn cyan(&self, t: &str) -> String {
        self.paint("36", t)
    }
    pub fn green(&self, t: &str) -> String {
        self.paint("32", t)
    }
    pub fn yellow(&self, t: &str) -> String {
        self.paint("33", t)
    }
    pub fn red(&self, t: &str) -> String {
        self.paint("31", t)
    }

    /// Every point name traced so far.
    pub fn fired(&self) -> BTreeSet<String> {
        self.fired.lock().unwrap().clone()
    }

    /// One line of the session (not the trace): JSON in json mode.
    pub fn say(&self, kind: &str, text: &str) {
        self.flush();
        if self.json() {
            emit(json!({"type": kind, "text": text}).to_string());
            return;
        }
        let line = match kind {
            "title" => format!("\n{}", self.bold(text)),
            "turn" => {
                self.iteration
                    .store(0, std::sync::atomic::Ordering::Relaxed);
                format!("\n{} {}", self.bold("━━"), self.bold(text))
            }
            "user" => format!("  {} {}", self.cyan(&self.bold("you ›")), text),
            "agent" => format!("  {} {}", self.green(&self.bold("agent ›")), text),
            "error" => format!("  {} {}", self.red(&self.bold("error ›")), text),
            "warn" => format!("  {} {}", self.yellow("!"), text),
            _ => format!("  {} {}", self.dim(&format!("{kind:<9}")), text),
        };
        emit(line);
    }

    /// Called for every point the agent fires.
    pub fn trace(&self, t: &PointTrace) {
        self.fired.lock().unwrap().insert(t.point.clone());
        match self.mode {
            TraceMode::Off => {}
            TraceMode::Json => {
                let mut v = serde_json::to_value(t).unwrap_or_default();
                v["type"] = json!("point");
                emit(v.to_string());
            }
            TraceMode::Text => self.text(t),
        }
    }

    fn text(&self, t: &PointTrace) {
        if t.point.ends_with("_stream_chunk") {
            let mut f = self.folded.lock().unwrap();
            if f.as_ref().is_some_and(|f| f.point != t.point) {
                drop(f);
                self.flush();
                f = self.folded.lock().unwrap();
            }
            let entry = f.get_or_insert_with(|| Folded {
                point: t.point.clone(),
                count: 0,
                micros: 0.0,
                extensions: BTreeSet::new(),
            });
            entry.count += 1;
            entry.micros += t.micros;
            entry
                .extensions
                .extend(t.extensions.iter().map(|e| e.name.clone()));
            return;
        }
        self.flush();
        if t.point == "message_loop_start" {
            let n = self
                .iteration
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                + 1;
            emit(format!("  {}", self.dim(&format!("┄ iteration {n}"))));
        }
        if t.extensions.is_empty() && t.error.is_none() {
            return;
        }
        let exts: Vec<String> = t
            .extensions
            .iter()
            .map(|e| {
                let time = format!(" {:.0}µs", e.micros);
                let name = if e.ok {
                    e.name.clone()
                } else {
                    self.red(&e.name)
                };
                format!("{name}{}", self.dim(&time))
            })
            .collect();
        emit(format!(
            "    {} {}  {}",
            self.cyan(&format!("{:<27}", t.point)),
            exts.join(&self.dim(" · ")),
            self.dim(&format!("{:.0}µs", t.micros))
        ));
        for line in self.changes(&t.changes) {
            emit(line);
        }
        if let Some(e) = &t.error {
            emit(format!("        {}", self.red(e)));
        }
    }

    /// The changes as lines: additions to one list folded into one line (by name when the
    /// items have one), at most four lines.
    fn changes(&self, changes: &[Change]) -> Vec<String> {
        let mut lines = Vec::new();
        let mut i = 0;
        while i < changes.len() {
            let c = &changes[i];
            let run = changes[i..]
                .iter()
                .take_while(|d| d.path == c.path && d.before.is_none() && c.path.ends_with("[+]"))
                .count();
            if run > 1
                && changes[i..i + run]
                    .iter()
                    .all(|d| d.after.as_ref().is_some_and(|a| a["name"].is_string()))
            {
                let names: Vec<&str> = changes[i..i + run]
                    .iter()
                    .filter_map(|d| d.after.as_ref().and_then(|a| a["name"].as_str()))
                    .collect();
                lines.push(format!(
                    "        {} {} {}",
                    self.dim(&format!("{}:", c.path)),
                    self.green("+"),
                    names.join(", ")
                ));
                i += run;
                continue;
            }
            lines.push(self.change(c));
            i += 1;
        }
        if lines.len() > 4 {
            let more = lines.len() - 3;
            lines.truncate(3);
            lines.push(self.dim(&format!("        … {more} more changes")));
        }
        lines
    }

    fn change(&self, c: &Change) -> String {
        let room = WIDTH.saturating_sub(12 + c.path.len());
        let text = match (&c.before, &c.after) {
            (None, Some(a)) => format!("{} {}", self.green("+"), short(a, room)),
            (Some(b), None) => format!("{} {}", self.red("-"), short(b, room)),
            (Some(b), Some(a)) => format!("{} → {}", short(b, room / 2), short(a, room / 2)),
            (None, None) => String::new(),
        };
        format!("        {} {text}", self.dim(&format!("{}:", c.path)))
    }

    /// Records points the demo fired itself, outside an agent (they have no agent trace).
    pub fn fired_outside(&self, points: &[&str]) {
        let mut fired = self.fired.lock().unwrap();
        fired.extend(points.iter().map(|p| p.to_string()));
    }

    /// Prints a folded run of stream chunks.
    pub fn flush(&self) {
        let Some(f) = self.folded.lock().unwrap().take() else {
            return;
        };
        if self.mode != TraceMode::Text {
            return;
        }
        let exts: Vec<String> = f.extensions.into_iter().collect();
        emit(format!(
            "    {} {} {}  {}",
            self.cyan(&format!("{:<27}", f.point)),
            self.dim(&format!("×{}", f.count)),
            exts.join(", "),
            self.dim(&format!("{:.0}µs", f.micros))
        ));
    }
}
