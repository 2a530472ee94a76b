use std::sync::Mutex;

use hookpoint::{Error, Next, extension};

static KEPT: Mutex<Option<Next<'static, String, String>>> = Mutex::new(None);

#[extension(point = "model.call")]
fn keeps(req: &mut String, next: Next<'_, String, String>) -> Result<String, Error> {
    *KEPT.lock().unwrap() = Some(next);
    Ok(req.clone())
}

fn main() {}
