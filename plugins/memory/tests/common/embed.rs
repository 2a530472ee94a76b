//! A toy embedding model (words → concept axes) and a fake OpenAI-compatible `/v1/embeddings`
//! server on 127.0.0.1 that answers with it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use hookpoint_plugin_memory::{EmbedFuture, Embedder};
use serde_json::{Value, json};

/// Words of each concept axis: texts about the same concept get similar vectors even when they
/// share no word.
const AXES: &[&[&str]] = &[
    &["tea", "coffee", "espresso", "beverage", "drink", "cup"],
    &["rain", "umbrella", "weather", "sunny", "storm"],
    &["name", "called", "ada"],
    &["units", "metric", "kilometres", "miles"],
];

/// The toy vector of `text`, of dimension `dim` (at least 5): one component per axis, the rest
/// a small constant.
pub fn concepts(text: &str, dim: usize) -> Vec<f32> {
    let mut v = vec![0.05; dim];
    for w in text
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
    {
        for (i, axis) in AXES.iter().enumerate() {
            if axis.contains(&w.as_str()) {
                v[i] += 1.0;
            }
        }
    }
    v
}

/// The toy model in-process, named `name`.
pub struct Toy(pub &'static str, pub usize);

impl Embedder for Toy {
    fn model(&self) -> &str {
        self.0
    }
    fn embed<'a>(&'a self, texts: &'a [String]) -> EmbedFuture<'a> {
        Box::pin(async move { Ok(texts.iter().map(|t| concepts(t, self.1)).collect()) })
    }
}

/// What the fake server saw and how it answers.
#[derive(Default)]
pub struct Seen {
    /// Each request's JSON body.
    pub bodies: Vec<Value>,
    /// Each request's `authorization` header (empty when none).
    pub auth: Vec<String>,
}

/// A fake endpoint: answers `POST /v1/embeddings` with the toy vectors, in reverse order with
/// their `index` (a client must sort); the dimension is `dim(model)`; a model named `broken`
/// gets a 500. Returns its base URL (`http://127.0.0.1:<port>/v1`) and what it saw.
pub fn server(dim: fn(&str) -> usize) -> (String, Arc<Mutex<Seen>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Seen::default()));
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let (body, auth) = read_request(&mut stream);
            let reply = answer(&body, dim);
            let mut seen = log.lock().unwrap();
            seen.bodies.push(body);
            seen.auth.push(auth);
            drop(seen);
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    (url, seen)
}

fn read_request(stream: &mut std::net::TcpStream) -> (Value, String) {
    let mut reader = BufReader::new(stream);
    let (mut length, mut auth) = (0usize, String::new());
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        let lower = line.to_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        if lower.starts_with("authorization:") {
            auth = line["authorization:".len()..].trim().to_owned();
        }
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    (serde_json::from_slice(&body).unwrap_or(Value::Null), auth)
}

fn answer(body: &Value, dim: fn(&str) -> usize) -> String {
    let model = body["model"].as_str().unwrap_or("");
    let (status, payload) = if model == "broken" {
        (
            "500 Internal Server Error",
            json!({"error": "model not loaded"}),
        )
    } else {
        let texts: Vec<&str> = body["input"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let data: Vec<Value> = texts
            .iter()
            .enumerate()
            .rev()
            .map(|(i, t)| json!({"object": "embedding", "index": i, "embedding": concepts(t, dim(model))}))
            .collect();
        (
            "200 OK",
            json!({"object": "list", "data": data, "model": model}),
        )
    };
    let text = payload.to_string();
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
        text.len()
    )
}
